// Replacing a working order at the simulated broker, through the Broker interface on a real
// database: the books row changes under the same id, a `replaced` event follows, and a replaced
// limit that is now marketable fills at once. Refusals (below the filled qty, lots, a finished,
// unknown or other account's order, funds, prices the order type needs) write nothing; the
// operator's outage makes the call unavailable; bracket legs and entries keep their pairing.
import { and, eq } from 'drizzle-orm';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerOrderRequest } from '../../server/brokers/types.ts';
import { createSimulator, type Simulator } from '../../server/brokers/simulator/index.ts';
import { manualClock } from '../../server/clock.ts';
import { simOrders } from '../../server/db/schema/index.ts';
import { upsertInstrument } from '../../server/instruments/queries.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSimAccount, simOrder, type SimAccount } from '../support/sim-accounts.ts';

const START = '2026-03-10T15:00:00.000Z';
const clock = manualClock(START);

let server: TestServer;
let sim: Simulator;
/** The same books with SIM_LIQUIDITY_LOTS_PER_TICK=2: resting limit orders fill two lots per observation. */
let thinSim: Simulator;

const simulatorOn = (liquidityLotsPerTick: number) =>
  createSimulator({
    db: server.services.db,
    clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: { crypto: '100000', us_equity: '100000', kr_equity: '100000000' },
    tickIntervalMs: 0,
    liquidityLotsPerTick,
    marketHours: 'enforce',
    leaseName: 'simulator-replace-test',
    outageReloadMs: 50,
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
/** A fresh crypto instrument per test at an operator's price: no test meets another's prices. */
const newInstrument = async ({ price, lot = '0.001' }: { price: string; lot?: string }) => {
  const n = ++instrumentCount;
  const symbol = `RPL${n}/USDT`;
  await upsertInstrument(server.services.db, {
    assetClass: 'crypto',
    symbol,
    exchange: 'BINANCE',
    currency: 'USDT',
    name: `Replace test ${n}`,
    referencePrice: price,
    tickRule: 'fixed',
    tickSize: '0.01',
    lotSize: lot,
    fractional: true,
    at: clock.now(),
  });
  await sim.setPrice({ assetClass: 'crypto', symbol, price });
  return symbol;
};

type Account = SimAccount;

const openAccount = (on: Simulator = sim, assetClass: TAssetClass = 'crypto'): Promise<Account> => openSimAccount({ server, on, assetClass, prefix: 'simrpl' });

const order = simOrder;

const orderRow = async (userId: number, id: string) => (await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, userId), eq(simOrders.id, id))))[0]!;
const typesOf = (account: Account, brokerOrderId: string) => account.events.filter((event) => event.broker_order_id === brokerOrderId).map((event) => event.type);
/** The row's terms as exact decimals, for comparing before and after a refused replace. */
const termsOf = async (userId: number, id: string) => {
  const row = await orderRow(userId, id);
  return { status: row.status, qty: d(row.qty).toFixed(), limitPrice: row.limitPrice && d(row.limitPrice).toFixed(), stopPrice: row.stopPrice && d(row.stopPrice).toFixed(), updatedAt: row.updatedAt };
};

const rejectedWith = async (promise: Promise<unknown>, message: RegExp) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BrokerRejectedError);
  expect((error as Error).message).toMatch(message);
};

/** A limit buy resting below the price, seen open. */
const restingBuy = async (account: Account, symbol: string, fields: Partial<BrokerOrderRequest> = {}) => {
  const placed = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90', ...fields }));
  await account.seen({ type: 'open', broker_order_id: placed.brokerOrderId });
  return placed;
};

describe('replacing a resting limit order', () => {
  it('changes qty and limit under the same id, reports `replaced`, and fills once the new limit is marketable', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const placed = await restingBuy(account, symbol);
    clock.advance(1_000);
    try {
      const replaced = await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '2', limitPrice: '95' });
      expect(replaced).toMatchObject({ brokerOrderId: placed.brokerOrderId, clientOrderId: placed.clientOrderId, qty: '2', limitPrice: '95', stopPrice: null, status: 'open', filledQty: '0' });
      expect(replaced.updatedAt.toISOString()).toBe(clock.now().toISOString());
      const event = await account.seen({ type: 'replaced', broker_order_id: placed.brokerOrderId });
      expect(event).toMatchObject({ status: 'open', filled_qty: '0', reason: 'replaced: qty 1 -> 2, limit_price 90 -> 95', at: clock.now().toISOString() });
      expect(await termsOf(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'open', qty: '2', limitPrice: '95', stopPrice: null });
      // Still below the price: its matching round leaves it resting.
      await sim.idle();
      expect((await orderRow(account.userId, placed.brokerOrderId)).status).toBe('open');
      expect(await account.broker.listOpenOrders()).toEqual([expect.objectContaining({ brokerOrderId: placed.brokerOrderId, qty: '2', limitPrice: '95' })]);

      // A limit above the price is marketable: the round after the replace fills it, capped at the limit.
      await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, limitPrice: '100.02' });
      const fill = await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
      expect(fill).toMatchObject({ status: 'filled', filled_qty: '2' });
      expect(fill.fill?.price).toBe('100.02');
      expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open', 'replaced', 'replaced', 'fill']);
      expect(await termsOf(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'filled', qty: '2', limitPrice: '100.02' });
    } finally {
      clock.set(START);
    }
  });

  it('a replaced limit fills when the price later reaches it, not at the old limit', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const placed = await restingBuy(account, symbol);
    await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, limitPrice: '97' });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '98' });
    expect((await orderRow(account.userId, placed.brokerOrderId)).status).toBe('open');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '96.5' });
    expect((await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId })).fill?.price).toBe('96.55');
  });

  it('keeps a partly filled order partly filled; a qty not above what filled, or off the lot, is refused', async () => {
    const symbol = await newInstrument({ price: '100', lot: '0.001' });
    const account = await openAccount(thinSim);
    const placed = await restingBuy(account, symbol, { qty: '0.005', limitPrice: '99' });
    // Two lots per observation: 0.002 of 0.005 fill.
    await thinSim.setPrice({ assetClass: 'crypto', symbol, price: '98' });
    expect(await termsOf(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'partially_filled', qty: '0.005' });
    const before = await termsOf(account.userId, placed.brokerOrderId);

    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '0.002' }), /must stay above the 0\.002 already filled/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '0.001' }), /already filled/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '0.0035' }), /multiple of the lot size 0\.001/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '0' }), /qty/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: 'lots' }), /qty must be a positive decimal/);
    expect(await termsOf(account.userId, placed.brokerOrderId)).toEqual(before);
    expect(typesOf(account, placed.brokerOrderId)).not.toContain('replaced');

    // Down to 0.003: one more lot to fill, which the matching round after the replace takes.
    expect(await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '0.003' })).toMatchObject({ status: 'partially_filled', qty: '0.003', filledQty: '0.002' });
    await thinSim.idle();
    await account.seen({ type: 'fill', broker_order_id: placed.brokerOrderId });
    expect(await termsOf(account.userId, placed.brokerOrderId)).toMatchObject({ status: 'filled', qty: '0.003' });
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open', 'partial_fill', 'replaced', 'fill']);
  });
});

describe('refusals', () => {
  it('refuses a finished order and an unknown one', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const market = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    await account.seen({ type: 'fill', broker_order_id: market.brokerOrderId });
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: market.brokerOrderId, qty: '2' }), /order is filled and cannot be replaced/);

    const canceled = await restingBuy(account, symbol);
    await account.broker.cancelOrder({ brokerOrderId: canceled.brokerOrderId });
    const before = await termsOf(account.userId, canceled.brokerOrderId);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: canceled.brokerOrderId, limitPrice: '91' }), /order is canceled and cannot be replaced/);
    expect(await termsOf(account.userId, canceled.brokerOrderId)).toEqual(before);

    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: 'sim_unknown', qty: '1' }), /unknown order/);
    await sim.idle();
    expect(account.events.filter((event) => event.type === 'replaced')).toEqual([]);
  });

  it("refuses another account's order, another user's or the same user's other mode", async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const placed = await restingBuy(account, symbol);
    const before = await termsOf(account.userId, placed.brokerOrderId);
    const other = await openAccount();
    await rejectedWith(other.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '2' }), /unknown order/);
    const live = sim.brokerFor({ userId: account.userId, assetClass: 'crypto', mode: 'live' });
    await rejectedWith(live.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '2' }), /unknown order/);
    expect(await termsOf(account.userId, placed.brokerOrderId)).toEqual(before);
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open']);
  });

  it('keeps the prices each order type needs, and takes none it does not use', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const limit = await restingBuy(account, symbol);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, limitPrice: null }), /limit order keeps needing its limit_price/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, limitPrice: '-1' }), /limit_price must be a positive decimal/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, stopPrice: '95' }), /limit order takes no stop_price/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId }), /nothing to replace/);
    // null for a price the type does not use is no change.
    expect(await account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, qty: '1.5', stopPrice: null })).toMatchObject({ qty: '1.5', limitPrice: '90', stopPrice: null });

    const stop = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'stop', stopPrice: '105' }));
    await account.seen({ type: 'open', broker_order_id: stop.brokerOrderId });
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: stop.brokerOrderId, stopPrice: null }), /stop order keeps needing its stop_price/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: stop.brokerOrderId, limitPrice: '106' }), /stop order takes no limit_price/);
    expect(await account.broker.replaceOrder({ brokerOrderId: stop.brokerOrderId, stopPrice: '108' })).toMatchObject({ stopPrice: '108', limitPrice: null });
    // 106 would have triggered the old stop; the new one waits for 108.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '106' });
    expect((await orderRow(account.userId, stop.brokerOrderId)).status).toBe('open');
  });

  it('refuses a buy the cash cannot pay at its new worst price, and lets one that costs less through', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const placed = await restingBuy(account, symbol, { qty: '1000', limitPrice: '90' });
    // 1000 at the new limit (the slipped price is capped there): 99,950 plus the 0.1 % fee, more than the 100,000 of cash.
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, limitPrice: '99.95' }), /insufficient funds: the order needs 100049\.95 USDT, cash is 100000/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '1200' }), /insufficient funds/);
    expect(await termsOf(account.userId, placed.brokerOrderId)).toMatchObject({ qty: '1000', limitPrice: '90' });
    expect(await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '1050', limitPrice: '80' })).toMatchObject({ qty: '1050', limitPrice: '80' });
  });

  it('refuses a sell that grows beyond the position (no short selling)', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
    await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
    const sell = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '0.6', orderType: 'limit', limitPrice: '150' }));
    await account.seen({ type: 'open', broker_order_id: sell.brokerOrderId });
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: sell.brokerOrderId, qty: '1.001' }), /insufficient position: selling 1\.001 .* with 1 available/);
    // Its own units count as available to it: growing to the whole position is fine.
    expect(await account.broker.replaceOrder({ brokerOrderId: sell.brokerOrderId, qty: '1' })).toMatchObject({ qty: '1' });
  });
});

describe('brackets', () => {
  const bracketed = async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const entry = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: null } }));
    await account.seen({ type: 'fill', broker_order_id: entry.brokerOrderId });
    const children = await account.broker.listOpenOrders();
    const takeProfit = children.find((child) => child.metadata.leg === 'take_profit')!;
    const stopLoss = children.find((child) => child.metadata.leg === 'stop_loss')!;
    return { symbol, account, takeProfit, stopLoss };
  };

  it('replaces a take-profit or stop-loss price; the sibling stays paired, and the OCO still works', async () => {
    const { symbol, account, takeProfit, stopLoss } = await bracketed();
    expect(await account.broker.replaceOrder({ brokerOrderId: takeProfit.brokerOrderId, limitPrice: '120' })).toMatchObject({ limitPrice: '120', status: 'open' });
    expect(await account.broker.replaceOrder({ brokerOrderId: stopLoss.brokerOrderId, stopPrice: '95' })).toMatchObject({ stopPrice: '95', status: 'open' });
    await account.seen({ type: 'replaced', broker_order_id: stopLoss.brokerOrderId });
    expect(await orderRow(account.userId, takeProfit.brokerOrderId)).toMatchObject({ status: 'open', ocoSiblingId: stopLoss.brokerOrderId });
    expect(await orderRow(account.userId, stopLoss.brokerOrderId)).toMatchObject({ status: 'open', ocoSiblingId: takeProfit.brokerOrderId });
    // A leg's qty follows the entry's fill.
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: takeProfit.brokerOrderId, qty: '1' }), /bracket leg's qty/);
    // 96 would not have reached the old stop at 90: the new one at 95 waits; 94 triggers it.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '96' });
    expect((await orderRow(account.userId, stopLoss.brokerOrderId)).status).toBe('open');
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '94' });
    await account.seen({ type: 'fill', broker_order_id: stopLoss.brokerOrderId });
    await account.seen({ type: 'canceled', broker_order_id: takeProfit.brokerOrderId });
  });

  it("replaces a resting entry's limit before it fills, keeping it between its stop-loss and take-profit", async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const entry = await restingBuy(account, symbol, { qty: '1', limitPrice: '95', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: null } });
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: entry.brokerOrderId, limitPrice: '111' }), /take_profit 110 must be above the entry price 111/);
    await rejectedWith(account.broker.replaceOrder({ brokerOrderId: entry.brokerOrderId, limitPrice: '89' }), /stop_loss 90 must be below the entry price 89/);
    expect(await account.broker.replaceOrder({ brokerOrderId: entry.brokerOrderId, limitPrice: '97', qty: '3' })).toMatchObject({ limitPrice: '97', qty: '3' });
    // It fills at the new limit and its children protect the new qty.
    await sim.setPrice({ assetClass: 'crypto', symbol, price: '96' });
    await account.seen({ type: 'fill', broker_order_id: entry.brokerOrderId });
    const children = (await account.broker.listOpenOrders()).filter((child) => child.parentId === entry.brokerOrderId);
    expect(children.map((child) => [child.metadata.leg, child.qty])).toEqual(expect.arrayContaining([['take_profit', '3'], ['stop_loss', '3']]));
  });
});

describe('outage', () => {
  it('makes the replace unavailable while the asset class is down, with nothing changed', async () => {
    const symbol = await newInstrument({ price: '100' });
    const account = await openAccount();
    const placed = await restingBuy(account, symbol);
    const before = await termsOf(account.userId, placed.brokerOrderId);
    await sim.setOutage({ assetClass: 'crypto', down: true });
    try {
      await expect(account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, limitPrice: '101' })).rejects.toBeInstanceOf(BrokerUnavailableError);
      expect(await termsOf(account.userId, placed.brokerOrderId)).toEqual(before);
    } finally {
      await sim.setOutage({ assetClass: 'crypto', down: false });
    }
    expect(await account.broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, limitPrice: '91' })).toMatchObject({ limitPrice: '91' });
    await account.seen({ type: 'replaced', broker_order_id: placed.brokerOrderId });
    expect(typesOf(account, placed.brokerOrderId)).toEqual(['accepted', 'open', 'replaced']);
  });
});
