// The simulator on the exchange calendars and inside KRX's daily band, driven on a manual clock:
// no walk, matching or fill of a stock while its exchange is closed (resting orders wait for the
// open, which trades from an operator's price set at night), crypto always trading,
// RISK_MARKET_HOURS=ignore turning the calendar off, and a KRX stock's prices and fills kept
// inside ±30 % of the previous session's close.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../server/brokers/simulator/index.ts';
import { manualClock } from '../../server/clock.ts';
import { simFills, simOrders, simPrices } from '../../server/db/schema/index.ts';
import { upsertInstrument } from '../../server/instruments/queries.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSimAccount, simOrder as order, type SimAccount } from '../support/sim-accounts.ts';
import { waitFor } from '../support/wait.ts';

// Wednesday 25 November 2026, 10:00 in New York: the day before Thanksgiving, NYSE open.
const WEDNESDAY = '2026-11-25T15:00:00.000Z';
// Thanksgiving, 10:00 in New York: NYSE closed all day.
const THANKSGIVING = '2026-11-26T15:00:00.000Z';
// Friday 27 November, 09:30 in New York: the opening bell of the day after (an early close at 13:00).
const FRIDAY_OPEN = '2026-11-27T14:30:00.000Z';
// Tuesday 10 March 2026, 10:00 in Seoul: KRX open; its previous session was Monday the 9th.
const KRX_TUESDAY = '2026-03-10T01:00:00.000Z';

const clock = manualClock(WEDNESDAY);
let server: TestServer;
const sims: Simulator[] = [];

const simulatorOn = async (options: Partial<SimulatorOptions> = {}) => {
  const sim = await createSimulator({
    db: server.services.db,
    clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: { crypto: '100000', us_equity: '100000', kr_equity: '100000000' },
    tickIntervalMs: 0,
    liquidityLotsPerTick: 0,
    marketHours: 'enforce',
    leaseName: 'simulator-calendar-test',
    ...options,
  });
  sims.push(sim);
  return sim;
};

let sim: Simulator;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  sim = await simulatorOn();
});
afterAll(async () => {
  for (const each of sims) await each.stop();
  await server?.stop();
});

let instrumentCount = 0;
/** A fresh instrument per test, so no test meets another's prices or orders. */
const newInstrument = async (assetClass: TAssetClass, price: string) => {
  const n = ++instrumentCount;
  const krx = assetClass === 'kr_equity';
  const symbol = assetClass === 'crypto' ? `CAL${n}/USDT` : krx ? `8${String(n).padStart(5, '0')}` : `CALT${n}`;
  await upsertInstrument(server.services.db, {
    assetClass,
    symbol,
    exchange: assetClass === 'crypto' ? 'BINANCE' : krx ? 'KRX' : 'NYSE',
    currency: { crypto: 'USDT', us_equity: 'USD', kr_equity: 'KRW' }[assetClass],
    name: `Calendar test ${n}`,
    referencePrice: price,
    tickRule: krx ? 'krx_bands' : 'fixed',
    tickSize: '0.01',
    lotSize: krx ? '1' : '0.001',
    fractional: !krx,
    at: clock.now(),
  });
  return symbol;
};

const openAccount = (assetClass: TAssetClass, on: Simulator = sim): Promise<SimAccount> => openSimAccount({ server, on, assetClass, prefix: 'simcal' });
const orderRow = async (userId: number, id: string) => (await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, userId), eq(simOrders.id, id))))[0]!;
const fillRows = (userId: number, orderId: string) => server.services.db.select().from(simFills).where(and(eq(simFills.userId, userId), eq(simFills.orderId, orderId)));
const storedPrice = async (assetClass: TAssetClass, symbol: string) => (await server.services.db.select().from(simPrices).where(and(eq(simPrices.assetClass, assetClass), eq(simPrices.symbol, symbol))))[0];

/** Runs `body` at `at`, and puts the clock back for the next test. */
const at = async <T>(instant: string, body: () => Promise<T>): Promise<T> => {
  clock.set(instant);
  try {
    return await body();
  } finally {
    clock.set(WEDNESDAY);
  }
};

describe('a stock while its exchange is closed', () => {
  it('a resting GTC stop waits through Thanksgiving, even at an operator price past it, and fills at the open from that price', async () => {
    const symbol = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '100' });
    const account = await openAccount('us_equity');
    await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
    await sim.idle();
    const stop = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '2', orderType: 'stop', stopPrice: '95' }));
    await account.seen({ type: 'open', broker_order_id: stop.brokerOrderId });

    clock.set(THANKSGIVING);
    try {
      // Stored and published, but no matching on it while closed.
      expect(await sim.setPrice({ assetClass: 'us_equity', symbol, price: '90' })).toMatchObject({ price: '90', source: 'admin' });
      await sim.tick();
      await sim.matchResting();
      await sim.idle();
      expect((await orderRow(account.userId, stop.brokerOrderId)).status).toBe('open');
      expect(await fillRows(account.userId, stop.brokerOrderId)).toEqual([]);

      // The first round after the opening bell matches what rested, at the price set overnight.
      clock.set(FRIDAY_OPEN);
      await sim.matchResting();
      const fill = await account.seen({ type: 'fill', broker_order_id: stop.brokerOrderId });
      // The US profile has no slippage: the fill is the operator's price.
      expect(fill).toMatchObject({ status: 'filled', at: FRIDAY_OPEN });
      expect(fill.fill).toMatchObject({ qty: '2', price: '90' });
    } finally {
      clock.set(WEDNESDAY);
    }
  });

  it('does not walk while closed, and walks again from the open', async () => {
    const symbol = await newInstrument('us_equity', '100');
    const account = await openAccount('us_equity');
    // A resting order makes the symbol one the walk moves; no operator price holds it.
    const resting = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '50' }));
    await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
    const walker = await simulatorOn({ walkVolatility: '0.01', seed: 11 });
    const prices: string[] = [];
    walker.onPrice((update) => {
      if (update.symbol === symbol) prices.push(update.price);
    });

    await at(THANKSGIVING, async () => {
      await walker.tick();
      expect(await storedPrice('us_equity', symbol)).toBeUndefined();
      expect(prices).toEqual([]);
    });
    await at(FRIDAY_OPEN, async () => {
      await walker.tick();
      expect((await storedPrice('us_equity', symbol))?.tickPrice).not.toBeNull();
      expect(prices).toHaveLength(1);
    });
  });

  it('a market order that reaches the books while closed rests for the open; an ioc is canceled', async () => {
    const symbol = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '100' });
    const account = await openAccount('us_equity');
    await at(THANKSGIVING, async () => {
      // The risk gate answers MARKET_CLOSED before an order gets here; the books hold the rule
      // for whatever does (an order that crosses the closing bell on its way in).
      const market = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
      const ioc = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', timeInForce: 'ioc' }));
      await sim.idle();
      expect((await account.seen({ type: 'open', broker_order_id: market.brokerOrderId })).status).toBe('open');
      expect(await account.seen({ type: 'canceled', broker_order_id: ioc.brokerOrderId })).toMatchObject({ reason: 'ioc: the market is closed' });
      expect(await fillRows(account.userId, market.brokerOrderId)).toEqual([]);

      clock.set(FRIDAY_OPEN);
      await sim.matchResting();
      expect((await account.seen({ type: 'fill', broker_order_id: market.brokerOrderId })).fill).toMatchObject({ qty: '1', price: '100' });
    });
  });

  it('a limit replaced to a marketable price while closed fills only at the open', async () => {
    const symbol = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '100' });
    const account = await openAccount('us_equity');
    const limit = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '90' }));
    await account.seen({ type: 'open', broker_order_id: limit.brokerOrderId });
    await at(THANKSGIVING, async () => {
      await account.broker.replaceOrder({ brokerOrderId: limit.brokerOrderId, limitPrice: '101' });
      await account.seen({ type: 'replaced', broker_order_id: limit.brokerOrderId });
      await sim.idle();
      expect(await fillRows(account.userId, limit.brokerOrderId)).toEqual([]);
      clock.set(FRIDAY_OPEN);
      await sim.matchResting();
      expect((await account.seen({ type: 'fill', broker_order_id: limit.brokerOrderId })).fill).toMatchObject({ qty: '1', price: '100' });
    });
  });

  it('crypto trades on Thanksgiving; RISK_MARKET_HOURS=ignore lets stocks trade too', async () => {
    const coin = await newInstrument('crypto', '100');
    await sim.setPrice({ assetClass: 'crypto', symbol: coin, price: '100' });
    const stock = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol: stock, price: '100' });
    const anyHour = await simulatorOn({ marketHours: 'ignore' });
    const crypto = await openAccount('crypto');
    const us = await openAccount('us_equity', anyHour);
    await at(THANKSGIVING, async () => {
      const coinBuy = await crypto.broker.placeOrder(order({ symbol: coin, side: 'buy', qty: '1' }));
      expect((await crypto.seen({ type: 'fill', broker_order_id: coinBuy.brokerOrderId })).status).toBe('filled');
      const stockBuy = await us.broker.placeOrder(order({ symbol: stock, side: 'buy', qty: '1' }));
      expect((await us.seen({ type: 'fill', broker_order_id: stockBuy.brokerOrderId })).status).toBe('filled');
    });
  });
});

describe('the opening bell, with the walk off', () => {
  // Nothing below calls a round, sets a price or places after the clock crosses the open: the
  // simulator's own wake-up on the clock is what matches (SIM_TICK_INTERVAL_MS=0, no loop).

  it('a marketable limit placed while NYSE is closed fills when the clock crosses the open', async () => {
    const symbol = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '100' });
    const account = await openAccount('us_equity');
    await at(THANKSGIVING, async () => {
      const limit = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '101' }));
      await account.seen({ type: 'open', broker_order_id: limit.brokerOrderId });
      // A minute before the bell: still resting.
      clock.set('2026-11-27T14:29:00.000Z');
      await sim.idle();
      expect(await fillRows(account.userId, limit.brokerOrderId)).toEqual([]);

      clock.set(FRIDAY_OPEN);
      const fill = await account.seen({ type: 'fill', broker_order_id: limit.brokerOrderId });
      expect(fill).toMatchObject({ status: 'filled', at: FRIDAY_OPEN });
      expect(fill.fill).toMatchObject({ qty: '1', price: '100' });
    });
  });

  it('a limit that rested from the session before meets a price set overnight at the next open', async () => {
    const symbol = await newInstrument('us_equity', '100');
    await sim.setPrice({ assetClass: 'us_equity', symbol, price: '100' });
    const account = await openAccount('us_equity');
    // Placed on Wednesday while NYSE trades: not marketable, it rests through the close.
    const limit = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '95' }));
    await account.seen({ type: 'open', broker_order_id: limit.brokerOrderId });
    await at(THANKSGIVING, async () => {
      await sim.setPrice({ assetClass: 'us_equity', symbol, price: '94' });
      await sim.idle();
      expect(await fillRows(account.userId, limit.brokerOrderId)).toEqual([]);
      clock.set(FRIDAY_OPEN);
      expect((await account.seen({ type: 'fill', broker_order_id: limit.brokerOrderId })).fill).toMatchObject({ qty: '1', price: '94' });
    });
  });

  it('a market buy resting while KRX is closed fills at its 09:00 bell', async () => {
    const symbol = await newInstrument('kr_equity', '50000');
    // Tuesday 10 March 2026, 20:00 in Seoul (closed); Wednesday's bell is 09:00, 00:00 UTC.
    const tuesdayEvening = '2026-03-10T11:00:00.000Z';
    const wednesdayBell = '2026-03-11T00:00:00.000Z';
    await at(tuesdayEvening, async () => {
      await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '50000' });
      const account = await openAccount('kr_equity');
      const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
      await account.seen({ type: 'open', broker_order_id: buy.brokerOrderId });
      clock.set(wednesdayBell);
      const fill = await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId });
      expect(fill).toMatchObject({ status: 'filled', at: wednesdayBell });
      expect(fill.fill).toMatchObject({ qty: '2' });
    });
  });

  it('a simulator that starts while orders rest arms the bell from its books', async () => {
    const symbol = await newInstrument('kr_equity', '50000');
    // Wednesday 11 March 2026, 20:00 in Seoul; Thursday's bell is 00:00 UTC.
    const wednesdayEvening = '2026-03-11T11:00:00.000Z';
    const thursdayBell = '2026-03-12T00:00:00.000Z';
    await at(wednesdayEvening, async () => {
      await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '50000' });
      // Placed through an instance that then stops (its own bell with it), as before a restart.
      const placer = await simulatorOn();
      const account = await openAccount('kr_equity', placer);
      const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1' }));
      await account.seen({ type: 'open', broker_order_id: buy.brokerOrderId });
      await placer.stop();
      const restarted = await simulatorOn();
      restarted.start();
      await restarted.idle();
      clock.set(thursdayBell);
      const [fill] = await waitFor(() => fillRows(account.userId, buy.brokerOrderId), (rows) => rows.length > 0);
      expect(fill).toMatchObject({ qty: '1' });
      expect((await orderRow(account.userId, buy.brokerOrderId)).status).toBe('filled');
    });
  });
});

describe("KRX's daily band around the previous session's close", () => {
  /** A KRX stock whose Monday closed at 50,000 (band 35,000–65,000 on Tuesday); Tuesday's own bar, 60,000, is no base. */
  const bandedStock = async () => {
    const symbol = await newInstrument('kr_equity', '50000');
    const bar = (date: string, close: string) => ({ date, open: close, high: close, low: close, close, volume: '1000' });
    await upsertBars(server.services.db, { assetClass: 'kr_equity', symbol, bars: [bar('2026-03-06', '40000'), bar('2026-03-09', '50000'), bar('2026-03-10', '60000')], source: 'import', at: clock.now() });
    return symbol;
  };

  it('an operator price beyond the band is set at its edge', async () => {
    const symbol = await bandedStock();
    await at(KRX_TUESDAY, async () => {
      expect(await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '80000' })).toMatchObject({ price: '65000', source: 'admin' });
      expect(await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '20000' })).toMatchObject({ price: '35000' });
      expect(await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '64900' })).toMatchObject({ price: '64900' });
    });
  });

  it('a market buy at the upper limit fills at the limit, not beyond it; a sell at the lower limit likewise', async () => {
    const symbol = await bandedStock();
    await at(KRX_TUESDAY, async () => {
      const account = await openAccount('kr_equity');
      await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '65000' });
      // Slippage would make 65,032.5, 65,100 on the grid: above the upper limit.
      const buy = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '2' }));
      expect((await account.seen({ type: 'fill', broker_order_id: buy.brokerOrderId })).fill).toMatchObject({ qty: '2', price: '65000' });
      // A limit above the band fills no higher than its edge either.
      const limit = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '70000' }));
      expect((await account.seen({ type: 'fill', broker_order_id: limit.brokerOrderId })).fill).toMatchObject({ price: '65000' });

      await sim.setPrice({ assetClass: 'kr_equity', symbol, price: '35000' });
      // Slippage would make 34,982.5, 34,950 on the grid: below the lower limit.
      const sell = await account.broker.placeOrder(order({ symbol, side: 'sell', qty: '3' }));
      expect((await account.seen({ type: 'fill', broker_order_id: sell.brokerOrderId })).fill).toMatchObject({ qty: '3', price: '35000' });
    });
  });

  it('the walk keeps a KRX stock inside the band, however wild', async () => {
    const symbol = await bandedStock();
    await at(KRX_TUESDAY, async () => {
      const account = await openAccount('kr_equity');
      const resting = await account.broker.placeOrder(order({ symbol, side: 'buy', qty: '1', orderType: 'limit', limitPrice: '35000' }));
      await account.seen({ type: 'open', broker_order_id: resting.brokerOrderId });
      const walker = await simulatorOn({ walkVolatility: '0.2', seed: 3 });
      const prices: number[] = [];
      walker.onPrice((update) => {
        if (update.symbol === symbol) prices.push(Number(update.price));
      });
      for (let round = 0; round < 30; round += 1) await walker.tick();
      expect(prices).toHaveLength(30);
      expect(Math.max(...prices)).toBeLessThanOrEqual(65000);
      expect(Math.min(...prices)).toBeGreaterThanOrEqual(35000);
      // So wild a walk reaches an edge and stays on the grid there.
      expect(prices.some((price) => price === 65000 || price === 35000)).toBe(true);
    });
  });
});
