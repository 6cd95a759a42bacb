// A trigger's trail on the broker's quotes, with the simulator's math (server/brokers/matching.ts):
// a new mark (a sell's high, a buy's low) moves the stop on the tick grid, never looser; a price
// that reaches the stop fires it. Pure.
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
  /** The price reached the stop: the child goes to the broker. */
  | { kind: 'fired'; hwm: Decimal; stopPrice: Decimal }
  | { kind: 'none' };

export const trailingStateOfTrigger = (row: Pick<OrderTriggerRow, 'side' | 'trailPercent' | 'trailPrice' | 'hwm' | 'stopPrice'>): TrailingState => ({
  side: row.side,
  trail: row.trailPercent !== null ? { percent: new ExactDecimal(row.trailPercent) } : { price: new ExactDecimal(row.trailPrice!) },
  hwm: new ExactDecimal(row.hwm),
  stopPrice: new ExactDecimal(row.stopPrice),
});

export const tickOf = (instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'>): TTickSizeAt =>
  gridTickAt({ assetClass: instrument.assetClass, tickRule: instrument.tickRule, tickSize: new ExactDecimal(instrument.tickSize) });

/** What one quote does to a trigger: the stop is checked before the mark moves (a price at the stop fires it). */
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
