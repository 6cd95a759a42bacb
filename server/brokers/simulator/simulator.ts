// The simulated broker (BROKER_MODE=simulated): a broker with its own books in the database, one
// account per user × asset class × mode, Broker adapters over those accounts, the operator's
// prices and outages, and the leased loop that runs market.ts's rounds.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CURRENCY_OF_ASSET_CLASS, ZAssetClass, type TAssetClass } from '../../../contracts/common.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Queryable, Tx } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import type { ChangeFeed } from '../../events/changes.ts';
import { findInstrument as readInstrument } from '../../instruments/queries.ts';
import { nextClose } from '../../markets/calendar.ts';
import type { Logger } from '../../observability/logger.ts';
import { placementStep } from '../../observability/placement-steps.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerAccount, type BrokerOrderRequest, type BrokerPosition, type BrokerSnapshot } from '../types.ts';
import { buyingPowerOf } from '../funds.ts';
import type { InBooksPlacement, InBooksSteps, Simulator } from './api.ts';
import { toBrokerOrder, BROKER_NAME } from './books.ts';
import { cancelInBooks, replaceInBooks, resetInBooks } from './books-actions.ts';
import { createSimulatedBroker, type AccountBackend } from './broker.ts';
import { createEventHub } from './events.ts';
import { createLeasedLoop } from './lease.ts';
import { createOutages } from './outage.ts';
import { createMarket } from './market.ts';
import { createOpeningBell } from './opening-bell.ts';
import { createExchangeRules, type TMarketHours } from './exchange-rules.ts';
import { quoteFrom, quoteOf, seededRandom } from './prices.ts';
import {
  findAccount,
  findOrder,
  insertAccountIfMissing,
  listAccountEquities,
  listActiveOrders,
  listEquitiesAtStoredPrices,
  listPositionsWithPrices,
  type AccountKey,
  type SimAccountRow,
  type SimOrderRow,
  type SimPositionRow,
  type SimPriceRow,
} from './queries.ts';
import { readAccountSnapshot, type LockedAccount } from './account-reads.ts';
import { accountIdOf, createPlacementQueue, type QueuedPlacement } from './placement-queue.ts';

const ASSET_CLASSES = ZAssetClass.options;

/** The cash currency of each asset class's accounts. */
export const ACCOUNT_CURRENCY = CURRENCY_OF_ASSET_CLASS;

export const DEFAULT_LEASE_NAME = 'simulator';

export interface SimulatorOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  changes: ChangeFeed;
  /** The instrument of a symbol (default: read from the registry each time; the app passes its cached one). */
  findInstrument?: (key: { assetClass: TAssetClass; symbol: string }) => Promise<InstrumentRow | undefined>;
  /** Starting cash per asset class (SIM_INITIAL_CASH_USDT / _USD / _KRW), decimal strings. */
  initialCash: Record<TAssetClass, string>;
  /** SIM_TICK_INTERVAL_MS: one walk step and matching round per interval; 0 turns the loop off. */
  tickIntervalMs: number;
  /** SIM_LIQUIDITY_LOTS_PER_TICK: the most a resting limit order fills per observation, in lots; 0 is no limit. */
  liquidityLotsPerTick: number;
  /** The random walk's seed. */
  seed?: number;
  /** Standard deviation of one walk step, as a fraction of the price (default 0.0002: 2 basis points). */
  walkVolatility?: string;
  /** This instance's lease holder id (default host:pid:random). */
  instanceId?: string;
  /** The lease's name in the leases table (tests use their own). */
  leaseName?: string;
  /** How long a lease lasts without renewal (default five loop intervals, at least 5 s). */
  leaseTtlMs?: number;
  /** Safety re-read of the outage flags (default 30 s): a bound on a missed notification, not the mechanism. */
  outageReloadMs?: number;
  /** RISK_MARKET_HOURS, no default: `enforce` keeps a stock still (no walk, matching or fill) while its exchange is closed. */
  marketHours: TMarketHours;
}

const startingCash = (assetClass: TAssetClass, value: string): string => {
  const cash = new ExactDecimal(value);
  if (!cash.isFinite() || cash.lt(0)) throw new Error(`initial cash of ${assetClass} must be a non-negative decimal, got ${value}`);
  return cash.toFixed();
};

export const createSimulator = async (options: SimulatorOptions): Promise<Simulator> => {
  const { db, clock, changes, tickIntervalMs, liquidityLotsPerTick } = options;
  const logger = options.logger.child({ area: 'simulator' });
  const instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const initialCash = Object.fromEntries(ASSET_CLASSES.map((assetClass) => [assetClass, startingCash(assetClass, options.initialCash[assetClass])])) as Record<TAssetClass, string>;
  const volatility = new ExactDecimal(options.walkVolatility ?? '0.0002');
  const random = seededRandom(options.seed ?? 0x5eed);
  const hub = createEventHub(logger);
  const outages = await createOutages({ db, clock, changes, logger, reloadMs: options.outageReloadMs ?? 30_000 });
  const findInstrument = options.findInstrument ?? ((key: { assetClass: TAssetClass; symbol: string }) => readInstrument(db, key));

  const opening = (assetClass: TAssetClass) => ({ currency: ACCOUNT_CURRENCY[assetClass], cash: initialCash[assetClass] });
  const placements = createPlacementQueue({ db, hub, opening, liquidityLotsPerTick, snapshotUnderLock: (tx, key, locked) => snapshotUnderLock(tx, key, locked) });
  const upClasses = () => ASSET_CLASSES.filter((assetClass) => !outages.isDown(assetClass));
  const down = (assetClass: TAssetClass) => new BrokerUnavailableError(`the simulated ${assetClass} broker is down (operator outage)`, { notTaken: true });

  // Work started after a placement (its first match) runs on after the call returns.
  const inflight = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    const tracked = work.catch((error: unknown) => logger.error({ err: error }, 'simulated fill failed')).finally(() => inflight.delete(tracked));
    inflight.add(tracked);
  };
  const idle = async () => {
    while (inflight.size > 0) await Promise.all(inflight);
  };

  const instrumentOf = async (assetClass: TAssetClass, symbol: string): Promise<InstrumentRow> => {
    const instrument = await findInstrument({ assetClass, symbol });
    if (!instrument) throw new AppError('INVALID_SYMBOL', `unknown ${assetClass} symbol ${symbol}`);
    return instrument;
  };

  const rules = createExchangeRules({ db, marketHours: options.marketHours });
  const { matchOrders, matchResting, tick, expireDayOrders, setPrice, onPrice } = createMarket({ db, clock, logger, hub, outages, upClasses, findInstrument, instrumentOf, liquidityLotsPerTick, volatility, random, rules });

  // With the walk off no loop runs: the open of a market with working orders starts its own round,
  // day orders whose session closed expired first (they must not trade in the next one).
  const bell =
    tickIntervalMs > 0
      ? undefined
      : createOpeningBell({
          db,
          clock,
          rules,
          round: async (opened) => {
            await expireDayOrders();
            await matchResting(opened);
          },
          track,
        });

  const openAccount = async (key: AccountKey) => {
    await insertAccountIfMissing(db, { ...key, ...opening(key.assetClass), at: clock.now() });
  };

  const positionsOf = async (key: AccountKey): Promise<BrokerPosition[]> => pricedPositions(await listPositionsWithPrices(db, key));

  /** Positions valued at the simulator's current price of each symbol (read through `q`, a transaction's when given). */
  const pricedPositions = (rows: readonly { position: SimPositionRow; price: SimPriceRow | null }[], q: Queryable = db, find = findInstrument): Promise<BrokerPosition[]> =>
    Promise.all(
      rows.map(async ({ position: row, price: stored }) => {
        const instrument = await find({ assetClass: row.assetClass, symbol: row.symbol });
        // An instrument removed from the registry keeps its last known value: its entry price.
        const price = instrument ? (await quoteFrom(q, instrument, stored)).price : new ExactDecimal(row.avgEntryPrice);
        return {
          symbol: row.symbol,
          qty: new ExactDecimal(row.qty).toFixed(),
          avgEntryPrice: new ExactDecimal(row.avgEntryPrice).toFixed(),
          currentPrice: price.toFixed(),
          realizedPnl: new ExactDecimal(row.realizedPnl).toFixed(),
          currency: ACCOUNT_CURRENCY[row.assetClass],
        };
      }),
    );

  /** The account row, opening the account when it is missing. */
  const accountRowOf = async (key: AccountKey): Promise<SimAccountRow> => {
    const row = await findAccount(db, key);
    if (row) return row;
    await openAccount(key);
    return (await findAccount(db, key))!;
  };

  /**
   * The account as a broker reports it. Long-only and without margin: what can be bought is the
   * cash less what the working buys hold of it (funds.ts), as the placement judges it under the lock.
   */
  const accountFrom = (key: AccountKey, row: SimAccountRow, positions: readonly BrokerPosition[], working: readonly SimOrderRow[]): BrokerAccount => {
    const cash = new ExactDecimal(row.cash);
    const equity = positions.reduce((sum, position) => sum.plus(new ExactDecimal(position.qty).times(position.currentPrice)), cash);
    const prices = new Map(positions.map((position) => [position.symbol, new ExactDecimal(position.currentPrice)]));
    const buyingPower = buyingPowerOf(key.assetClass, cash, working, (symbol) => prices.get(symbol));
    return { broker: BROKER_NAME, paper: key.mode === 'paper', currency: row.currency, cash: cash.toFixed(), equity: equity.toFixed(), buyingPower: buyingPower.toFixed(), asOf: clock.now(), resetAt: row.resetAt };
  };

  const accountOf = async (key: AccountKey, row?: SimAccountRow): Promise<BrokerAccount> => {
    const [account, positions, working] = await Promise.all([row ?? accountRowOf(key), positionsOf(key), listActiveOrders(db, key)]);
    return accountFrom(key, account, positions, working);
  };

  /** The account, its positions and working orders, read in one statement (the account opened first when missing). */
  const snapshotOf = async (key: AccountKey): Promise<BrokerSnapshot> => {
    let read = await readAccountSnapshot(db, key);
    if (!read) {
      await openAccount(key);
      read = (await readAccountSnapshot(db, key))!;
    }
    const positions = await pricedPositions(read.positions);
    return { account: accountFrom(key, read.account, positions, read.orders), positions, openOrders: read.orders.map(toBrokerOrder) };
  };

  /**
   * The account as snapshotOf reports it, from what a placement read with the account's lock (its
   * holdings among it; an account opened in that transaction holds none), in the transaction: the
   * account's working buys and the symbol's sells are the ones that bear on the buying power and
   * on the symbol's position, as they do on a snapshot's.
   */
  const snapshotUnderLock = async (tx: Tx, key: AccountKey, locked: LockedAccount): Promise<BrokerSnapshot> => {
    const positions = await pricedPositions(locked.holdings ?? [], tx);
    return { account: accountFrom(key, locked.account, positions, locked.working), positions, openOrders: locked.working.map(toBrokerOrder) };
  };

  /**
   * Takes the order on the books after the caller's intent step, and runs the caller's `record`
   * of the answer, all in one transaction (Simulator.placeInBooks). The answer is the order as
   * accepted; its first match (a marketable order's fill, a resting order's `open`), made in the
   * same transaction, arrives as events after commit. Throws only when nothing committed.
   */
  const placeAndRecord = async <T>(key: AccountKey, request: BrokerOrderRequest, steps: InBooksSteps<T>): Promise<InBooksPlacement<T>> => {
    const instrument = await findInstrument({ assetClass: key.assetClass, symbol: request.symbol });
    if (!instrument) throw new BrokerRejectedError(`unknown symbol ${request.symbol}`);
    const at = clock.now();
    const expiresAt = request.timeInForce === 'day' ? nextClose({ assetClass: key.assetClass, at }) : null;
    // Read before the transaction: calendar arithmetic, and a KRX band kept for its session.
    const market = await rules.stateOf(instrument, at);
    placementStep(key.userId, request.clientOrderId, 'queued');
    const placed = await new Promise<InBooksPlacement<T>>((resolve, reject) => {
      // `recorded` is what this placement's own `record` returned.
      placements.enqueue(key, { request, instrument, at, expiresAt, market, steps, resolve: resolve as QueuedPlacement['resolve'], reject });
    });
    // What rests is matched again at its market's next open (a filled order leaves one idle ring at most).
    if (placed.outcome === 'taken') bell?.expect(key.assetClass);
    return placed;
  };

  /** Accounts this instance has opened (or is opening), by account: an account is never removed. */
  const opened = new Map<string, Promise<void>>();
  /** Fails while the asset class is down; opens the account once (a failed opening is tried again). */
  const ready = async (key: AccountKey) => {
    if (outages.isDown(key.assetClass)) throw down(key.assetClass);
    const id = accountIdOf(key);
    let opening = opened.get(id);
    if (!opening) {
      opening = openAccount(key).catch((error: unknown) => {
        opened.delete(id);
        throw error;
      });
      opened.set(id, opening);
    }
    await opening;
  };

  const backend: AccountBackend = {
    ready,
    place: async (key, request) => {
      const placed = await placeAndRecord(key, request, { record: () => Promise.resolve(undefined) });
      if (placed.outcome === 'refused') throw placed.error;
      // Without an intent step nothing withdraws a placement.
      if (placed.outcome !== 'taken') throw new Error('a placement without an intent step was withdrawn');
      return placed.order;
    },
    replace: async (key, request) => {
      // The order names its instrument (read here, outside the transaction, which reads the
      // order again under its lock: the symbol of an order never changes).
      const found = await findOrder(db, { ...key, brokerOrderId: request.brokerOrderId });
      if (!found) throw new BrokerRejectedError('unknown order');
      const instrument = await findInstrument({ assetClass: key.assetClass, symbol: found.symbol });
      if (!instrument) throw new BrokerRejectedError(`unknown symbol ${found.symbol}`);
      const { price } = await quoteOf(db, instrument);
      const { row, events } = await db.transaction((tx) => replaceInBooks(tx, { key, request, instrument, price, at: clock.now() }));
      hub.emit(events);
      // A replaced limit may now be marketable: one matching round follows, as after a placement
      // (while closed, the one at the open).
      track(matchOrders(instrument, [row], price));
      bell?.expect(key.assetClass);
      return toBrokerOrder(row);
    },
    cancel: async (key, brokerOrderId) => {
      const { row, events } = await db.transaction((tx) => cancelInBooks(tx, { key, brokerOrderId, at: clock.now() }));
      hub.emit(events);
      return toBrokerOrder(row);
    },
    getOrder: async (key, lookup) => {
      const row = await findOrder(db, { ...key, ...lookup });
      return row && toBrokerOrder(row);
    },
    listOpenOrders: async (key) => (await listActiveOrders(db, key)).map(toBrokerOrder),
    positions: positionsOf,
    account: (key) => accountOf(key),
    snapshot: snapshotOf,
    quote: async (key, symbol) => {
      const instrument = await findInstrument({ assetClass: key.assetClass, symbol });
      if (!instrument) throw new BrokerRejectedError(`unknown symbol ${symbol}`);
      return (await quoteOf(db, instrument)).price.toFixed();
    },
    stream: (key, signal) => hub.stream(key, signal),
  };

  const loop = createLeasedLoop({
    db,
    clock,
    logger,
    name: options.leaseName ?? DEFAULT_LEASE_NAME,
    holder: instanceId,
    ttlMs: options.leaseTtlMs ?? Math.max(5_000, 5 * tickIntervalMs),
    intervalMs: tickIntervalMs,
    work: async () => {
      await tick();
      await expireDayOrders();
    },
  });

  return {
    instanceId,
    brokerFor: ({ userId, assetClass, mode }) => createSimulatedBroker(backend, { userId, assetClass, mode }),
    placeInBooks: async ({ userId, assetClass, mode }, request, steps) => {
      const key: AccountKey = { userId, assetClass, mode };
      await ready(key);
      return placeAndRecord(key, request, steps);
    },
    openAccount: ({ userId, assetClass, mode }) => openAccount({ userId, assetClass, mode }),
    resetAccount: async ({ userId, assetClass }) => {
      if (outages.isDown(assetClass)) throw down(assetClass);
      const key: AccountKey = { userId, assetClass, mode: 'paper' };
      // Valued inside the reset's transaction, instruments too: nothing waits outside it meanwhile
      // (equity does not depend on the working orders, which only reserve buying power).
      const equityOf = async (tx: Tx, row: SimAccountRow) => accountFrom(key, row, await pricedPositions(await listPositionsWithPrices(tx, key), tx, (found) => readInstrument(tx, found)), []).equity;
      const { account, canceled, events } = await db.transaction((tx) => resetInBooks(tx, { key, opening: opening(assetClass), at: clock.now(), equityOf }));
      hub.emit(events);
      return { account: await accountOf(key, account), canceledOrders: canceled };
    },
    setPrice,
    setOutage: ({ assetClass, down: isDown, by }) => outages.set({ assetClass, down: isDown, by: by ?? instanceId }),
    isDown: (assetClass) => outages.isDown(assetClass),
    outages: () => outages.all(),
    priceOf: async ({ assetClass, symbol }) => (await quoteOf(db, await instrumentOf(assetClass, symbol))).price.toFixed(),
    accountEquities: async (only) => {
      // A few dozen held symbols read with their stored prices, each priced as a trade would be,
      // and every account's equity at the stored prices, in one statement: the answer when every
      // held symbol is registered and priced by its stored price (an operator's or the walk's),
      // else the equities are read again at the prices found.
      const stored = await listEquitiesAtStoredPrices(db, only);
      const quotes = await Promise.all(
        stored.held.map(async ({ assetClass, symbol, price }) => {
          const instrument = await findInstrument({ assetClass, symbol });
          return instrument && { asset_class: assetClass, symbol, quote: await quoteFrom(db, instrument, price) };
        }),
      );
      if (quotes.every((quoted) => quoted && (quoted.quote.source === 'admin' || quoted.quote.source === 'tick'))) return stored.equities;
      const prices = quotes.filter((quoted) => quoted !== undefined).map(({ asset_class, symbol, quote }) => ({ asset_class, symbol, price: quote.price.toFixed() }));
      return listAccountEquities(db, { prices, only });
    },
    tick,
    matchResting: () => matchResting(),
    expireDayOrders,
    runLeased: () => loop.runOnce(),
    holdsLease: () => loop.holding(),
    onEvent: (listener) => hub.onEvent(listener),
    onPrice,
    idle,
    start: () => {
      if (tickIntervalMs > 0) {
        loop.start();
        return;
      }
      // Walk off: no loop. One matching round at start still finishes what a crash interrupted
      // (an accepted order whose first match never ran); fills are safe in any instance. The
      // orders on the books wait for their market's open.
      track(matchResting());
      if (bell) track(bell.rearm());
    },
    stop: async () => {
      bell?.stop();
      await loop.stop();
      await idle();
      outages.close();
    },
  };
};
