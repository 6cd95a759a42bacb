// The KRX daily price limit of ±30 % around the base price (the previous session's close); the
// tick grid is orders/risk/price-grid.ts's. Pure; prices in KRW.
import type { Decimal } from 'decimal.js';
import { type TTickSizeAt } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import { roundToTick } from '../instruments/ticks.ts';

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
