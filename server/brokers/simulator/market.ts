// The simulated market: the leased loop's rounds over every account's books (a step of the
// seeded price walk, a matching round of the resting orders at the current prices, the expiry of
// day orders whose session has closed) and an operator's price, which matches its symbol at once.
// Every price change goes to this instance's price listeners.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import { ExactDecimal } from '../../decimal.ts';
import { expireInBooks, matchAccountInBooks, matchInBooks, observationFor, wouldAct } from './books-matching.ts';
import type { EventHub } from './events.ts';
import { intoBand, type ExchangeRules } from './exchange-rules.ts';
import type { Outages } from './outage.ts';
import { quoteOf, tickSizeOf, walkStep, type TPriceSource } from './prices.ts';
import { listExpiredOrders, listLiveSymbols, listWorkingOrders, type SimOrderRow } from './queries.ts';
import { saveAdminPrice, saveTickPrice } from './price-queries.ts';

export interface PriceUpdate {
  assetClass: TAssetClass;
  symbol: string;
  price: string;
  source: TPriceSource;
  at: string;
}

export interface MarketDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  hub: EventHub;
  outages: Outages;
  /** The asset classes whose broker is not down. */
  upClasses: () => TAssetClass[];
  findInstrument: (key: { assetClass: TAssetClass; symbol: string }) => Promise<InstrumentRow | undefined>;
  /** The instrument of a symbol; an unknown one is INVALID_SYMBOL. */
  instrumentOf: (assetClass: TAssetClass, symbol: string) => Promise<InstrumentRow>;
  liquidityLotsPerTick: number;
  /** The walk's step: its standard deviation, as a fraction of the price. */
  volatility: Decimal;
  /** The walk's seeded random numbers. */
  random: () => number;
  /** When each market trades, and a KRX stock's band. */
  rules: ExchangeRules;
}

/** Accounts matched at once in one round (each its own transaction, under its own lock). */
const MATCH_CONCURRENCY = 4;

export const createMarket = ({ db, clock, logger, hub, outages, upClasses, findInstrument, instrumentOf, liquidityLotsPerTick, volatility, random, rules }: MarketDeps) => {
  const priceListeners = new Set<(update: PriceUpdate) => void>();

  const publishPrice = (update: PriceUpdate) => {
    for (const listener of priceListeners) {
      try {
        listener(update);
      } catch (error) {
        logger.error({ err: error }, 'price listener failed');
      }
    }
  };

  /**
   * One observation of the current price (read now unless the caller has just read it) applied
   * to these orders, all of one symbol: the orders it acts on, an account's together in one
   * transaction (in the order listed). An account whose transaction fails has its orders tried
   * again one by one, so one order that cannot be matched holds up no other. Nothing while the
   * market is closed: what rests waits for the first round after the open.
   */
  const matchOrders = async (instrument: InstrumentRow, orders: readonly SimOrderRow[], observed?: Decimal) => {
    if (orders.length === 0) return;
    const market = await rules.stateOf(instrument, clock.now());
    if (!market.open) return;
    const price = observed ?? (await quoteOf(db, instrument)).price;
    const observation = observationFor(instrument, price, liquidityLotsPerTick, market);
    const byAccount = new Map<string, SimOrderRow[]>();
    for (const order of orders) {
      if (!wouldAct(order, observation)) continue;
      const key = `${order.userId}\u0000${order.assetClass}\u0000${order.mode}`;
      const group = byAccount.get(key);
      if (group) group.push(order);
      else byAccount.set(key, [order]);
    }
    const matchEach = async (group: readonly SimOrderRow[]) => {
      for (const order of group) {
        try {
          hub.emit(await db.transaction((tx) => matchInBooks(tx, { order, instrument, price, liquidityLotsPerTick, market, at: clock.now() })));
        } catch (error) {
          logger.error({ err: error, broker_order_id: order.id }, 'matching an order failed');
        }
      }
    };
    const matchAccount = async (group: readonly SimOrderRow[]) => {
      try {
        hub.emit(await db.transaction((tx) => matchAccountInBooks(tx, { orders: group, instrument, price, liquidityLotsPerTick, market, at: clock.now() })));
      } catch (error) {
        if (group.length === 1) logger.error({ err: error, broker_order_id: group[0]!.id }, 'matching an order failed');
        else await matchEach(group);
      }
    };
    // Accounts lock apart: a few at once keep the database busy while one waits on its commit.
    const groups = [...byAccount.values()];
    let next = 0;
    const worker = async () => {
      while (next < groups.length) await matchAccount(groups[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(MATCH_CONCURRENCY, groups.length) }, worker));
  };

  const matchSymbol = async (assetClass: TAssetClass, symbol: string) => {
    if (outages.isDown(assetClass)) return;
    const instrument = await findInstrument({ assetClass, symbol });
    if (instrument) await matchOrders(instrument, await listWorkingOrders(db, { assetClasses: [assetClass], symbol }));
  };

  /** The asset classes whose broker is up and whose market trades now. */
  const tradingClasses = () => {
    const at = clock.now();
    return upClasses().filter((assetClass) => rules.isOpen(assetClass, at));
  };

  /** A matching round of the working orders of every market that trades now (of `among` only, when given). */
  const matchResting = async (among?: readonly TAssetClass[]) => {
    const bySymbol = new Map<string, SimOrderRow[]>();
    const assetClasses = tradingClasses().filter((assetClass) => !among || among.includes(assetClass));
    for (const order of await listWorkingOrders(db, { assetClasses })) {
      const key = `${order.assetClass}\u0000${order.symbol}`;
      const group = bySymbol.get(key);
      if (group) group.push(order);
      else bySymbol.set(key, [order]);
    }
    for (const orders of bySymbol.values()) {
      const { assetClass, symbol } = orders[0]!;
      const instrument = await findInstrument({ assetClass, symbol });
      if (instrument) await matchOrders(instrument, orders);
    }
  };

  /** A walk step of every symbol with working orders or positions whose market trades now, then a matching round. */
  const tick = async () => {
    for (const { assetClass, symbol } of await listLiveSymbols(db, tradingClasses())) {
      const instrument = await findInstrument({ assetClass, symbol });
      if (!instrument) continue;
      const quote = await quoteOf(db, instrument);
      // An operator's price holds until the operator clears it: the walk leaves it alone.
      if (quote.source === 'admin') continue;
      const at = clock.now();
      // A KRX stock walks inside its band, and stops at its edge as a stock at its limit does.
      const { band } = await rules.stateOf(instrument, at);
      const price = intoBand(walkStep({ price: intoBand(quote.price, band), tickSize: tickSizeOf(instrument), volatility, random }), band).toFixed();
      await saveTickPrice(db, { assetClass, symbol, price, at });
      publishPrice({ assetClass, symbol, price, source: 'tick', at: at.toISOString() });
    }
    await matchResting();
  };

  const expireDayOrders = async () => {
    const now = clock.now();
    let expired = 0;
    for (const order of await listExpiredOrders(db, { now, assetClasses: upClasses() })) {
      try {
        const events = await db.transaction((tx) => expireInBooks(tx, { order, at: now }));
        hub.emit(events);
        if (events.some((event) => event.type === 'expired' && event.broker_order_id === order.id)) expired += 1;
      } catch (error) {
        logger.error({ err: error, broker_order_id: order.id }, 'expiring an order failed');
      }
    }
    return expired;
  };

  /**
   * Sets an operator's price (null clears it) and matches that symbol's resting orders at once,
   * or, while its market is closed, at the first round after the open, which starts from it.
   */
  const setPrice = async ({ assetClass, symbol, price }: { assetClass: TAssetClass; symbol: string; price: string | null }): Promise<PriceUpdate> => {
    const instrument = await instrumentOf(assetClass, symbol);
    let value: Decimal | null = null;
    if (price !== null) {
      let parsed: Decimal | undefined;
      try {
        parsed = new ExactDecimal(price);
      } catch {
        // not a number: refused below
      }
      if (!parsed?.isFinite() || parsed.lte(0)) throw new AppError('VALIDATION_ERROR', `price must be a positive decimal, got ${price}`, { errors: [{ path: 'price', message: 'must be greater than 0' }] });
      value = parsed;
    }
    const at = clock.now();
    // A KRX stock trades nowhere outside its band (the next session's while closed): a price
    // beyond it is set at the edge, as a stock pushed that far sits at its limit.
    const saved = value && intoBand(value, (await rules.stateOf(instrument, at)).band).toFixed();
    await saveAdminPrice(db, { assetClass, symbol, price: saved, at });
    const quote = await quoteOf(db, instrument);
    const update: PriceUpdate = { assetClass, symbol, price: quote.price.toFixed(), source: quote.source, at: at.toISOString() };
    publishPrice(update);
    await matchSymbol(assetClass, symbol);
    return update;
  };

  /** Price changes made in this instance (walk ticks and operator prices). */
  const onPrice = (listener: (update: PriceUpdate) => void) => {
    priceListeners.add(listener);
    return () => priceListeners.delete(listener);
  };

  return { matchOrders, matchResting, tick, expireDayOrders, setPrice, onPrice };
};
