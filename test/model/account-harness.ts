// The real side of the model-based test: one fresh paper crypto account (a new user, key and
// instrument per run, so runs never meet) on the real service in-process, driven over HTTP, and
// its state read back in the model's terms.
import type { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import type { ManualClock } from '../../server/clock.ts';
import { clearLock, setLock } from '../../server/controls/queries.ts';
import { upsertInstrument } from '../../server/instruments/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import type { TestServer } from '../support/server.ts';
import type { AccountModel } from './account-model.ts';
import { D, type BracketTerms, type ModelOrder, type PlaceRequest, type ReplaceRequest, type TOutcome, type Trail } from './model-types.ts';

export const START_PRICE = new D('90000');
let runCount = 0;

interface WireOrder {
  broker_order_id: string;
  client_order_id: string;
  status: string;
  filled_qty: number;
  order_type: string;
  stop_price: number | null;
}

const statusOf = (wire: string): string => (['pending', 'accepted', 'open'].includes(wire) ? 'working' : wire);
const num = (value: Decimal) => Number(value.toFixed());

/** A trail as the wire takes it: trail_percent or trail_price. */
const trailFields = (trail: Trail) => ('percent' in trail ? { trail_percent: num(trail.percent) } : { trail_price: num(trail.price) });

/** A bracket as the wire takes it: the legs it has (a trailing stop leg in place of stop_loss). */
const bracketFields = ({ tp, sl, trail }: BracketTerms) => ({ ...(tp && { take_profit: num(tp) }), ...(sl && { stop_loss: num(sl) }), ...(trail && trailFields(trail)) });

export class Harness {
  readonly server: TestServer;
  readonly clock: ManualClock;
  readonly user: FactoryUser;
  readonly symbol: string;
  readonly runId: number;
  private orderCount = 0;
  private readonly brokerIds = new Map<string, string>();

  private constructor(server: TestServer, clock: ManualClock, user: FactoryUser, symbol: string, runId: number) {
    this.server = server;
    this.clock = clock;
    this.user = user;
    this.symbol = symbol;
    this.runId = runId;
  }

  /** A new user with a crypto key and an instrument of its own at START_PRICE. */
  static async open(server: TestServer, clock: ManualClock): Promise<Harness> {
    const runId = ++runCount;
    const symbol = `MDL${process.pid % 10_000}R${runId}/USDT`;
    await upsertInstrument(server.services.db, {
      assetClass: 'crypto',
      symbol,
      exchange: 'BINANCE',
      currency: 'USDT',
      name: `Model run ${runId}`,
      referencePrice: START_PRICE.toFixed(),
      tickRule: 'fixed',
      tickSize: '0.01',
      lotSize: '0.00001',
      fractional: true,
      at: clock.now(),
    });
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol, price: START_PRICE.toFixed() });
    const user = await newUser(server, { prefix: 'model' });
    const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `model-key-${process.pid}-${runId}`, api_secret: 's' } });
    expect(key.status, key.text).toBe(201);
    return new Harness(server, clock, user, symbol, runId);
  }

  nextId(): string {
    return `mdl-${process.pid}-${this.runId}-${++this.orderCount}`;
  }

  /** Everything the last action set going, finished: fills, the order service's intake, the kill switch's evaluations. */
  async settle(): Promise<void> {
    const { simulator, orders, killSwitch } = this.server.services;
    await simulator.idle();
    await orders.idle();
    await new Promise((resolve) => setImmediate(resolve));
    await killSwitch.idle();
    await simulator.idle();
    await orders.idle();
    // Each command a second later: orders made by different commands meet prices oldest first.
    this.clock.advance(1_000);
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: { code?: string; client_order_id?: string; broker_order_id?: string } }> {
    const res = await this.server.http(method, path, { token: this.user.tokens.access_token, body });
    await this.settle();
    if (res.status >= 500) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res;
  }

  private outcomeOf(res: { status: number; body: { code?: string } }): TOutcome {
    return res.status < 300 ? { ok: true } : { ok: false, code: res.body.code ?? `HTTP_${res.status}` };
  }

  async place(request: PlaceRequest): Promise<TOutcome> {
    const res = await this.call('POST', '/api/equity/orders', {
      asset_class: 'crypto',
      symbol: this.symbol,
      client_order_id: request.id,
      side: request.side,
      order_type: request.kind === 'trailing' ? 'trailing_stop' : request.kind,
      qty: num(request.qty),
      time_in_force: 'gtc',
      ...(request.limit && { limit_price: num(request.limit) }),
      ...(request.stop && { stop_price: num(request.stop) }),
      ...(request.trail && trailFields(request.trail)),
      ...(request.cls && { order_class: request.cls }),
      ...(request.bracket && { bracket: bracketFields(request.bracket) }),
    });
    if (res.body.broker_order_id) this.brokerIds.set(request.id, res.body.broker_order_id);
    return this.outcomeOf(res);
  }

  private brokerIdOf(id: string): string {
    const brokerId = this.brokerIds.get(id);
    if (!brokerId) throw new Error(`no broker order id known for ${id}`);
    return brokerId;
  }

  async replace(change: ReplaceRequest): Promise<TOutcome> {
    const res = await this.call('PATCH', `/api/equity/orders/${encodeURIComponent(this.brokerIdOf(change.id))}`, {
      asset_class: 'crypto',
      ...(change.qty && { qty: num(change.qty) }),
      ...(change.limit && { limit_price: num(change.limit) }),
      ...(change.stop && { stop_price: num(change.stop) }),
      ...(change.trail && trailFields(change.trail)),
    });
    if (res.body.broker_order_id) this.brokerIds.set(change.id, res.body.broker_order_id);
    return this.outcomeOf(res);
  }

  async cancel(id: string): Promise<TOutcome> {
    return this.outcomeOf(await this.call('DELETE', `/api/equity/orders/${encodeURIComponent(this.brokerIdOf(id))}?asset_class=crypto`));
  }

  async cancelAll(): Promise<TOutcome> {
    return this.outcomeOf(await this.call('DELETE', '/api/equity/orders?asset_class=crypto'));
  }

  /** The close, and the client id of the sell it made (when it made one). */
  async close(): Promise<{ outcome: TOutcome; id: string | undefined }> {
    const res = await this.call('DELETE', `/api/equity/positions/${this.symbol.replace('/', '-')}?asset_class=crypto`);
    const id = res.status < 300 ? res.body.client_order_id : undefined;
    if (id && res.body.broker_order_id) this.brokerIds.set(id, res.body.broker_order_id);
    return { outcome: this.outcomeOf(res), id };
  }

  async reset(): Promise<TOutcome> {
    return this.outcomeOf(await this.call('POST', '/api/equity/account/reset', { asset_class: 'crypto' }));
  }

  async setPrice(price: Decimal): Promise<void> {
    await this.server.services.simulator.setPrice({ assetClass: 'crypto', symbol: this.symbol, price: price.toFixed() });
    await this.settle();
  }

  /**
   * A lock as the kill switch leaves it (written two minutes ago, for 24 h), then the sweep that
   * enforces it: what a crash's lock does to the working orders, without crashing the price.
   */
  async lock(): Promise<void> {
    const { db, killSwitch } = this.server.services;
    const lockedAt = new Date(this.clock.now().getTime() - 120_000);
    await setLock(db, { userId: this.user.user.id, assetClass: 'crypto', lockedUntil: new Date(lockedAt.getTime() + 86_400_000), reason: 'model test', at: lockedAt });
    await killSwitch.sweep();
    await this.settle();
  }

  async unlock(): Promise<void> {
    await clearLock(this.server.services.db, { userId: this.user.user.id, assetClass: 'crypto' });
    await this.settle();
  }

  private async orders(): Promise<WireOrder[]> {
    const all: WireOrder[] = [];
    for (let page = 1; ; page++) {
      const res = await this.server.http('GET', `/api/equity/orders?asset_class=crypto&size=100&page=${page}`, { token: this.user.tokens.access_token });
      expect(res.status, res.text).toBe(200);
      const items = res.body.items as WireOrder[];
      all.push(...items);
      if (items.length < 100) return all;
    }
  }

  /** The service's account, position and orders, side by side with the model's. */
  async compare(model: AccountModel, { buyingPower }: { buyingPower: boolean }): Promise<void> {
    const token = this.user.tokens.access_token;
    const [account, positions, orders] = await Promise.all([
      this.server.http('GET', '/api/equity/account?asset_class=crypto', { token }),
      this.server.http('GET', '/api/equity/positions?asset_class=crypto', { token }),
      this.orders(),
    ]);
    expect(account.body.cash, 'cash').toBe(num(model.cash));
    if (buyingPower) expect(account.body.buying_power, 'buying_power').toBe(num(model.buyingPower()));
    const position = (positions.body.items as { symbol: string; qty: number; avg_entry_price: number }[]).find((item) => item.symbol === this.symbol);
    expect(position?.qty ?? 0, 'position qty').toBe(num(model.held));
    if (position) expect(position.avg_entry_price, 'avg entry price').toBeCloseTo(num(model.avg), 6);
    for (const order of orders) if (!this.brokerIds.has(order.client_order_id)) this.brokerIds.set(order.client_order_id, order.broker_order_id);
    // A working trailing stop also shows where its stop has moved to.
    const actual = Object.fromEntries(
      orders.map((order) => {
        const status = statusOf(order.status);
        return [order.client_order_id, status === 'working' && order.order_type === 'trailing_stop' ? [status, order.filled_qty, order.stop_price] : [status, order.filled_qty]];
      }),
    );
    const expected = Object.fromEntries(
      model.orders.map((order: ModelOrder) => [order.id, order.status === 'working' && order.kind === 'trailing' ? [order.status, num(order.filledQty), num(order.stop!)] : [order.status, num(order.filledQty)]]),
    );
    expect(actual, 'orders: [status, filled_qty(, a working trailing stop’s stop_price)] by client_order_id').toEqual(expected);
  }
}
