// The simulated broker through the Broker interface on a real database: each order type × time
// in force, partial fills across ticks, bracket OCO pairs, a day order expiring at its session's
// close, refusals (funds, shorting, lots, unknown symbols, duplicate ids), exact decimals, the
// operator's outage and the paper reset. Where a rule promises a write, the test reads it back.
import { and, eq, sql } from 'drizzle-orm';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { BrokerRejectedError, BrokerUnavailableError } from '../../server/brokers/types.ts';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../server/brokers/simulator/index.ts';
import { MAX_TRANSACTIONS_AT_ONCE } from '../../server/brokers/simulator/placement-queue.ts';
import { manualClock } from '../../server/clock.ts';
import { rowsOf, type Tx } from '../../server/db/client.ts';
import { simAccounts, simFills, simOrders, simPositions, systemState, type InstrumentRow } from '../../server/db/schema/index.ts';
import { findInstrument, upsertInstrument } from '../../server/instruments/queries.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { openSimAccount, simOrder, type SimAccount } from '../support/sim-accounts.ts';

// Tuesday 10 March 2026, 11:00 in New York (EDT since the 8th), 00:00 in Seoul on the 11th.
const START = '2026-03-10T15:00:00.000Z';
const clock = manualClock(START);
const INITIAL_CASH = { crypto: '100000', us_equity: '100000', kr_equity: '100000000' };

let server: TestServer;
let sim: Simulator;
/** The same books with SIM_LIQUIDITY_LOTS_PER_TICK=2: resting limit orders fill two lots per observation. */
let thinSim: Simulator;

const simulatorOn = (liquidityLotsPerTick: number, options: Partial<SimulatorOptions> = {}) =>
  createSimulator({
    db: server.services.db,
    clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: INITIAL_CASH,
    tickIntervalMs: 0,
    liquidityLotsPerTick,
    marketHours: 'enforce',
    leaseName: 'simulator-test',
    outageReloadMs: 50,
    ...options,
  });

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  sim = await simulatorOn(0);
  thinSim = await simulatorOn(2);
});
afterAll(async () => {
  await sim?.stop();
  await thinSim?.stop();
  await server?.stop();
});

const d = (value: Decimal.Value) => new Decimal(value);

let instrumentCount = 0;
/**
 * A fresh instrument per test, at an operator's price, so one test's resting orders never meet
 * another test's price moves.
 */
const newInstrument = async (assetClass: TAssetClass, { price, tick = '0.01', lot = '0.001' }: { price: string; tick?: string; lot?: string }) => {
  const n = ++instrumentCount;
  const krx = assetClass === 'kr_equity';
  const symbol = assetClass === 'crypto' ? `SIM${n}/USDT` : krx ? `9${String(n).padStart(5, '0')}` : `SIMT${n}`;
  await upsertInstrument(server.services.db, {
    assetClass,
    symbol,
    exchange: assetClass === 'crypto' ? 'BINANCE' : krx ? 'KRX' : 'NASDAQ',
    currency: { crypto: 'USDT', us_equity: 'USD', kr_equity: 'KRW' }[assetClass],
    name: `Simulator test ${n}`,
    referencePrice: price,
    tickRule: krx ? 'krx_bands' : 'fixed',
    tickSize: tick,
    lotSize: krx ? '1' : lot,
    fractional: !krx,
    at: clock.now(),
  });
  await sim.setPrice({ assetClass, symbol, price });
  return symbol;
};

type Account = SimAccount;

const openAccount = (assetClass: TAssetClass = 'crypto', on: Simulator = sim, mode: 'paper' | 'live' = 'paper'): Promise<Account> =>
  openSimAccount({ server, on, assetClass, mode, prefix: 'sim' });

const order = simOrder;

const orderRow = async (userId: number, id: string) => (await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, userId), eq(simOrders.id, id))))[0]!;
const fillRows = (userId: number, orderId: string) => server.services.db.select().from(simFills).where(and(eq(simFills.userId, userId), eq(simFills.orderId, orderId)));
const accountRow = async (userId: number, assetClass: TAssetClass, mode: 'paper' | 'live' = 'paper') =>
  (await server.services.db.select().from(simAccounts).where(and(eq(simAccounts.userId, userId), eq(simAccounts.assetClass, assetClass), eq(simAccounts.mode, mode))))[0];
const positionRow = async (userId: number, symbol: string) => (await server.services.db.select().from(simPositions).where(and(eq(simPositions.userId, userId), eq(simPositions.symbol, symbol))))[0];
const typesOf = (account: Account, brokerOrderId: string) => account.events.filter((event) => event.broker_order_id === brokerOrderId).map((event) => event.type);

const rejectedWith = async (promise: Promise<unknown>, message: RegExp) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BrokerRejectedError);
  expect((error as Error).message).toMatch(message);
};

describe('market orders', () => {
  it('answers accepted with nothing filled, then fills at once: fill row, position, cash and events', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const placed = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.3' }));
    expect(placed).toMatchObject({ status: 'accepted', filledQty: '0', avgFillPrice: null, qty: '0.3', symbol });
    const fill = await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
    // 100 moved 5 bp against the buyer: 100.05; the fee is 0.1 % of 0.3 × 100.05 = 30.015.
    expect(fill).toMatchObject({ status: 'filled', filled_qty: '0.3', avg_fill_price: '100.05', broker: 'simulator', asset_class: 'crypto', mode: 'paper', user_id: account.userId });
    expect(fill.fill).toMatchObject({ qty: '0.3', price: '100.05', fee: '0.030015' });
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'fill']);

    expect(await orderRow(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'filled', clientOrderId: placed.clientOrderId });
    expect(d((await orderRow(account.userId, placed.brokerOrderId)).filledQty).eq('0.3')).toBe(true);
    const fills = await fillRows(account.userId, placed.brokerOrderId);
    expect(fills).toHaveLength(1);
    expect([d(fills[0]!.qty).toFixed(), d(fills[0]!.price).toFixed(), d(fills[0]!.fee).toFixed()]).toEqual(['0.3', '100.05', '0.030015']);
    expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('0.3');
    expect(d((await accountRow(account.userId, 'crypto'))!.cash).toFixed()).toBe('99969.954985');
  });

  it('keeps exact decimals: buy 0.3, sell 0.1 leaves 0.2, and the cash is exact to the last digit', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.3' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const sell = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.1' }));
    await account.seen({ type: 'fill', broker_order_id: sell.brokerOrderId });
    expect(await account.broker.positions()).toEqual([
      { symbol, qty: '0.2', avgEntryPrice: '100.05', currentPrice: '100', realizedPnl: expect.any(String), currency: 'USDT' },
    ]);
    expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('0.2');
    // 100000 − (30.015 + 0.030015) + (0.1 × 99.95 − 0.009995)
    const cash = '99979.93999';
    expect(d((await accountRow(account.userId, 'crypto'))!.cash).toFixed()).toBe(cash);
    const view = await account.broker.account();
    expect(view).toMatchObject({ broker: 'simulator', paper: true, currency: 'USDT', cash, buyingPower: cash, equity: d(cash).plus(d('0.2').times(100)).toFixed() });
    // Selling the rest closes the position: it leaves the list.
    const rest = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.2' }));
    await account.seen({ type: 'fill', broker_order_id: rest.brokerOrderId });
    expect(await account.broker.positions()).toEqual([]);
  });

  it('refuses a buy the cash cannot pay, with nothing written', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const request = order({ symbol, side: 'buy', qty: '1000' });
    // 1000 × 100.05 = 100,050 (plus the fee) is more than the 100,000 of starting cash.
    await rejectedWith(account.broker.placeOrder(request), /insufficient funds/);
    expect(await account.broker.getOrder({ clientOrderId: request.clientOrderId })).toBeUndefined();
    expect(d((await accountRow(account.userId, 'crypto'))!.cash).toFixed()).toBe('100000');
    // The same order within the cash goes through.
    const fits = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '990' }));
    await account.seen({ type: 'fill', broker_order_id: fits.brokerOrderId });
  });

  it('refuses to sell what is not held (no shorting), and what working sells already hold', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.1' })), /insufficient position.*no short selling/);
    expect(await account.broker.listOpenOrders()).toEqual([]);
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'sell', qty: '1.001' })), /insufficient position/);
    const resting = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.6', orderType: 'limit', limitPrice: '150' }));
    await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.5' })), /0\.4 available/);
    const fits = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.4' }));
    await account.seen({ type: 'fill', broker_order_id: fits.brokerOrderId });
  });

  it('refuses unknown symbols, broken lot sizes, fractional KRX shares and a reused client order id', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount();
    await rejectedWith(account.broker.placeOrder(order({ symbol: 'NOPE/USDT', side: 'buy', qty: '1' })), /unknown symbol/);
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.0005' })), /multiple of the lot size 0\.001/);
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0' })), /qty/);
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit' })), /limit_price/);
    const krx = await newInstrument('kr_equity', { price: '50000' });
    const kr = await openAccount('kr_equity');
    await rejectedWith(kr.broker.placeOrder(order({ symbol: krx, side: 'buy', qty: '1.5' })), /whole number/);

    const first = order({ symbol, side: 'buy', qty: '0.001' });
    await account.broker.placeOrder(first);
    await rejectedWith(account.broker.placeOrder({ ...first, qty: '0.002' }), /duplicate client order id/);
    // The id is per account: another account may use it.
    const other = await openAccount();
    await other.broker.placeOrder(first);
    await sim.idle();
    expect(await server.services.db.select().from(simOrders).where(eq(simOrders.clientOrderId, first.clientOrderId))).toHaveLength(2);
  });

  it('prices KRX fills on the band grid and cuts fees and the sell tax to whole won', async () => {
    // 10:00 in Seoul: KRX trades (at START it is midnight there, and nothing fills).
    clock.set('2026-03-10T01:00:00.000Z');
    try {
      const symbol = await newInstrument('kr_equity', { price: '50000' });
      const account = await openAccount('kr_equity');
      const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '3' }));
      // 50,025 is in the 100-won band above 50,000: 50,100; commission 0.015 % of 150,300 = 22.545 → 22.
      expect((await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId })).fill).toMatchObject({ price: '50100', fee: '22' });
      const sell = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '1' }));
      // 49,975 is in the 50-won band below 50,000: 49,950; commission 7.4925 → 7 plus tax 0.2 % 99.9 → 99.
      expect((await account.seen({ type: 'fill', broker_order_id: sell.brokerOrderId })).fill).toMatchObject({ price: '49950', fee: '106' });
      expect(d((await accountRow(account.userId, 'kr_equity'))!.cash).toFixed()).toBe(d('100000000').minus(150322).plus(49844).toFixed());
    } finally {
      clock.set(START);
    }
  });
});

describe('each order type × time in force', () => {
  // Market orders fill at once whatever their time in force. A limit buy below the price and a
  // stop buy above it cannot fill at once: day and gtc rest (open) and fill when the price
  // crosses; ioc and fok cancel at once.
  const cases = (['market', 'limit', 'stop'] as const).flatMap((orderType) => (['day', 'gtc', 'ioc', 'fok'] as const).map((timeInForce) => ({ orderType, timeInForce })));

  it.each(cases)('$orderType $timeInForce', async ({ orderType, timeInForce }) => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const placed = await account.broker.placeOrder(
      order({ symbol, side: 'buy', qty: '1', orderType, timeInForce, limitPrice: orderType === 'limit' ? '95' : null, stopPrice: orderType === 'stop' ? '105' : null }),
    );
    expect(placed.status).toBe('accepted');
    const row = await orderRow(account.userId, placed.brokerOrderId);
    // A day order lives to its session's close: a crypto day is the UTC day.
    expect(row.expiresAt?.toISOString() ?? null).toBe(timeInForce === 'day' ? '2026-03-11T00:00:00.000Z' : null);

    if (orderType === 'market') {
      await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
      expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'fill']);
      return;
    }
    if (timeInForce === 'ioc' || timeInForce === 'fok') {
      const canceled = await account.seen({ type: 'canceled', broker_order_id: placed.brokerOrderId });
      expect(canceled.reason).toMatch(new RegExp(`^${timeInForce}:`));
      expect(await orderRow(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'canceled', filledQty: '0' });
      expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'canceled']);
      return;
    }
    await account.seen({ type: 'open', broker_order_id: placed.brokerOrderId });
    expect((await account.broker.listOpenOrders()).map((open) => open.brokerOrderId)).toEqual([placed.brokerOrderId]);
    // A move that does not reach it leaves it resting.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: orderType === 'limit' ? '96' : '104' });
    expect((await orderRow(account.userId, placed.brokerOrderId)).status).toBe('open');
    // The price crosses: a limit fills at the better observed price (slipped, capped at the
    // limit), a triggered stop at the observed price like a market order.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: orderType === 'limit' ? '94' : '106' });
    const fill = await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
    expect(fill.fill?.price).toBe(orderType === 'limit' ? '94.05' : '106.06');
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open', 'fill']);
  });

  it('a marketable limit fills at once as ioc and fok too, never above its limit', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    for (const timeInForce of ['ioc', 'fok'] as const) {
      const placed = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', timeInForce, limitPrice: '100.02' }));
      // 100 slipped is 100.05, above the limit: the limit wins.
      expect((await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId })).fill?.price).toBe('100.02');
    }
  });

  it('a stop sell protects a position: it triggers when the price falls to it, and fills at market past a gap', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const stop = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '2', orderType: 'stop', stopPrice: '90' }));
    await account.seen({ type: 'open', broker_order_id: stop.brokerOrderId });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '90.01' });
    expect((await orderRow(account.userId, stop.brokerOrderId)).status).toBe('open');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '88' });
    expect((await account.seen({ type: 'fill', broker_order_id: stop.brokerOrderId })).fill?.price).toBe('87.95');
    expect(await account.broker.positions()).toEqual([]);
  });

  it('a stop_limit keeps its limit: past a gap it rests as a limit, triggered, and fills only at its limit or better, also once the price is back above the stop', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const stop = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '2', orderType: 'stop', stopPrice: '90', metadata: { stop_limit_price: '89.5' } }));
    await account.seen({ type: 'open', broker_order_id: stop.brokerOrderId });
    // The price gaps through both the stop and the limit: triggered, nothing fills below 89.5.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '88' });
    const triggered = await orderRow(account.userId, stop.brokerOrderId);
    expect(triggered).toMatchObject({ status: 'open', filledQty: '0' });
    expect(triggered.metadata).toMatchObject({ stop_limit_price: '89.5', triggered_at: expect.any(String) });
    expect(account.events.filter((event) => event.broker_order_id === stop.brokerOrderId && event.type === 'fill')).toEqual([]);
    // Back above the stop: a triggered stop_limit is a sell limit at 89.5, which 95 reaches.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '95' });
    const fill = (await account.seen({ type: 'fill', broker_order_id: stop.brokerOrderId })).fill!;
    // At the observed price less the slippage, never below the limit.
    expect(Number(fill.price)).toBeGreaterThanOrEqual(89.5);
    expect(Number(fill.price)).toBeLessThanOrEqual(95);
    expect(await account.broker.positions()).toEqual([]);
  });
});

describe('trailing stops', () => {
  const replacedOf = (account: Account, brokerOrderId: string) =>
    account.events.filter((event) => event.broker_order_id === brokerOrderId && event.type === 'replaced').map(({ stop_price, hwm }) => ({ stop_price, hwm }));
  /** The row's stop and mark, as exact decimal text. */
  const trailOf = async (userId: number, id: string) => {
    const row = await orderRow(userId, id);
    return { status: row.status, stopPrice: d(row.stopPrice!).toFixed(), hwm: row.metadata.hwm, updatedAt: row.updatedAt.toISOString() };
  };

  it('a sell by percent follows each new high (the row and a replaced event with the new stop), not a fall, and fills at market when the price comes down to it', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const trailing = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '2', orderType: 'trailing_stop', metadata: { trail_percent: 5 } }));
    // The interface reads it as a stop at its current stop, its trail and mark in its metadata.
    expect(trailing).toMatchObject({ status: 'accepted', orderType: 'stop', stopPrice: '95', metadata: { trail_percent: '5', hwm: '100' } });
    await account.seen({ type: 'open', broker_order_id: trailing.brokerOrderId });
    expect((await orderRow(account.userId, trailing.brokerOrderId)).orderType).toBe('trailing_stop');
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '95', hwm: '100' });
    // It holds the position as any working sell does.
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.1' })), /0 available/);

    await sim.setPrice({ assetClass: 'crypto', symbol, price: '102' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '96.9', hwm: '102' });
    const moved = await account.seen({ type: 'replaced', broker_order_id: trailing.brokerOrderId, stop_price: '96.9' });
    expect(moved).toMatchObject({ status: 'open', hwm: '102', filled_qty: '0', fill: null });
    const after102 = await trailOf(account.userId, trailing.brokerOrderId);
    // A fall, and a return to the mark, move nothing and write nothing.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '101' });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '102' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toEqual(after102);
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '104' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ stopPrice: '98.8', hwm: '104' });
    await account.seen({ type: 'replaced', broker_order_id: trailing.brokerOrderId, stop_price: '98.8' });
    // One event per move, in order, none for the fall or the flat price.
    expect(replacedOf(account, trailing.brokerOrderId)).toEqual([
      { stop_price: '96.9', hwm: '102' },
      { stop_price: '98.8', hwm: '104' },
    ]);
    expect(await account.broker.getOrder({ brokerOrderId: trailing.brokerOrderId })).toMatchObject({ stopPrice: '98.8', metadata: { trail_percent: '5', hwm: '104' } });

    // Just above the stop: resting; at it: triggered, filled at the observed price less the slippage.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '98.81' });
    expect((await orderRow(account.userId, trailing.brokerOrderId)).status).toBe('open');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '98.8' });
    const fill = await account.seen({ type: 'fill', broker_order_id: trailing.brokerOrderId });
    // 98.8 moved 5 bp against the seller is 98.7506, down onto the cent: 98.75.
    expect(fill).toMatchObject({ status: 'filled', filled_qty: '2', fill: { qty: '2', price: '98.75' } });
    expect(await account.broker.positions()).toEqual([]);
    expect(typesOf(account, trailing.brokerOrderId)).toEqual(['accepted', 'open', 'replaced', 'replaced', 'fill']);
  });

  it('a sell by price fills at the gap when the price jumps through its stop', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const trailing = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '1', orderType: 'trailing_stop', metadata: { trail_price: '2.5' } }));
    expect(trailing).toMatchObject({ stopPrice: '97.5', metadata: { trail_price: '2.5', hwm: '100' } });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '90' });
    expect((await account.seen({ type: 'fill', broker_order_id: trailing.brokerOrderId })).fill?.price).toBe('89.95');
    expect(replacedOf(account, trailing.brokerOrderId)).toEqual([]);
  });

  it('a buy by price follows each new low, holds cash at its current stop, and fills when the price rises to it', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const trailing = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'trailing_stop', metadata: { trail_price: '2' } }));
    expect(trailing).toMatchObject({ orderType: 'stop', stopPrice: '102', metadata: { trail_price: '2', hwm: '100' } });
    await account.seen({ type: 'open', broker_order_id: trailing.brokerOrderId });
    // 1 × 102 and the 0.1 % fee on it are held.
    expect((await account.broker.account()).buyingPower).toBe('99897.898');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '97' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '99', hwm: '97' });
    await account.seen({ type: 'replaced', broker_order_id: trailing.brokerOrderId, stop_price: '99', hwm: '97' });
    expect((await account.broker.account()).buyingPower).toBe('99900.901');
    // A rise below the stop moves nothing.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '98.99' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '99', hwm: '97' });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '99' });
    // 99 moved 5 bp against the buyer is 99.0495, up onto the cent: 99.05.
    expect((await account.seen({ type: 'fill', broker_order_id: trailing.brokerOrderId })).fill?.price).toBe('99.05');
    expect(replacedOf(account, trailing.brokerOrderId)).toEqual([{ stop_price: '99', hwm: '97' }]);
    expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('1');
  });

  it('keeps its mark and stop in its row: a second simulator over the same database goes on trailing from them', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const trailing = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '1', orderType: 'trailing_stop', metadata: { trail_price: '3' } }));
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '105' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ stopPrice: '102', hwm: '105' });

    const restarted = await simulatorOn(0, { leaseName: 'simulator-test-restarted' });
    try {
      const broker = restarted.brokerFor({ userId: account.userId, assetClass: 'crypto', mode: 'paper' });
      expect(await broker.getOrder({ brokerOrderId: trailing.brokerOrderId })).toMatchObject({ status: 'open', stopPrice: '102', metadata: { trail_price: '3', hwm: '105' } });
      // Below the kept mark: nothing moves (a mark started over at this price would put the stop at 101).
      await restarted.setPrice({ assetClass: 'crypto', symbol, price: '104' });
      expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '102', hwm: '105' });
      await restarted.setPrice({ assetClass: 'crypto', symbol, price: '106' });
      expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '103', hwm: '106' });
      await restarted.setPrice({ assetClass: 'crypto', symbol, price: '103' });
      expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'filled', stopPrice: '103' });
      expect(await broker.positions()).toEqual([]);
    } finally {
      await restarted.stop();
    }
  });

  it('refuses a trail missing, doubled, out of range or off the grid, a limit, a stop, a stop-limit or a bracket, and a trail on another order type, writing nothing', async () => {
    const symbol = await newInstrument('crypto', { price: '100', tick: '0.01' });
    const account = await openAccount();
    const trailing = (fields: Partial<Parameters<typeof order>[0]>) => order({ symbol, side: 'buy', qty: '1', orderType: 'trailing_stop', ...fields });
    const refusals: Array<[Partial<Parameters<typeof order>[0]>, RegExp]> = [
      [{}, /needs trail_percent or trail_price/],
      [{ metadata: { trail_percent: '5', trail_price: '1' } }, /one of trail_percent and trail_price, not both/],
      [{ metadata: { trail_percent: '0' } }, /trail_percent must be more than 0 and at most 50/],
      [{ metadata: { trail_percent: -1 } }, /trail_percent must be more than 0 and at most 50/],
      [{ metadata: { trail_percent: '50.01' } }, /trail_percent must be more than 0 and at most 50/],
      [{ metadata: { trail_percent: 'five' } }, /trail_percent must be a decimal/],
      [{ metadata: { trail_price: '0' } }, /trail_price must be greater than 0/],
      [{ metadata: { trail_price: '-2' } }, /trail_price must be greater than 0/],
      [{ metadata: { trail_price: '0.015' } }, /trail_price 0\.015 is off .* tick grid of 0\.01/],
      [{ metadata: { trail_percent: '5' }, limitPrice: '101' }, /takes no limit_price/],
      [{ metadata: { trail_percent: '5' }, stopPrice: '101' }, /takes no stop_price/],
      [{ metadata: { trail_percent: '5', stop_limit_price: '103' } }, /takes no stop_limit_price/],
      [{ metadata: { trail_percent: '5' }, bracket: { takeProfit: '120', stopLoss: '90', stopLossLimit: null } }, /takes no bracket/],
      [{ side: 'sell', metadata: { trail_price: '100' } }, /leaves no stop above 0/],
      [{ orderType: 'stop', stopPrice: '105', metadata: { trail_percent: '5' } }, /belong to a trailing_stop, not a stop order/],
    ];
    for (const [fields, message] of refusals) await rejectedWith(account.broker.placeOrder(trailing(fields)), message);
    expect(await account.broker.listOpenOrders()).toEqual([]);
    expect(await server.services.db.select().from(simOrders).where(eq(simOrders.userId, account.userId))).toEqual([]);
    // The edges are taken: 50 percent, and a trail of one tick.
    for (const metadata of [{ trail_percent: '50' }, { trail_price: '0.01' }]) {
      const placed = await account.broker.placeOrder(trailing({ metadata }));
      await account.seen({ type: 'open', broker_order_id: placed.brokerOrderId });
    }
  });

  it('takes a new trail by replace (its stop set again from its mark, a replaced event with both) and a new qty; refuses a stop_price or a limit', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const trailing = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'trailing_stop', metadata: { trail_percent: '5' } }));
    await account.seen({ type: 'open', broker_order_id: trailing.brokerOrderId });
    // Its stop is the broker's: a replace cannot name one.
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: trailing.brokerOrderId, stopPrice: '104' }), /takes no stop_price/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: trailing.brokerOrderId, limitPrice: '104' }), /takes no limit_price/);
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '105', hwm: '100' });

    const retrailed = await account.broker.replaceOrder({ brokerOrderId: trailing.brokerOrderId, trail: { price: '2.5' } });
    expect(retrailed).toMatchObject({ stopPrice: '102.5', metadata: { trail_price: '2.5', hwm: '100' } });
    expect(retrailed.metadata).not.toHaveProperty('trail_percent');
    expect(await account.seen({ type: 'replaced', broker_order_id: trailing.brokerOrderId, stop_price: '102.5' })).toMatchObject({ hwm: '100', status: 'open' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ status: 'open', stopPrice: '102.5', hwm: '100' });
    // It trails on by its new trail.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '99' });
    expect(await trailOf(account.userId, trailing.brokerOrderId)).toMatchObject({ stopPrice: '101.5', hwm: '99' });
    expect(await account.broker.replaceOrder({ brokerOrderId: trailing.brokerOrderId, qty: '2' })).toMatchObject({ qty: '2', stopPrice: '101.5' });
    // A trail for an order of another type is refused.
    const limit = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90' }));
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, trail: { percent: '3' } }), /takes no trail_percent or trail_price/);
  });
});

describe('partial fills', () => {
  it('a resting limit larger than the liquidity of a tick fills across ticks', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount('crypto', thinSim);
    const placed = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.005', orderType: 'limit', limitPrice: '99' }));
    await account.seen({ type: 'open', broker_order_id: placed.brokerOrderId });
    // Two lots (0.002) per observation: the price reaching the limit, then each tick.
    await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '98' });
    expect(await orderRow(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'partially_filled', filledQty: '0.002' });
    await thinSim.tick();
    expect(await orderRow(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'partially_filled', filledQty: '0.004' });
    await thinSim.tick();
    expect(await orderRow(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'filled', filledQty: '0.005' });
    await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open', 'partial_fill', 'partial_fill', 'fill']);
    const fills = await fillRows(account.userId, placed.brokerOrderId);
    expect(fills.map((fill) => d(fill.qty).toFixed())).toEqual(['0.002', '0.002', '0.001']);
    expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('0.005');
    // A market order walks the book: the liquidity does not cut it.
    const market = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.01' }));
    await account.seen({ type: 'fill', broker_order_id: market.brokerOrderId });
  });

  it('ioc takes what one tick offers and cancels the rest; fok cancels unless all of it fills', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount('crypto', thinSim);
    const ioc = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.005', orderType: 'limit', limitPrice: '101', timeInForce: 'ioc' }));
    const canceled = await account.seen({ type: 'canceled', broker_order_id: ioc.brokerOrderId });
    expect(canceled).toMatchObject({ status: 'canceled', filled_qty: '0.002' });
    expect(typesOf(account, ioc.brokerOrderId)).toEqual(['accepted', 'partial_fill', 'canceled']);
    const fok = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.005', orderType: 'limit', limitPrice: '101', timeInForce: 'fok' }));
    await account.seen({ type: 'canceled', broker_order_id: fok.brokerOrderId });
    expect(await fillRows(account.userId, fok.brokerOrderId)).toEqual([]);
  });
});

describe('brackets', () => {
  const bracketed = async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const entry = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: '89' } }));
    await account.seen({ type: 'fill', broker_order_id: entry.brokerOrderId });
    const children = (await account.broker.listOpenOrders()).filter((open) => open.parentId === entry.brokerOrderId);
    const takeProfit = children.find((child) => child.metadata.leg === 'take_profit')!;
    const stopLoss = children.find((child) => child.metadata.leg === 'stop_loss')!;
    return { symbol, account, entry, takeProfit, stopLoss };
  };

  it('become an OCO pair once the entry fills: take-profit limit and stop-loss stop for the filled quantity', async () => {
    const { account, entry, takeProfit, stopLoss } = await bracketed();
    expect(takeProfit).toMatchObject({ side: 'sell', orderType: 'limit', limitPrice: '110', qty: '2', timeInForce: 'gtc', status: 'open', clientOrderId: `${entry.clientOrderId}:tp` });
    expect(stopLoss).toMatchObject({ side: 'sell', orderType: 'stop', stopPrice: '90', qty: '2', timeInForce: 'gtc', status: 'open', metadata: { leg: 'stop_loss', stop_limit_price: '89' } });
    expect((await orderRow(account.userId, takeProfit.brokerOrderId)).ocoSiblingId).toBe(stopLoss.brokerOrderId);
    expect((await orderRow(account.userId, stopLoss.brokerOrderId)).ocoSiblingId).toBe(takeProfit.brokerOrderId);
    await account.seen({ type: 'open', broker_order_id: takeProfit.brokerOrderId });
  });

  it('take-profit fills → the stop-loss is canceled', async () => {
    const { symbol, account, takeProfit, stopLoss } = await bracketed();
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '111' });
    await account.seen({ type: 'fill', broker_order_id: takeProfit.brokerOrderId });
    expect((await account.seen({ type: 'canceled', broker_order_id: stopLoss.brokerOrderId })).reason).toMatch(/oco/);
    expect((await orderRow(account.userId, takeProfit.brokerOrderId)).status).toBe('filled');
    expect((await orderRow(account.userId, stopLoss.brokerOrderId)).status).toBe('canceled');
    expect(d((await positionRow(account.userId, symbol))!.qty).isZero()).toBe(true);
    // Down through the old stop: nothing left to sell, nothing happens.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '80' });
    expect(await fillRows(account.userId, stopLoss.brokerOrderId)).toEqual([]);
  });

  it('stop-loss fills → the take-profit is canceled', async () => {
    const { symbol, account, takeProfit, stopLoss } = await bracketed();
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '89.5' });
    expect((await account.seen({ type: 'fill', broker_order_id: stopLoss.brokerOrderId })).fill?.price).toBe('89.45');
    await account.seen({ type: 'canceled', broker_order_id: takeProfit.brokerOrderId });
    expect((await orderRow(account.userId, takeProfit.brokerOrderId)).status).toBe('canceled');
    expect(await account.broker.listOpenOrders()).toEqual([]);
  });

  it('a partly filled take-profit shrinks the stop-loss to what is still held', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount('crypto', thinSim);
    const entry = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.005', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: null } }));
    await account.seen({ type: 'fill', broker_order_id: entry.brokerOrderId });
    const children = await account.broker.listOpenOrders();
    const takeProfit = children.find((child) => child.metadata.leg === 'take_profit')!;
    const stopLoss = children.find((child) => child.metadata.leg === 'stop_loss')!;
    await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '112' });
    await account.seen({ type: 'partial_fill', broker_order_id: takeProfit.brokerOrderId });
    expect((await orderRow(account.userId, stopLoss.brokerOrderId)).qty).toBe('0.003');
    // The broker's own change of the stop-loss says its new quantity, as a growth does.
    expect(await account.seen({ type: 'replaced', broker_order_id: stopLoss.brokerOrderId })).toMatchObject({ qty: '0.003', reason: 'oco: the other leg filled 0.002' });
    // The stop-loss triggers and sells the rest: the take-profit ends.
    await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '85' });
    await account.seen({ type: 'fill', broker_order_id: stopLoss.brokerOrderId });
    await account.seen({ type: 'canceled', broker_order_id: takeProfit.brokerOrderId });
    expect(d((await positionRow(account.userId, symbol))!.qty).isZero()).toBe(true);
  });

  describe('an entry that fills in parts', () => {
    /** A resting bracket entry of 0.005 at 99 on two lots (0.002) a tick, 0.002 of it filled, and its children. */
    const partlyFilled = async () => {
      const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
      const account = await openAccount('crypto', thinSim);
      const entry = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.005', orderType: 'limit', limitPrice: '99', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: '89' } }));
      await account.seen({ type: 'open', broker_order_id: entry.brokerOrderId });
      await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '98' });
      expect(await orderRow(account.userId, entry.brokerOrderId)).toMatchObject({ status: 'partially_filled', filledQty: '0.002' });
      const children = async () => (await account.broker.listOpenOrders()).filter((open) => open.parentId === entry.brokerOrderId);
      return { symbol, account, entry, children };
    };
    const legs = (orders: { metadata: Record<string, unknown>; qty: string; status: string }[]) =>
      orders.map(({ metadata, qty, status }) => ({ leg: metadata.leg, qty, status })).sort((a, b) => String(a.leg).localeCompare(String(b.leg)));

    it('gets children for the filled quantity at its first fill, growing with each fill', async () => {
      const { account, entry, children } = await partlyFilled();
      // Protected at once, while the rest of the entry still works.
      expect(legs(await children())).toEqual([
        { leg: 'stop_loss', qty: '0.002', status: 'open' },
        { leg: 'take_profit', qty: '0.002', status: 'open' },
      ]);
      const [stopLoss, takeProfit] = (await children()).sort((a, b) => String(a.metadata.leg).localeCompare(String(b.metadata.leg)));
      expect(stopLoss).toMatchObject({ orderType: 'stop', stopPrice: '90', metadata: { stop_limit_price: '89' }, clientOrderId: `${entry.clientOrderId}:sl` });
      expect(takeProfit).toMatchObject({ orderType: 'limit', limitPrice: '110', clientOrderId: `${entry.clientOrderId}:tp` });

      await thinSim.tick();
      expect(legs(await children())).toEqual([
        { leg: 'stop_loss', qty: '0.004', status: 'open' },
        { leg: 'take_profit', qty: '0.004', status: 'open' },
      ]);
      // The same two orders, grown: each says its new quantity in a `replaced` event.
      expect((await account.seen({ type: 'replaced', broker_order_id: takeProfit!.brokerOrderId })).qty).toBe('0.004');
      await thinSim.tick();
      expect(await orderRow(account.userId, entry.brokerOrderId)).toMatchObject({ status: 'filled', filledQty: '0.005' });
      expect(legs(await children())).toEqual([
        { leg: 'stop_loss', qty: '0.005', status: 'open' },
        { leg: 'take_profit', qty: '0.005', status: 'open' },
      ]);
      expect((await children()).map((child) => child.brokerOrderId).sort()).toEqual([stopLoss!.brokerOrderId, takeProfit!.brokerOrderId].sort());
      expect(typesOf(account, stopLoss!.brokerOrderId)).toEqual(['accepted', 'open', 'replaced', 'replaced']);
    });

    it('a fill after its pair ended (the take-profit sold what it protected) gets a new pair for what it bought', async () => {
      const { symbol, account, entry, children } = await partlyFilled();
      const first = await children();
      const takeProfit = first.find((child) => child.metadata.leg === 'take_profit')!;
      const stopLoss = first.find((child) => child.metadata.leg === 'stop_loss')!;
      // Up through the take-profit: it sells the 0.002 bought (two lots a tick), the stop-loss ends with it.
      await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '111' });
      await account.seen({ type: 'fill', broker_order_id: takeProfit.brokerOrderId });
      await account.seen({ type: 'canceled', broker_order_id: stopLoss.brokerOrderId });
      expect(await children()).toEqual([]);
      // Back down to the entry's limit: it buys 0.002 more, and that is protected again.
      await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '98' });
      expect(await orderRow(account.userId, entry.brokerOrderId)).toMatchObject({ status: 'partially_filled', filledQty: '0.004' });
      const second = await children();
      expect(legs(second)).toEqual([
        { leg: 'stop_loss', qty: '0.002', status: 'open' },
        { leg: 'take_profit', qty: '0.002', status: 'open' },
      ]);
      expect(second.map((child) => child.clientOrderId).sort()).toEqual([`${entry.clientOrderId}:sl.2`, `${entry.clientOrderId}:tp.2`]);
      const [stopLoss2, takeProfit2] = second.sort((a, b) => String(a.metadata.leg).localeCompare(String(b.metadata.leg)));
      expect((await orderRow(account.userId, takeProfit2!.brokerOrderId)).ocoSiblingId).toBe(stopLoss2!.brokerOrderId);
      // The next fill grows the new pair, not the ended one.
      await thinSim.tick();
      expect(legs(await children())).toEqual([
        { leg: 'stop_loss', qty: '0.003', status: 'open' },
        { leg: 'take_profit', qty: '0.003', status: 'open' },
      ]);
      expect(await orderRow(account.userId, takeProfit.brokerOrderId)).toMatchObject({ status: 'filled', qty: '0.002' });
      expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('0.003');
    });

    it('a cancel of the partly filled entry (as a lock makes) keeps the children of its filled part', async () => {
      const { account, entry, children, symbol } = await partlyFilled();
      const before = await children();
      await account.broker.cancelOrder({ brokerOrderId: entry.brokerOrderId });
      await account.seen({ type: 'canceled', broker_order_id: entry.brokerOrderId });
      expect(await orderRow(account.userId, entry.brokerOrderId)).toMatchObject({ status: 'canceled', filledQty: '0.002' });
      // The same pair, no second one: it protects the 0.002 held.
      expect((await children()).map((child) => child.brokerOrderId).sort()).toEqual(before.map((child) => child.brokerOrderId).sort());
      expect(legs(await children())).toEqual([
        { leg: 'stop_loss', qty: '0.002', status: 'open' },
        { leg: 'take_profit', qty: '0.002', status: 'open' },
      ]);
      expect(d((await positionRow(account.userId, symbol))!.qty).toFixed()).toBe('0.002');
      // And it still works: the stop sells what was bought, the take-profit ends with it.
      await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '89.5' });
      const stopLoss = before.find((child) => child.metadata.leg === 'stop_loss')!;
      expect((await account.seen({ type: 'fill', broker_order_id: stopLoss.brokerOrderId })).filled_qty).toBe('0.002');
    });
  });

  it('refuses a bracket that cannot protect the entry', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    await rejectedWith(account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', bracket: { takeProfit: '99', stopLoss: '90', stopLossLimit: null } })), /take_profit/);
  });
});

describe('cancel and lookups', () => {
  it('cancels a resting order once; a finished one is refused', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const placed = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90' }));
    await account.seen({ type: 'open', broker_order_id: placed.brokerOrderId });
    expect(await account.broker.getOrder({ clientOrderId: placed.clientOrderId })).toMatchObject({ brokerOrderId: placed.brokerOrderId, status: 'open' });
    expect(await account.broker.cancelOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'canceled' });
    await account.seen({ type: 'canceled', broker_order_id: placed.brokerOrderId });
    expect((await orderRow(account.userId, placed.brokerOrderId)).status).toBe('canceled');
    await rejectedWith(account.broker.cancelOrder({ brokerOrderId: placed.brokerOrderId }), /canceled and cannot be canceled/);
    await rejectedWith(account.broker.cancelOrder({ brokerOrderId: 'sim_unknown' }), /unknown order/);
    // Another account cannot see or cancel it.
    const other = await openAccount();
    expect(await other.broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toBeUndefined();
    await rejectedWith(other.broker.cancelOrder({ brokerOrderId: placed.brokerOrderId }), /unknown order/);
  });

  it('opens an account on first use with the starting cash of its currency, once', async () => {
    const { user } = await newUser(server, { prefix: 'sim' });
    for (const [assetClass, currency, cash] of [
      ['crypto', 'USDT', '100000'],
      ['us_equity', 'USD', '100000'],
      ['kr_equity', 'KRW', '100000000'],
    ] as const) {
      expect(await sim.brokerFor({ userId: user.id, assetClass, mode: 'paper' }).account()).toMatchObject({ currency, cash, equity: cash, buyingPower: cash, paper: true });
      expect(await accountRow(user.id, assetClass)).toMatchObject({ currency, cash, initialCash: cash });
    }
    expect(await sim.brokerFor({ userId: user.id, assetClass: 'crypto', mode: 'live' }).account()).toMatchObject({ paper: false });
    // Opening again (a key deleted and added again) keeps the books as they are.
    await server.services.db.update(simAccounts).set({ cash: '5' }).where(and(eq(simAccounts.userId, user.id), eq(simAccounts.assetClass, 'crypto'), eq(simAccounts.mode, 'paper')));
    await sim.openAccount({ userId: user.id, assetClass: 'crypto', mode: 'paper' });
    expect((await accountRow(user.id, 'crypto'))!.cash).toBe('5');
  });

  it('prices: the operator’s price, else the last daily close, else the reference price', async () => {
    const symbol = await newInstrument('us_equity', { price: '50' });
    expect(await sim.priceOf({ assetClass: 'us_equity', symbol })).toBe('50');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: null });
    expect(await sim.priceOf({ assetClass: 'us_equity', symbol })).toBe('50');
    await upsertBars(server.services.db, { assetClass: 'us_equity', symbol, bars: [{ date: '2026-03-09', open: '51', high: '53', low: '50', close: '52.5', volume: '1000' }], source: 'import', at: clock.now() });
    expect(await sim.priceOf({ assetClass: 'us_equity', symbol })).toBe('52.5');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '49.99' });
    expect(await sim.priceOf({ assetClass: 'us_equity', symbol })).toBe('49.99');
  });
});

describe('day orders', () => {
  it('expire at the close of their session on the clock; gtc orders stay', async () => {
    const symbol = await newInstrument('us_equity', { price: '100', lot: '1' });
    const account = await openAccount('us_equity');
    const day = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90', timeInForce: 'day' }));
    const gtc = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90', timeInForce: 'gtc' }));
    await account.seen({ type: 'open', broker_order_id: gtc.brokerOrderId });
    // 16:00 in New York on 10 March 2026 (EDT).
    expect((await orderRow(account.userId, day.brokerOrderId)).expiresAt?.toISOString()).toBe('2026-03-10T20:00:00.000Z');
    try {
      clock.set('2026-03-10T19:59:59.999Z');
      await sim.expireDayOrders();
      expect((await orderRow(account.userId, day.brokerOrderId)).status).toBe('open');
      clock.set('2026-03-10T20:00:00.000Z');
      expect(await sim.expireDayOrders()).toBeGreaterThanOrEqual(1);
      const expired = await account.seen({ type: 'expired', broker_order_id: day.brokerOrderId });
      expect(expired).toMatchObject({ status: 'expired', at: '2026-03-10T20:00:00.000Z' });
      expect((await orderRow(account.userId, day.brokerOrderId)).status).toBe('expired');
      expect((await orderRow(account.userId, gtc.brokerOrderId)).status).toBe('open');
      // An expired order does not fill when the price comes; the gtc waits for the open, which
      // trades from the operator's price set at night.
      await sim.setPrice({ assetClass: 'us_equity', symbol, price: '89' });
      expect((await orderRow(account.userId, gtc.brokerOrderId)).status).toBe('open');
      clock.set('2026-03-11T13:30:00.000Z');
      await sim.matchResting();
      expect(await fillRows(account.userId, day.brokerOrderId)).toEqual([]);
      expect((await orderRow(account.userId, gtc.brokerOrderId)).status).toBe('filled');
    } finally {
      clock.set(START);
    }
  });
});

describe('outage', () => {
  it('makes every call of that asset class’s brokers fail as unavailable, in every instance, until lifted', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const us = await openAccount('us_equity');
    const resting = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90' }));
    await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
    expect(await sim.setOutage({ assetClass: 'crypto', down: true })).toMatchObject({ crypto: true, us_equity: false });
    try {
      const stored = (await server.services.db.select().from(systemState).where(eq(systemState.key, 'sim_outage:crypto')))[0];
      expect(stored?.value).toEqual({ down: true });
      const calls: Array<Promise<unknown>> = [
        account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' })),
        account.broker.cancelOrder({ brokerOrderId: resting.brokerOrderId }),
        account.broker.getOrder({ brokerOrderId: resting.brokerOrderId }),
        account.broker.listOpenOrders(),
        account.broker.positions(),
        account.broker.account(),
        sim.resetAccount({ userId: account.userId, assetClass: 'crypto' }),
      ];
      for (const call of calls) await expect(call).rejects.toBeInstanceOf(BrokerUnavailableError);
      // Its matching stops too: a price through the limit fills nothing while down.
      await sim.setPrice({ assetClass: 'crypto', symbol, price: '85' });
      expect((await orderRow(account.userId, resting.brokerOrderId)).status).toBe('open');
      // Other asset classes are untouched; another instance sees the outage on its next read.
      await expect(us.broker.account()).resolves.toMatchObject({ currency: 'USD' });
      await waitFor(() => Promise.resolve(thinSim.isDown('crypto')), (isDown) => isDown);
    } finally {
      await sim.setOutage({ assetClass: 'crypto', down: false });
    }
    await expect(account.broker.listOpenOrders()).resolves.toHaveLength(1);
    await sim.matchResting();
    await account.seen({ type: 'fill', broker_order_id: resting.brokerOrderId });
    await waitFor(() => Promise.resolve(thinSim.isDown('crypto')), (isDown) => !isDown);
  });
});

describe('reset', () => {
  it('resets a paper account: open orders canceled, positions removed, starting cash back, reset_at set; live untouched', async () => {
    const symbol = await newInstrument('crypto', { price: '100' });
    const account = await openAccount();
    const live = sim.brokerFor({ userId: account.userId, assetClass: 'crypto', mode: 'live' });
    const liveBuy = await live.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '3' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const resting = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '1', orderType: 'limit', limitPrice: '150' }));
    await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
    await sim.idle();
    expect((await live.getOrder({ brokerOrderId: liveBuy.brokerOrderId }))?.status).toBe('filled');

    clock.advance(1_000);
    const { account: after, canceledOrders } = await sim.resetAccount({ userId: account.userId, assetClass: 'crypto' });
    expect(canceledOrders).toBe(1);
    expect(after).toMatchObject({ cash: '100000', equity: '100000', paper: true });
    expect((await account.seen({ type: 'canceled', broker_order_id: resting.brokerOrderId })).reason).toBe('account reset');
    const row = (await accountRow(account.userId, 'crypto'))!;
    expect(row).toMatchObject({ cash: '100000', initialCash: '100000' });
    expect(row.resetAt?.toISOString()).toBe(clock.now().toISOString());
    expect(await account.broker.positions()).toEqual([]);
    expect(await server.services.db.select().from(simPositions).where(and(eq(simPositions.userId, account.userId), eq(simPositions.mode, 'paper')))).toEqual([]);
    expect((await orderRow(account.userId, resting.brokerOrderId)).status).toBe('canceled');
    // The live account of the same user and asset class keeps its books.
    expect(await live.positions()).toHaveLength(1);
    expect(d((await accountRow(account.userId, 'crypto', 'live'))!.cash).lt(100000)).toBe(true);
  });
});

describe('snapshot', () => {
  it('reads in one statement what the separate reads give: the account, priced positions and working orders with every field', async () => {
    const priced = await newInstrument('us_equity', { price: '123.45', lot: '0.0001' });
    const unpriced = await newInstrument('us_equity', { price: '50', lot: '0.0001' });
    const account = await openAccount('us_equity');
    const bought = await account.broker.placeOrder(order({ symbol: priced, side: 'buy', qty: '1.2345' }));
    await account.seen({ type: 'fill', broker_order_id: bought.brokerOrderId });
    const other = await account.broker.placeOrder(order({ symbol: unpriced, side: 'buy', qty: '2' }));
    await account.seen({ type: 'fill', broker_order_id: other.brokerOrderId });
    // The operator's price goes; this position is then valued at the instrument's other prices.
    await sim.setPrice({ assetClass: 'us_equity', symbol: unpriced, price: null });
    const resting = await account.broker.placeOrder(
      order({ symbol: priced, side: 'buy', qty: '0.5', orderType: 'limit', limitPrice: '100.01', timeInForce: 'day', bracket: { takeProfit: '150', stopLoss: '90.5', stopLossLimit: null }, metadata: { report_uuid: 'r-1', note: 'ü' } }),
    );
    await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
    const sell = await account.broker.placeOrder(order({ symbol: priced, side: 'sell', qty: '0.2345', orderType: 'limit', limitPrice: '999.99' }));
    await account.seen({ type: 'open', broker_order_id: sell.brokerOrderId });

    const snapshot = await account.broker.snapshot();
    const [separate, positions, openOrders] = await Promise.all([account.broker.account(), account.broker.positions(), account.broker.listOpenOrders()]);
    expect(snapshot.positions).toEqual(positions);
    expect(snapshot.openOrders).toEqual(openOrders);
    expect({ ...snapshot.account, asOf: undefined }).toEqual({ ...separate, asOf: undefined });
    expect(snapshot.openOrders.map((row) => row.brokerOrderId).sort()).toEqual([resting.brokerOrderId, sell.brokerOrderId].sort());
    expect(snapshot.openOrders.find((row) => row.brokerOrderId === resting.brokerOrderId)).toMatchObject({ limitPrice: '100.01', timeInForce: 'day', metadata: { report_uuid: 'r-1', note: 'ü' } });
    expect(snapshot.positions.map((row) => row.symbol).sort()).toEqual([priced, unpriced].sort());
  });

  it('opens a missing account with its starting cash', async () => {
    const { user } = await newUser(server, { prefix: 'snap' });
    const snapshot = await sim.brokerFor({ userId: user.id, assetClass: 'kr_equity', mode: 'live' }).snapshot();
    expect(snapshot).toMatchObject({ account: { cash: '100000000', equity: '100000000', paper: false, currency: 'KRW' }, positions: [], openOrders: [] });
  });
});

// Placements that arrive together (the simulator's placement queue).
/**
 * Books whose instrument reads are remembered after the first: a placement then reaches its
 * account's queue within the promise jobs of its call, with no read of the database between.
 */
let queuingSim: Simulator;
const startQueuingSim = async () => {
  const remembered = new Map<string, Promise<InstrumentRow | undefined>>();
  queuingSim = await simulatorOn(0, {
    leaseName: 'simulator-test-queuing',
    findInstrument: (key) => {
      const id = `${key.assetClass}:${key.symbol}`;
      if (!remembered.has(id)) remembered.set(id, findInstrument(server.services.db, key));
      return remembered.get(id)!;
    },
  });
};

/**
 * Holds the accounts' row locks (on PGlite, the one connection) until `release`: a placement
 * that arrives meanwhile waits in its transaction, and those after it queue behind it.
 */
const holdAccounts = (...userIds: number[]) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const done = server.services.db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from ${simAccounts} where user_id in ${userIds} for update`);
    locked();
    await released;
  });
  return { lockTaken, release: async () => (release(), await done) };
};
/**
 * Holds the COMMIT of every transaction that writes a simulated order for these users until
 * `release` (PostgreSQL only): a deferred trigger of the test's own takes an advisory lock at
 * commit, which a transaction here holds meanwhile. `waitingInCommit` counts the transactions
 * waiting for it. The trigger goes with `release`.
 */
const holdCommits = (userIds: number[]) => {
  const { db } = server.services;
  const key = 4242;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const held = new Promise<void>((resolve) => (locked = resolve));
  const holder = (async () => {
    await db.execute(
      sql.raw(`create or replace function sim_test_hold_commit() returns trigger language plpgsql as $$
        begin if new.user_id in (${userIds.map(Number).join(', ')}) then perform pg_advisory_xact_lock(${key}, new.user_id); end if; return null; end $$`),
    );
    await db.execute(sql.raw(`create constraint trigger sim_test_hold_commit after insert on sim_orders deferrable initially deferred for each row execute function sim_test_hold_commit()`));
    await db.transaction(async (tx) => {
      for (const userId of userIds) await tx.execute(sql`select pg_advisory_xact_lock(${key}::integer, ${userId}::integer)`);
      locked();
      await released;
    });
  })();
  let ended: Promise<void> | undefined;
  return {
    /** Resolves once the lock is held; rejects when the trigger or the lock could not be had. */
    held: Promise.race([held, holder]),
    waitingInCommit: async () =>
      Number(
        // This lock's waiters only (two int4 keys: classid is the first, objsubid 2).
        (await rowsOf<{ n: number }>(db, sql`select count(*)::integer as n from pg_locks where locktype = 'advisory' and not granted and classid = ${key}::oid and objsubid = 2`))[0]?.n ?? 0,
      ),
    release: () =>
      (ended ??= (async () => {
        release();
        await holder;
        await db.execute(sql.raw('drop trigger if exists sim_test_hold_commit on sim_orders'));
      })()),
  };
};
/** The transaction that wrote each order (rows written together share it). */
const writersOf = async (userId: number, clientOrderIds: string[]) =>
  new Map(
    (await rowsOf<{ client_order_id: string; writer: string }>(server.services.db, sql`select client_order_id, xmin::text as writer from ${simOrders} where user_id = ${userId} and client_order_id in ${clientOrderIds}`)).map(
      (row) => [row.client_order_id, row.writer],
    ),
  );
/** Settles every placement, then gives each outcome: the order, or the refusal. */
const outcomes = (placements: Promise<unknown>[]) => Promise.allSettled(placements);

describe('placements of one account that arrive together', () => {
  beforeAll(startQueuingSim);
  afterAll(() => queuingSim?.stop());

  it('commit together; a refusal among them is its own and the others fill', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount('crypto', queuingSim);
    await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.001' }));
    const hold = holdAccounts(account.userId);
    await hold.lockTaken;
    const first = order({ symbol, side: 'buy', qty: '1' });
    const together = [order({ symbol, side: 'buy', qty: '500' }), order({ symbol, side: 'buy', qty: '600' }), order({ symbol, side: 'buy', qty: '10' })];
    const placing = outcomes([first, ...together].map((request) => account.broker.placeOrder(request)));
    // Every placement has reached the account's queue once the callbacks queued now have run
    // (the first waits in its transaction for the lock held here).
    await new Promise((resolve) => setImmediate(resolve));
    await hold.release();
    const [alone, big, tooBig, small] = await placing;
    expect(alone?.status).toBe('fulfilled');
    expect(big?.status).toBe('fulfilled');
    expect(small?.status).toBe('fulfilled');
    expect(tooBig?.status).toBe('rejected');
    expect(((tooBig as PromiseRejectedResult).reason as Error).message).toMatch(/insufficient funds/);
    const writers = await writersOf(account.userId, [first, ...together].map((request) => request.clientOrderId));
    expect(writers.has(together[1]!.clientOrderId)).toBe(false);
    expect(writers.get(together[0]!.clientOrderId)).toBe(writers.get(together[2]!.clientOrderId));
    expect(writers.get(first.clientOrderId)).not.toBe(writers.get(together[0]!.clientOrderId));
    await queuingSim.idle();
    expect(d((await positionRow(account.userId, symbol))!.qty).eq('511.001')).toBe(true);
  });

  it('a client order id used before fails its shared transaction; placed again one by one, only it is refused', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const account = await openAccount('crypto', queuingSim);
    const used = order({ symbol, side: 'buy', qty: '0.001' });
    await account.broker.placeOrder(used);
    const hold = holdAccounts(account.userId);
    await hold.lockTaken;
    const requests = [order({ symbol, side: 'buy', qty: '1' }), order({ symbol, side: 'buy', qty: '2' }), { ...used, qty: '3' }, order({ symbol, side: 'buy', qty: '4' })];
    const placing = outcomes(requests.map((request) => account.broker.placeOrder(request)));
    await new Promise((resolve) => setImmediate(resolve));
    await hold.release();
    const settled = await placing;
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((settled[2] as PromiseRejectedResult).reason as Error).message).toMatch(/duplicate client order id/);
    await queuingSim.idle();
    expect(d((await positionRow(account.userId, symbol))!.qty).eq('7.001')).toBe(true);
  });
});

describe('placements of several accounts that arrive together', () => {
  beforeAll(startQueuingSim);
  afterAll(() => queuingSim?.stop());

  /** Accounts of the queuing books, each opened by a first order (0.001 bought), so that later placements read nothing before they queue. */
  const openedAccounts = (count: number, symbol: string) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const account = await openAccount('crypto', queuingSim);
        await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '0.001' }));
        return account;
      }),
    );
  /**
   * Keeps every placement transaction busy, each waiting for an account held here. Placements
   * made meanwhile queue, and go together in the next transaction once they are released.
   */
  const occupyTransactions = async (symbol: string) => {
    const held = await openedAccounts(MAX_TRANSACTIONS_AT_ONCE, symbol);
    const hold = holdAccounts(...held.map((account) => account.userId));
    await hold.lockTaken;
    const busy = held.map((account) => account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' })));
    return { release: hold.release, busy: outcomes(busy) };
  };
  /** The transaction that wrote each (user, client order id). */
  const writerOf = async (userId: number, clientOrderId: string) => (await writersOf(userId, [clientOrderId])).get(clientOrderId);

  it("share one transaction, each account's placements in their order; a refusal among them is its own", async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const [alice, bob, carol] = await openedAccounts(3, symbol);
    const occupied = await occupyTransactions(symbol);
    // Alice's sell sells what her buy, placed before it in the same transaction, bought.
    const aliceBuy = order({ symbol, side: 'buy', qty: '2' });
    const aliceSell = order({ symbol, side: 'sell', qty: '2' });
    const bobBuy = order({ symbol, side: 'buy', qty: '3' });
    const carolTooBig = order({ symbol, side: 'buy', qty: '1001' });
    const carolBuy = order({ symbol, side: 'buy', qty: '4' });
    const placing = outcomes([alice!.broker.placeOrder(aliceBuy), bob!.broker.placeOrder(bobBuy), alice!.broker.placeOrder(aliceSell), carol!.broker.placeOrder(carolTooBig), carol!.broker.placeOrder(carolBuy)]);
    await new Promise((resolve) => setImmediate(resolve));
    await occupied.release();
    expect((await occupied.busy).map((outcome) => outcome.status)).toEqual(Array.from({ length: MAX_TRANSACTIONS_AT_ONCE }, () => 'fulfilled'));
    const settled = await placing;
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((settled[3] as PromiseRejectedResult).reason as Error).message).toMatch(/insufficient funds/);
    const writer = await writerOf(alice!.userId, aliceBuy.clientOrderId);
    expect(writer).toBeDefined();
    expect(await writerOf(alice!.userId, aliceSell.clientOrderId)).toBe(writer);
    expect(await writerOf(bob!.userId, bobBuy.clientOrderId)).toBe(writer);
    expect(await writerOf(carol!.userId, carolBuy.clientOrderId)).toBe(writer);
    expect(await writerOf(carol!.userId, carolTooBig.clientOrderId)).toBeUndefined();
    await queuingSim.idle();
    expect(d((await positionRow(alice!.userId, symbol))!.qty).eq('0.001')).toBe(true);
    expect(d((await positionRow(bob!.userId, symbol))!.qty).eq('3.001')).toBe(true);
    expect(d((await positionRow(carol!.userId, symbol))!.qty).eq('4.001')).toBe(true);
  });

  it("a client order id used before fails the shared transaction; placed again one by one, only it is refused, in every account", async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const [alice, bob, carol] = await openedAccounts(3, symbol);
    const used = order({ symbol, side: 'buy', qty: '0.001' });
    await bob!.broker.placeOrder(used);
    const occupied = await occupyTransactions(symbol);
    const requests = [
      { account: alice!, request: order({ symbol, side: 'buy', qty: '1' }) },
      { account: bob!, request: { ...used, qty: '2' } },
      { account: carol!, request: order({ symbol, side: 'buy', qty: '3' }) },
      { account: bob!, request: order({ symbol, side: 'buy', qty: '5' }) },
    ];
    const placing = outcomes(requests.map(({ account, request }) => account.broker.placeOrder(request)));
    await new Promise((resolve) => setImmediate(resolve));
    await occupied.release();
    await occupied.busy;
    const settled = await placing;
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((settled[1] as PromiseRejectedResult).reason as Error).message).toMatch(/duplicate client order id/);
    await queuingSim.idle();
    expect(d((await positionRow(alice!.userId, symbol))!.qty).eq('1.001')).toBe(true);
    expect(d((await positionRow(bob!.userId, symbol))!.qty).eq('5.002')).toBe(true);
    expect(d((await positionRow(carol!.userId, symbol))!.qty).eq('3.001')).toBe(true);
  });

  // PostgreSQL only: on PGlite's one connection, transactions run one after the other anyway.
  it.runIf(process.env.DATABASE_URL)('a transaction waiting for its COMMIT leaves its place to the next one, which places meanwhile', async () => {
    const symbol = await newInstrument('crypto', { price: '100', lot: '0.001' });
    const stuck = await openedAccounts(MAX_TRANSACTIONS_AT_ONCE, symbol);
    const [free] = await openedAccounts(1, symbol);
    const commits = holdCommits(stuck.map((account) => account.userId));
    try {
      await commits.held;
      const waiting = outcomes(stuck.map((account) => account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }))));
      // Every transaction the queue may run at once has sent its statements and waits in its COMMIT.
      await waitFor(commits.waitingInCommit, (count) => count === MAX_TRANSACTIONS_AT_ONCE);
      const placed = await free!.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
      expect(placed.status).toBe('accepted');
      expect(await commits.waitingInCommit()).toBe(MAX_TRANSACTIONS_AT_ONCE);
      await commits.release();
      expect((await waiting).map((outcome) => outcome.status)).toEqual(stuck.map(() => 'fulfilled'));
    } finally {
      await commits.release();
    }
    await queuingSim.idle();
    expect(d((await positionRow(free!.userId, symbol))!.qty).eq('2.001')).toBe(true);
    for (const account of stuck) expect(d((await positionRow(account.userId, symbol))!.qty).eq('1.001')).toBe(true);
  });
});

describe("the caller's steps in the placement's transaction (placeInBooks)", () => {
  /** A table of the test's own, standing for the caller's intent rows. */
  const intents = sql.raw('sim_test_intents');
  beforeAll(async () => {
    await server.services.db.execute(sql`create table if not exists ${intents} (id text primary key)`);
  });
  const intentRow = async (id: string) => (await rowsOf<{ writer: string }>(server.services.db, sql`select xmin::text as writer from ${intents} where id = ${id}`))[0];
  const simRow = async (userId: number, clientOrderId: string) =>
    (await rowsOf<{ writer: string }>(server.services.db, sql`select xmin::text as writer from ${simOrders} where user_id = ${userId} and client_order_id = ${clientOrderId}`))[0];
  const writeIntent = (id: string, stands: boolean) => async (tx: Tx) => {
    await tx.execute(sql`insert into ${intents} (id) values (${id})`);
    return stands;
  };
  const accountRef = (account: Account) => ({ userId: account.userId, assetClass: 'crypto' as const, mode: 'paper' as const });
  /** A buy of `qty` at 100 on a fresh instrument, in a fresh account. */
  const freshBuy = async (qty: string) => {
    const symbol = await newInstrument('crypto', { price: '100' });
    return { account: await openAccount('crypto'), request: order({ symbol, side: 'buy', qty }) };
  };

  it('commits the intent, the order and the record in one transaction', async () => {
    const { account, request } = await freshBuy('1');
    const placed = await sim.placeInBooks(accountRef(account), request, { intent: writeIntent(`taken-${request.clientOrderId}`, true), record: (_tx, answer) => Promise.resolve(answer.order.clientOrderId) });
    expect(placed).toMatchObject({ outcome: 'taken', recorded: request.clientOrderId });
    const intent = await intentRow(`taken-${request.clientOrderId}`);
    expect(intent).toBeDefined();
    expect((await simRow(account.userId, request.clientOrderId))?.writer).toBe(intent!.writer);
  });

  it('an intent step that answers false withdraws the placement: the intent commits, the broker takes nothing', async () => {
    const { account, request } = await freshBuy('1');
    let recorded = false;
    const placed = await sim.placeInBooks(accountRef(account), request, { intent: writeIntent(`withdrawn-${request.clientOrderId}`, false), record: () => Promise.resolve((recorded = true)) });
    expect(placed).toEqual({ outcome: 'withdrawn' });
    expect(recorded).toBe(false);
    expect(await intentRow(`withdrawn-${request.clientOrderId}`)).toBeDefined();
    expect(await simRow(account.userId, request.clientOrderId)).toBeUndefined();
  });

  it('a refusal answers `refused` with the intent committed and nothing of the broker written', async () => {
    const { account, request } = await freshBuy('5000');
    const placed = await sim.placeInBooks(accountRef(account), request, { intent: writeIntent(`refused-${request.clientOrderId}`, true), record: () => Promise.resolve('recorded') });
    expect(placed.outcome).toBe('refused');
    expect(placed.outcome === 'refused' && placed.error).toBeInstanceOf(BrokerRejectedError);
    expect(placed.outcome === 'refused' && placed.error.message).toMatch(/insufficient funds/);
    expect(await intentRow(`refused-${request.clientOrderId}`)).toBeDefined();
    expect(await simRow(account.userId, request.clientOrderId)).toBeUndefined();
  });

  it('a refusal whose undoIntent step takes the intent back answers `undone`: the step runs in the same transaction, and what it wrote commits instead of the intent', async () => {
    const { account, request } = await freshBuy('5000');
    const id = request.clientOrderId;
    const refusals: BrokerRejectedError[] = [];
    const placed = await sim.placeInBooks(accountRef(account), request, {
      intent: writeIntent(`undone-${id}`, true),
      undoIntent: async (tx, refusal) => {
        refusals.push(refusal);
        // The intent is this transaction's own row: another transaction would not see it to delete it.
        await tx.execute(sql`delete from ${intents} where id = ${`undone-${id}`}`);
        await tx.execute(sql`insert into ${intents} (id) values (${`instead-${id}`})`);
        return true;
      },
      record: () => Promise.resolve('recorded'),
    });
    expect(placed.outcome).toBe('undone');
    expect(placed.outcome === 'undone' && placed.error).toBe(refusals[0]);
    expect(refusals.map((refusal) => refusal.message)).toEqual([expect.stringMatching(/insufficient funds/)]);
    expect(await intentRow(`undone-${id}`)).toBeUndefined();
    expect(await intentRow(`instead-${id}`)).toBeDefined();
    expect(await simRow(account.userId, id)).toBeUndefined();
  });

  it('an undoIntent step that answers false leaves the refusal `refused`, and a taken placement never runs it', async () => {
    const refusedBuy = await freshBuy('5000');
    const kept = await sim.placeInBooks(accountRef(refusedBuy.account), refusedBuy.request, {
      intent: writeIntent(`kept-${refusedBuy.request.clientOrderId}`, true),
      undoIntent: () => Promise.resolve(false),
      record: () => Promise.resolve('recorded'),
    });
    expect(kept.outcome).toBe('refused');
    expect(await intentRow(`kept-${refusedBuy.request.clientOrderId}`)).toBeDefined();

    const takenBuy = await freshBuy('1');
    let undoCalls = 0;
    const taken = await sim.placeInBooks(accountRef(takenBuy.account), takenBuy.request, {
      intent: writeIntent(`taken-undo-${takenBuy.request.clientOrderId}`, true),
      undoIntent: () => Promise.resolve(++undoCalls > 0),
      record: () => Promise.resolve('recorded'),
    });
    expect(taken).toMatchObject({ outcome: 'taken', recorded: 'recorded' });
    expect(undoCalls).toBe(0);
  });

  it('throws when the transaction fails, and then nothing committed, the intent neither', async () => {
    const { account, request } = await freshBuy('1');
    const failed = sim.placeInBooks(accountRef(account), request, {
      intent: writeIntent(`failed-${request.clientOrderId}`, true),
      record: (tx) => tx.execute(sql`select 1 / 0`),
    });
    await expect(failed).rejects.toThrow(/select 1 \/ 0/);
    expect(await intentRow(`failed-${request.clientOrderId}`)).toBeUndefined();
    expect(await simRow(account.userId, request.clientOrderId)).toBeUndefined();
  });
});
