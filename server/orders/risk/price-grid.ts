// The tick grid an order price must sit on, for every asset class (DESIGN §6 "Rules a real broker
// enforces"): US stocks by SEC Rule 612, crypto by the instrument's tick, KRX stocks by the band
// table. Pure; one home for the rule, asked by the risk gate and by a replace.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { TTickSizeAt } from '../../brokers/fills.ts';
import { ExactDecimal } from '../../decimal.ts';
import { krxTickSize, roundToTick } from '../../instruments/ticks.ts';

/** What decides an instrument's grid: its asset class, and its tick or the KRX band table. */
export interface GridInstrument {
  assetClass: TAssetClass;
  tickRule: 'fixed' | 'krx_bands';
  tickSize: Decimal;
}

const CENT = new ExactDecimal('0.01');
const SUB_PENNY = new ExactDecimal('0.0001');
const ONE_DOLLAR = new ExactDecimal(1);

/**
 * SEC Rule 612 (Regulation NMS, the sub-penny rule): no order priced in increments under $0.01 at
 * or above $1.00; below $1.00 the increment is $0.0001. Exchanges take nothing finer, whatever the
 * instrument's own tick says.
 */
export const usTickSize: TTickSizeAt = (price) => (new ExactDecimal(price).gte(ONE_DOLLAR) ? CENT : SUB_PENNY);

/** The tick in force at a price. A KRX instrument with a fixed tick (an ETF's 5 won) keeps it. */
export const gridTickAt = ({ assetClass, tickRule, tickSize }: GridInstrument): TTickSizeAt => {
  if (tickRule === 'krx_bands') return krxTickSize;
  if (assetClass === 'us_equity') return usTickSize;
  return () => tickSize;
};

const GRID_NAME: Record<TAssetClass, string> = { us_equity: 'US (SEC Rule 612)', crypto: "instrument's", kr_equity: 'KRX' };

export interface OffGrid {
  /** The tick in force at the price. */
  tick: Decimal;
  /** The valid prices either side, lowest first (no price of zero or less). */
  nearest: Decimal[];
}

/**
 * How a price misses the grid, or undefined when it is on it. The neighbours are on the grid of
 * their own bands too: one below falls on a multiple of a coarser tick than its band needs, and
 * one above can at most reach the next band's edge, which the coarser tick divides (KRX bands and
 * the US $1 edge alike).
 */
export const offTickGrid = (price: Decimal, tickAt: TTickSizeAt): OffGrid | undefined => {
  const tick = tickAt(price);
  if (new ExactDecimal(price).mod(tick).isZero()) return undefined;
  const below = roundToTick(price, tick, 'down');
  const above = roundToTick(price, tick, 'up');
  return { tick, nearest: below.gt(0) ? [below, above] : [above] };
};

export interface NamedPrice {
  label: string;
  price: Decimal;
}

/**
 * Why the first off-grid price is refused, or undefined when every price is on the grid. The
 * caller's prices are never rounded for them: an off-grid price is refused with its neighbours.
 */
export const offGridReason = (instrument: GridInstrument, prices: readonly NamedPrice[]): string | undefined => {
  const tickAt = gridTickAt(instrument);
  for (const { label, price } of prices) {
    const off = offTickGrid(price, tickAt);
    if (!off) continue;
    const nearest = off.nearest.map((valid) => valid.toFixed()).join(' or ');
    return `The ${label} ${price.toFixed()} is not on the ${GRID_NAME[instrument.assetClass]} tick grid (tick ${off.tick.toFixed()} at that price); the nearest valid prices are ${nearest}`;
  }
  return undefined;
};

/**
 * Why a trailing stop's trail, as a price distance, is refused: it must be a whole number of the
 * ticks in force at the price the stop starts from, or the stop it sets would miss the grid.
 */
export const offGridTrailReason = (instrument: GridInstrument, trail: Decimal, price: Decimal): string | undefined => {
  const tick = gridTickAt(instrument)(price);
  const off = offTickGrid(trail, () => tick);
  if (!off) return undefined;
  const nearest = off.nearest.map((valid) => valid.toFixed()).join(' or ');
  return `The trail price ${trail.toFixed()} is not a whole number of ticks (tick ${tick.toFixed()} at the price ${price.toFixed()}); the nearest valid trails are ${nearest}`;
};
