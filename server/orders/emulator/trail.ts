// A trigger on the broker's quotes, with the simulator's math (server/brokers/matching.ts): a
// trailing stop's new mark (a sell's high, a buy's low) moves the stop on the tick grid, never
// looser; a price that reaches the stop (a buy's at or above it, a sell's at or below) fires it,
// a trailing one's or a fixed one's (a stop, a stop-limit). Pure.
import type { Decimal } from 'decimal.js';
import { EMULATED_CHILD_SUFFIX } from '../../../contracts/orders.ts';
import { followTrail, reachesStop, type TrailingState } from '../../brokers/matching.ts';
import type { TTickSizeAt } from '../../brokers/fills.ts';
import type { InstrumentRow, OrderTriggerRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import { gridTickAt } from '../risk/price-grid.ts';

export type TTriggerStep =
  /** The price moved the mark and the stop. */
  | { kind: 'moved'; hwm: Decimal; stopPrice: Decimal }
  /** The price reached the stop: the child goes to the broker (a fixed stop has no mark). */
  | { kind: 'fired'; hwm: Decimal | null; stopPrice: Decimal }
  | { kind: 'none' };

export const trailingStateOfTrigger = (row: Pick<OrderTriggerRow, 'side' | 'trailPercent' | 'trailPrice' | 'hwm' | 'stopPrice'>): TrailingState => ({
  side: row.side,
  trail: row.trailPercent !== null ? { percent: new ExactDecimal(row.trailPercent) } : { price: new ExactDecimal(row.trailPrice!) },
  // A trailing trigger is armed with its mark (arm.ts); the price at the stop stands in otherwise.
  hwm: new ExactDecimal(row.hwm ?? row.stopPrice),
  stopPrice: new ExactDecimal(row.stopPrice),
});

export const tickOf = (instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'>): TTickSizeAt =>
  gridTickAt({ assetClass: instrument.assetClass, tickRule: instrument.tickRule, tickSize: new ExactDecimal(instrument.tickSize) });

/** A trigger as its watch holds it: a trailing stop's moving state, or a fixed stop. */
export type TTriggerState =
  | { kind: 'trailing'; trailing: TrailingState }
  /** A fixed level: a stop's (reached from the other side: a sell's at or below it), or an OCO take-profit's limit (a sell's at or above it). */
  | { kind: 'fixed'; side: OrderTriggerRow['side']; stopPrice: Decimal; reached: 'as_stop' | 'as_limit' };

export const triggerStateOf = (row: Pick<OrderTriggerRow, 'orderType' | 'side' | 'trailPercent' | 'trailPrice' | 'hwm' | 'stopPrice'>): TTriggerState =>
  row.orderType === 'trailing_stop'
    ? { kind: 'trailing', trailing: trailingStateOfTrigger(row) }
    : { kind: 'fixed', side: row.side, stopPrice: new ExactDecimal(row.stopPrice), reached: row.orderType === 'limit' ? 'as_limit' : 'as_stop' };

/** Whether a price reaches a limit: a buy's at or below it, a sell's at or above it. */
const reachesLimit = (side: OrderTriggerRow['side'], limit: Decimal, price: Decimal) => (side === 'buy' ? price.lte(limit) : price.gte(limit));

/** What one quote does to a trigger: a fixed level only fires; a trailing stop may move. */
export const triggerStepOf = (state: TTriggerState, price: Decimal, tick: TTickSizeAt): TTriggerStep => {
  if (state.kind === 'trailing') return stepOf(state.trailing, price, tick);
  const reached = state.reached === 'as_limit' ? reachesLimit(state.side, state.stopPrice, price) : reachesStop(state.side, state.stopPrice, price);
  return reached ? { kind: 'fired', hwm: null, stopPrice: state.stopPrice } : { kind: 'none' };
};

/** What one quote does to a trailing stop: the stop is checked before the mark moves (a price at the stop fires it). */
export const stepOf = (state: TrailingState, price: Decimal, tick: TTickSizeAt): TTriggerStep => {
  if (reachesStop(state.side, state.stopPrice, price)) return { kind: 'fired', hwm: state.hwm, stopPrice: state.stopPrice };
  const moved = followTrail(state, price, tick);
  return moved ? { kind: 'moved', ...moved } : { kind: 'none' };
};

/** The child's client order id: the parent's with `.tr`, shortened (with a hash of the whole) to fit our 64 characters. */
export const childClientOrderIdOf = (parent: string, hash: (text: string) => string): string => {
  const suffix = EMULATED_CHILD_SUFFIX;
  if (parent.length + suffix.length <= 64) return `${parent}${suffix}`;
  return `${parent.slice(0, 64 - suffix.length - 13)}.${hash(parent).slice(0, 12)}${suffix}`;
};
