// Position sizing per position (DESIGN §6): what a position risks with everything that works on
// it, so stacking small buys cannot pass what one buy may not. risk = Σ over the held quantity
// and every working buy of qty × (price − its protective stop): the current price for what is
// held, the entry for a buy; the stop is a working sell stop covering that quantity (what is
// held) or the buy's bracket stop leg, else price × (1 − the default stop %).
import type { Decimal } from 'decimal.js';
import { remainingOf, reservePriceOf, type PositionView, type WorkingOrder } from '../../brokers/funds.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { TTrail } from '../../brokers/matching.ts';

/** What a position is and what works on it (funds.ts' PositionView). */
export type PositionExposure = PositionView;

export interface RiskPart {
  amount: Decimal;
  /** How the amount was reached, for a refusal's message. */
  formula: string;
}

const ZERO = new ExactDecimal(0);

const percentOf = (amount: Decimal, pct: Decimal): Decimal => new ExactDecimal(amount).times(pct).dividedBy(100);

/**
 * qty × (entry − stop) with a stop, at least zero: a stop at or above the price sells at its next
 * move, so it bounds the loss at about nothing (DESIGN's formula, whose negative values mean
 * nothing); without one, qty × entry × the default stop %.
 */
export const riskOf = (qty: Decimal, entry: Decimal, stop: Decimal | undefined, defaultStopPct: Decimal): RiskPart => {
  const exact = new ExactDecimal(qty);
  if (stop) return { amount: exact.times(ExactDecimal.max(entry.minus(stop), 0)), formula: `${exact.toFixed()} × (${entry.toFixed()} - stop ${stop.toFixed()})` };
  return { amount: percentOf(exact.times(entry), defaultStopPct), formula: `${exact.toFixed()} × ${entry.toFixed()} × default stop ${defaultStopPct.toFixed()} %` };
};

const isSellStop = (order: WorkingOrder) => order.side === 'sell' && order.stopPrice !== null && order.orderType !== 'limit';

/** The held quantity's risk: covered by the working sell stops (the lowest, the widest, first), the rest at the default stop. */
const heldRisk = ({ heldQty, currentPrice, working }: PositionExposure, symbol: string, defaultStopPct: Decimal): Decimal => {
  let uncovered = new ExactDecimal(heldQty);
  let amount = ZERO;
  const stops = working
    .filter((order) => order.symbol === symbol && isSellStop(order))
    .map((order) => ({ qty: remainingOf(order), stop: new ExactDecimal(order.stopPrice!) }))
    .sort((a, b) => a.stop.comparedTo(b.stop));
  for (const { qty, stop } of stops) {
    if (uncovered.lte(0)) break;
    const covered = ExactDecimal.min(qty, uncovered);
    amount = amount.plus(riskOf(covered, currentPrice, stop, defaultStopPct).amount);
    uncovered = uncovered.minus(covered);
  }
  return uncovered.gt(0) ? amount.plus(riskOf(uncovered, currentPrice, undefined, defaultStopPct).amount) : amount;
};

/** Where a trailing stop leg starts below its entry: the bound sizing judges it by (off the grid: no price is sent). */
export const trailedBelow = (entry: Decimal, trail: TTrail): Decimal =>
  'percent' in trail ? entry.times(new ExactDecimal(100).minus(trail.percent)).dividedBy(100) : entry.minus(trail.price);

/** The stop a buy's bracket protects it with: its stop_loss, or its trailing leg's first stop from the entry; none without a stop leg. */
export const bracketStopOf = (bracket: { stopLoss?: Decimal | undefined; trail?: TTrail | null | undefined } | null | undefined, entry: Decimal): Decimal | undefined => {
  if (bracket?.stopLoss) return bracket.stopLoss;
  return bracket?.trail ? trailedBelow(entry, bracket.trail) : undefined;
};

/** A bracket's stop leg as a price: its stop_loss, or its trail from the entry; none for an OTO with only a take-profit. */
const protectiveStopOf = (bracket: NonNullable<WorkingOrder['bracket']>, entry: Decimal): Decimal | undefined => {
  if (bracket.stop_loss !== null) return new ExactDecimal(bracket.stop_loss);
  if (bracket.trail_percent !== undefined) return trailedBelow(entry, { percent: new ExactDecimal(bracket.trail_percent) });
  if (bracket.trail_price !== undefined) return trailedBelow(entry, { price: new ExactDecimal(bracket.trail_price) });
  return undefined;
};

/** The working buys' risk: each at its entry (its reserve price), against its bracket's stop leg. */
const workingBuysRisk = ({ currentPrice, working }: PositionExposure, symbol: string, defaultStopPct: Decimal): Decimal =>
  working
    .filter((order) => order.symbol === symbol && order.side === 'buy')
    .reduce((sum, order) => {
      const remaining = remainingOf(order);
      if (remaining.lte(0)) return sum;
      const entry = reservePriceOf(order, currentPrice)!;
      const stop = order.bracket ? protectiveStopOf(order.bracket, entry) : undefined;
      return sum.plus(riskOf(remaining, entry, stop, defaultStopPct).amount);
    }, ZERO);

/** What the position risks now: its held quantity and its working buys. */
export const positionRisk = (exposure: PositionExposure, symbol: string, defaultStopPct: Decimal): Decimal =>
  heldRisk(exposure, symbol, defaultStopPct).plus(workingBuysRisk(exposure, symbol, defaultStopPct));
