// The order emulator's first slice (DESIGN §6 "Advanced orders"), BROKER_MODE=real against the
// fake KIS on 127.0.0.1, which holds no trailing stops but streams its trades (every setPrice is a
// trade on its quote stream): a trailing sell stop is accepted as an emulated order (no broker
// call, its first stop from the broker's price), follows the price up, and when the price falls
// through its stop places one market sell at the broker whose fill is the order's own; a cancel
// before the trigger calls no broker; a restart on the same database keeps the trigger working.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { orderFills, orders, orderTriggers, outboxEvents } from '../../server/db/schema/index.ts';
import { childClientOrderIdOf } from '../../server/orders/emulator/trail.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { kisKeyBody } from '../support/kis-keys.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const kisKey = { appKey: `PSTEST${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000002', productCode: '01' };
const SYMBOL = '005930';

let kis: FakeKis;
let binance: FakeBinance;
const binanceKey = { apiKey: `bn${randomBytes(8).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };
let server: TestServer;
let alice: FactoryUser;
const env = () => ({
  BROKER_MODE: 'real',
  BROKER_BASE_URLS: `kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url}`,
  BROKER_CRYPTO_POLL_INTERVAL_MS: '200',
  BROKER_KR_POLL_INTERVAL_MS: '200',
  BROKER_KR_REQUESTS_PER_SEC: '50',
  RISK_MARKET_HOURS: 'ignore',
  SIM_TICK_INTERVAL_MS: '0',
  WORKERS_IN_PROCESS: 'false',
});

beforeAll(async () => {
  kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { [SYMBOL]: '96500' } });
  binance = await startFakeBinance({ accounts: [{ ...binanceKey, balances: { USDT: '100000', BTC: '1' } }], prices: { BTCUSDT: '50000' } });
  server = await startTestServer(env());
  alice = await newUser(server, { prefix: 'emu_alice' });
});
/** Servers closed by a restart: their database and DATA_DIR are dropped at the end. */
const stopped: TestServer[] = [];
afterAll(async () => {
  await server?.stop();
  for (const one of stopped) await one.stop();
  await Promise.all([kis?.close(), binance?.close()]);
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const orderCalls = () => kis.requests.filter((request) => request.path === KIS_PATHS.orderCash).length;
const orderRow = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const triggerRow = async (clientOrderId: string) => (await server.services.db.select().from(orderTriggers).where(and(eq(orderTriggers.userId, alice.user.id), eq(orderTriggers.clientOrderId, clientOrderId))))[0];
const fillsOf = async (clientOrderId: string) => (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => [fill.qty, fill.price]);
/** The order events of an order, in the order they were written. */
const eventTypesOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, alice.user.id), eq(outboxEvents.channel, 'orders'))).orderBy(outboxEvents.id))
    .map((row) => row.frame)
    .filter((frame) => frame.client_order_id === clientOrderId)
    .map((frame) => frame.event_type);
const trailingSell = (clientOrderId: string, qty: number, trail: { trail_percent: number } | { trail_price: number }) =>
  call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty, order_type: 'trailing_stop', time_in_force: 'gtc', client_order_id: clientOrderId, ...trail });
/** Until the account's trigger watch has the symbol on the fake's quote stream. */
const untilWatched = () =>
  waitFor(
    () => Promise.resolve(kis.quotes.sessions()),
    (sessions) => sessions.some((symbols) => symbols.includes(SYMBOL)),
  );

describe('a trailing stop at KIS, emulated', () => {
  it('holds a position to sell', async () => {
    const created = await call('POST', '/api/exchange-keys', kisKeyBody(kisKey, kis.url));
    expect(created.status, created.text).toBe(201);
    const bought = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'buy', qty: 5, order_type: 'market', client_order_id: 'emu-buy-1' });
    expect(bought.status, bought.text).toBe(201);
    await waitFor(
      () => orderRow('emu-buy-1'),
      (row) => row?.status === 'filled',
    );
  });

  it('accepts a trailing sell stop as emulated with no broker call; the stop follows the price up; a fall through it places one market sell whose fill is the order’s', async () => {
    const calls = orderCalls();
    const placed = await trailingSell('emu-trail-1', 2, { trail_percent: 5 });
    expect(placed.status, placed.text).toBe(201);
    // 96500 × 0.95 = 91675, onto KRX's tick of 100 at that price, downwards for a sell.
    // A placement answers `accepted`, as every placement does (the interface's rule); it reads `open` at once.
    expect(placed.body).toMatchObject({ status: 'accepted', order_type: 'trailing_stop', stop_price: 91600, metadata: { emulated: true, trail_percent: 5, hwm: 96500 } });
    expect(placed.body.broker_order_id).toMatch(/^emu-/);
    const read = await call('GET', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(read.body).toMatchObject({ status: 'open', stop_price: 91600, metadata: { emulated: true, hwm: 96500 } });
    expect(orderCalls()).toBe(calls);
    expect(await triggerRow('emu-trail-1')).toMatchObject({ status: 'working', stopPrice: '91600', hwm: '96500', qty: '2' });

    await untilWatched();
    kis.setPrice(SYMBOL, '100000');
    // 100000 × 0.95 = 95000, on the grid.
    await waitFor(
      () => triggerRow('emu-trail-1'),
      (row) => row?.stopPrice === '95000' && row.hwm === '100000',
    );
    const moved = await waitFor(
      () => call('GET', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`),
      (res) => res.body?.stop_price === 95000,
    );
    expect(moved.body).toMatchObject({ status: 'open', metadata: expect.objectContaining({ hwm: 100000 }) });
    expect(orderCalls()).toBe(calls);

    // Below the old stop, not the new one: nothing; at the new stop: the trigger.
    kis.setPrice(SYMBOL, '99000');
    kis.setPrice(SYMBOL, '94900');
    // The child's broker id is recorded once the broker has answered its placement, in a
    // transaction of its own, which the child's fill may overtake: both are waited for.
    const filled = await waitFor(
      () => orderRow('emu-trail-1'),
      (row) => row?.status === 'filled' && typeof row.metadata.child_broker_order_id === 'string',
    );
    expect(filled).toMatchObject({ filledQty: '2', avgFillPrice: '94900', brokerOrderId: placed.body.broker_order_id });
    expect(filled!.metadata).toMatchObject({ emulated: true, child_client_order_id: 'emu-trail-1.tr', child_broker_order_id: expect.any(String) });
    expect(orderCalls()).toBe(calls + 1);
    await server.services.orders.idle();
    expect(await fillsOf('emu-trail-1')).toEqual([['2', '94900']]);
    // One order for the user: the child has no row of its own.
    expect(await orderRow('emu-trail-1.tr')).toBeUndefined();
    expect(await triggerRow('emu-trail-1')).toMatchObject({ status: 'triggered', childClientOrderId: 'emu-trail-1.tr' });
    const audit = await call('GET', '/api/audit?client_order_id=emu-trail-1');
    expect(audit.body.items.map((item: { action: string }) => item.action)).toEqual(expect.arrayContaining(['order.placed', 'order.accepted', 'order.triggered', 'order.fill']));
    const positions = await call('GET', '/api/equity/positions?asset_class=kr_equity');
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: SYMBOL, qty: 3 })]);
    // The trigger is published (an extension of the interface's event types), then the child's fill as the order's.
    const types = await eventTypesOf('emu-trail-1');
    expect(types.slice(0, 3)).toEqual(['placed', 'accepted', 'open']);
    expect(types.filter((type) => type === 'triggered')).toHaveLength(1);
    expect(types.indexOf('triggered')).toBeLessThan(types.indexOf('fill'));
  });

  it('replaces an emulated order’s trail (its stop set again from its mark) and cancels it before its trigger, with no broker call', async () => {
    const calls = orderCalls();
    const placed = await trailingSell('emu-trail-2', 1, { trail_price: 2000 });
    expect(placed.status, placed.text).toBe(201);
    // The price is 94900: the mark, and its stop 2000 under it.
    expect(placed.body).toMatchObject({ stop_price: 92900, metadata: { hwm: 94900, trail_price: 2000 } });
    const replaced = await call('PATCH', `/api/equity/orders/${placed.body.broker_order_id}`, { asset_class: 'kr_equity', broker_order_id: placed.body.broker_order_id, trail_price: 3000 });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ broker_order_id: placed.body.broker_order_id, stop_price: 91900, metadata: expect.objectContaining({ trail_price: 3000, hwm: 94900, emulated: true }) });
    expect(await triggerRow('emu-trail-2')).toMatchObject({ status: 'working', stopPrice: '91900', trailPrice: '3000', hwm: '94900' });
    const canceled = await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    expect(await orderRow('emu-trail-2')).toMatchObject({ status: 'canceled' });
    expect(await triggerRow('emu-trail-2')).toMatchObject({ status: 'canceled' });
    // A fall far through its old stop triggers nothing.
    kis.setPrice(SYMBOL, '80000');
    const again = await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(again.body.code, again.text).toBe('ORDER_NOT_CANCELABLE');
    expect(orderCalls()).toBe(calls);
    expect(await triggerRow('emu-trail-2')).toMatchObject({ status: 'canceled' });
  });

  it('keeps a trigger working across a restart on the same database', async () => {
    kis.setPrice(SYMBOL, '90000');
    const placed = await trailingSell('emu-trail-3', 1, { trail_price: 1000 });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.stop_price).toBe(89000);
    const calls = orderCalls();
    const first = server;
    stopped.push(first);
    await first.close();
    server = await startTestServer(env(), { dataDir: server.dataDir, databaseUrl: server.databaseUrl });
    await untilWatched();
    kis.setPrice(SYMBOL, '88900');
    const filled = await waitFor(
      () => orderRow('emu-trail-3'),
      (row) => row?.status === 'filled',
    );
    expect(filled).toMatchObject({ filledQty: '1', avgFillPrice: '88900' });
    expect(orderCalls()).toBe(calls + 1);
  });
});

describe('a trailing stop at a ccxt exchange (the fake Binance), emulated', () => {
  const orderPosts = () => binance.requests.filter((request) => request.method === 'POST' && request.path === '/api/v3/order').length;

  it('follows the price up on the exchange’s trade stream and sells at market through its stop, the fill under our order', async () => {
    const created = await call('POST', '/api/exchange-keys', { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, base_url: binance.url, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(created.status, created.text).toBe(201);
    await waitFor(
      () => Promise.resolve(binance.userStreamSubscribers(binanceKey.apiKey)),
      (count) => count === 1,
    );
    const posts = orderPosts();
    const placed = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: 0.1, order_type: 'trailing_stop', trail_percent: 2, time_in_force: 'gtc', client_order_id: 'emu-btc-1' });
    expect(placed.status, placed.text).toBe(201);
    // 50000 × 0.98 = 49000, on the pair's grid of 0.01.
    expect(placed.body).toMatchObject({ stop_price: 49000, metadata: { emulated: true, hwm: 50000 } });
    expect(orderPosts()).toBe(posts);
    await waitFor(
      () => Promise.resolve(binance.marketStreamSubscribers()),
      (count) => count > 0,
    );
    binance.setPrice('BTCUSDT', '52000');
    // 52000 × 0.98 = 50960.
    await waitFor(
      () => triggerRow('emu-btc-1'),
      (row) => Number(row?.stopPrice) === 50960,
    );
    binance.setPrice('BTCUSDT', '50900');
    const filled = await waitFor(
      () => orderRow('emu-btc-1'),
      (row) => row?.status === 'filled',
    );
    expect(filled).toMatchObject({ brokerOrderId: placed.body.broker_order_id, metadata: expect.objectContaining({ child_client_order_id: 'emu-btc-1.tr' }) });
    expect(Number(filled!.filledQty)).toBe(0.1);
    expect(Number(filled!.avgFillPrice)).toBe(50900);
    expect(orderPosts()).toBe(posts + 1);
    await server.services.orders.idle();
    expect((await fillsOf('emu-btc-1')).map(([qty]) => Number(qty))).toEqual([0.1]);
    expect(await orderRow('emu-btc-1.tr')).toBeUndefined();
  });
});

describe('a trigger’s child client order id', () => {
  it('is the parent’s with `.tr`, kept within 64 characters of our alphabet and distinct for distinct long parents', () => {
    const hash = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(childClientOrderIdOf('abc', hash)).toBe('abc.tr');
    const long = 'a'.repeat(64);
    const longer = `${'a'.repeat(63)}b`;
    for (const parent of [long, longer, 'x'.repeat(61)]) {
      const child = childClientOrderIdOf(parent, hash);
      expect(child.length).toBeLessThanOrEqual(64);
      expect(child).toMatch(/^[A-Za-z0-9._:-]+\.tr$/);
    }
    expect(childClientOrderIdOf(long, hash)).not.toBe(childClientOrderIdOf(longer, hash));
  });
});
