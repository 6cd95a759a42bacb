// KRX order-price rules: the daily price limit of ±30 % around the base price (the previous
// close) and the tick grid an order price must sit on. Pure; prices in KRW.
import type { Decimal } from 'decimal.js';
import { type TTickSizeAt } from '../../brokers/fills.ts';
import { ExactDecimal } from '../../decimal.ts';
import { roundToTick } from '../../instruments/ticks.ts';

export const KRX_DAILY_LIMIT_RATE = new ExactDecimal('0.3');

export interface PriceLimits {
  lower: Decimal;
  upper: Decimal;
}

/**
 * The day's lower and upper price limits, by the exchange's own arithmetic (KRX, "Daily Price
 * Limit"): the width is 30 % of the base price cut down to the base price's tick; the upper limit
 * is base + width cut down to the tick of its own band. The lower limit is base − width raised to
 * its own tick, so the band never widens past 30 % (for a base on the grid it is on the grid
 * already: every band's tick divides the ticks of the bands above it).
 */
export const krxPriceLimits = (basePrice: Decimal, tickAt: TTickSizeAt): PriceLimits => {
  const base = new ExactDecimal(basePrice);
  const width = roundToTick(base.times(KRX_DAILY_LIMIT_RATE), tickAt(base), 'down');
  const upper = base.plus(width);
  const lower = base.minus(width);
  return {
    lower: roundToTick(lower, tickAt(lower), 'up'),
    upper: roundToTick(upper, tickAt(upper), 'down'),
  };
};

export interface OffGrid {
  /** The tick in force at the price. */
  tick: Decimal;
  /** The valid prices either side, lowest first (no price of zero or less). */
  nearest: Decimal[];
}

/**
 * How a price misses the grid, or undefined when it is on it. The neighbours are on the grid of
 * their own bands too: one below falls on a multiple of a coarser tick than its band needs, and
 * one above can at most reach the next band's edge, which the coarser tick divides.
 */
export const offTickGrid = (price: Decimal, tickAt: TTickSizeAt): OffGrid | undefined => {
  const tick = tickAt(price);
  if (new ExactDecimal(price).mod(tick).isZero()) return undefined;
  const below = roundToTick(price, tick, 'down');
  const above = roundToTick(price, tick, 'up');
  return { tick, nearest: below.gt(0) ? [below, above] : [above] };
};
