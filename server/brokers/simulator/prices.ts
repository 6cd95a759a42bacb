// The prices the simulator trades at, in their order of precedence, and one step of its seeded
// random walk, kept on the instrument's tick grid.
import type { Decimal } from 'decimal.js';
import type { Queryable } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { lastClose } from '../../marketdata/queries.ts';
import { krxTickSize } from '../../instruments/ticks.ts';
import { type TTickSizeAt } from '../fills.ts';
import { ExactDecimal } from '../../decimal.ts';
import { findPrice } from './price-queries.ts';
import type { SimPriceRow } from './queries.ts';

export type TPriceSource = 'admin' | 'tick' | 'close' | 'reference';

export interface Quote {
  price: Decimal;
  source: TPriceSource;
}

/** An operator's price, else the walk's latest tick, else the last daily close, else the reference price. */
export const quoteOf = async (db: Queryable, instrument: Pick<InstrumentRow, 'assetClass' | 'symbol' | 'referencePrice'>): Promise<Quote> =>
  quoteFrom(db, instrument, await findPrice(db, { assetClass: instrument.assetClass, symbol: instrument.symbol }));

/** quoteOf, with the instrument's stored prices already read (or known to be missing). */
export const quoteFrom = async (db: Queryable, instrument: Pick<InstrumentRow, 'assetClass' | 'symbol' | 'referencePrice'>, stored: SimPriceRow | null | undefined): Promise<Quote> => {
  const key = { assetClass: instrument.assetClass, symbol: instrument.symbol };
  if (stored?.adminPrice != null) return { price: new ExactDecimal(stored.adminPrice), source: 'admin' };
  if (stored?.tickPrice != null) return { price: new ExactDecimal(stored.tickPrice), source: 'tick' };
  const close = await lastClose(db, key);
  if (close !== undefined) return { price: new ExactDecimal(close), source: 'close' };
  return { price: new ExactDecimal(instrument.referencePrice), source: 'reference' };
};

/** The instrument's price increment: fixed, or the KRX band table taken at the price. */
export const tickSizeOf = (instrument: Pick<InstrumentRow, 'tickRule' | 'tickSize'>): Decimal | TTickSizeAt =>
  instrument.tickRule === 'krx_bands' ? (price: Decimal) => krxTickSize(price) : new ExactDecimal(instrument.tickSize);

/** mulberry32: a small, fast, seedable generator of uniform numbers in [0, 1). */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** A standard normal draw (Box–Muller). */
const gaussian = (random: () => number): number => {
  const u = Math.max(random(), Number.EPSILON);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
};

/**
 * The next price of a geometric random walk with `volatility` per step, on the tick grid. The
 * grid is reached by stochastic rounding (up with the probability of the fraction of a tick), so
 * a step smaller than one tick still moves the price now and then and the walk keeps its mean: a
 * KRX stock at 96,500 KRW has a 100 KRW tick, a whole 10 basis points.
 */
export const walkStep = ({ price, tickSize, volatility, random }: { price: Decimal; tickSize: Decimal | TTickSizeAt; volatility: Decimal; random: () => number }): Decimal => {
  const shock = new ExactDecimal(gaussian(random).toFixed(12));
  const moved = new ExactDecimal(price).times(ExactDecimal.max(new ExactDecimal(1).plus(volatility.times(shock)), '0.5'));
  const tick = new ExactDecimal(typeof tickSize === 'function' ? tickSize(moved) : tickSize);
  const steps = moved.dividedBy(tick);
  const floor = steps.floor();
  const rounded = steps.minus(floor).gt(random()) ? floor.plus(1) : floor;
  // Never below one tick: a price of zero could not be traded or walked on.
  return ExactDecimal.max(rounded, 1).times(tick);
};

