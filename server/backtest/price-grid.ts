// The price grid a backtest fills on. Historical (adjusted) prices are not on today's tick grid
// (a split-adjusted 1995 close reads 2.135803), so DESIGN prices a backtest's fill at the bar's
// price ± the profile's slippage, unrounded. The fill model always rounds onto a grid; a grid of
// 10^-P, where P covers the places of every slipped price, is one on which rounding moves nothing.
import type { Decimal } from 'decimal.js';
import type { FeeProfile } from '../brokers/fees.ts';
import { placesOfNumber } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import type { TEngineTick } from './ledger.ts';
import type { Bars } from './types.ts';

/** A tick equal to the price's own last place: rounding onto it leaves the price as it is. */
const ownLastPlace = (price: Decimal): Decimal => new ExactDecimal(1).dividedBy(new ExactDecimal(10).pow(Math.max(0, price.decimalPlaces())));

/**
 * The grid on which every fill of these bars keeps its price exactly: a fixed 10^-P (the scaled
 * ledger's fast path) when every open and close has at most 12 places, else the rule that takes
 * each price's own last place (decimal fills).
 */
export const exactPriceGrid = (bars: Pick<Bars, 'length' | 'open' | 'close'>, profile: FeeProfile): TEngineTick => {
  let places = 0;
  for (let i = 0; i < bars.length; i++) {
    // Fills are at opens, and the close-out at a close.
    const open = placesOfNumber(bars.open[i]!, places);
    const close = placesOfNumber(bars.close[i]!, places);
    if (open < 0 || close < 0) return ownLastPlace;
    places = Math.max(places, open, close);
  }
  return new ExactDecimal(`1e-${places + profile.slippageRate.decimalPlaces()}`);
};
