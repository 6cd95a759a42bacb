// A trailing stop on the simulated broker's books: its trail as a request gives it (checked as a
// broker checks it) and as its row keeps it. The row holds the current stop in stop_price and its
// mark in metadata.hwm (a sell's highest price seen, a buy's lowest), so a restart keeps both.
import type { Decimal } from 'decimal.js';
import type { InstrumentRow, SimBracket } from '../../db/schema/index.ts';
import { MAX_TRAIL_PERCENT, trailStopOf, type BracketSpec, type TrailingState, type TTrail } from '../matching.ts';
import type { BrokerOrderRequest, TTrailText } from '../types.ts';
import { tickSizeOf } from './prices.ts';
import type { SimOrderRow } from './queries.ts';
import { d, rejected, text } from './books.ts';

export const TRAIL_PERCENT = 'trail_percent';
export const TRAIL_PRICE = 'trail_price';
/** The mark the current stop was set from: the highest price seen for a sell, the lowest for a buy. */
export const HWM = 'hwm';

/** A decimal kept in metadata, as a string or a number; undefined when absent. */
const metadataValue = (metadata: Record<string, unknown> | undefined, key: string): string | undefined => {
  const value = metadata?.[key];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : `${typeof value}`;
};

const decimalOf = (name: string, value: string): Decimal => {
  let parsed: Decimal | undefined;
  try {
    parsed = d(value);
  } catch {
    // not a number: refused below
  }
  if (!parsed?.isFinite()) throw rejected(`${name} must be a decimal, got ${value}`);
  return parsed;
};

/** The trail a request asks for, refused as a broker refuses it: exactly one of trail_percent (0 < p ≤ 50) or trail_price (> 0, on the tick grid at `price`). */
const requestedTrail = (metadata: Record<string, unknown> | undefined, instrument: InstrumentRow, price: Decimal): TTrail => {
  const percentText = metadataValue(metadata, TRAIL_PERCENT);
  const priceText = metadataValue(metadata, TRAIL_PRICE);
  if (percentText === undefined && priceText === undefined) throw rejected('a trailing_stop needs trail_percent or trail_price');
  if (percentText !== undefined && priceText !== undefined) throw rejected('a trailing_stop takes one of trail_percent and trail_price, not both');
  if (percentText !== undefined) {
    const percent = decimalOf(TRAIL_PERCENT, percentText);
    if (percent.lte(0) || percent.gt(MAX_TRAIL_PERCENT)) throw rejected(`trail_percent must be more than 0 and at most ${MAX_TRAIL_PERCENT}, got ${percentText}`);
    return { percent };
  }
  const trail = decimalOf(TRAIL_PRICE, priceText!);
  if (trail.lte(0)) throw rejected(`trail_price must be greater than 0, got ${priceText!}`);
  // A KRX stock's tick depends on the price: the trail is judged on the grid where the stop starts.
  const size = tickSizeOf(instrument);
  const tick = typeof size === 'function' ? size(price) : size;
  if (!trail.mod(tick).isZero()) throw rejected(`trail_price ${text(trail)} is off ${instrument.symbol}'s tick grid of ${text(tick)}`);
  return { price: trail };
};

/** A bracket's trailing stop leg's trail, refused as a trailing stop's own. */
export const trailOfRequest = (trail: TTrailText, instrument: InstrumentRow, price: Decimal): TTrail =>
  requestedTrail('percent' in trail ? { [TRAIL_PERCENT]: trail.percent } : { [TRAIL_PRICE]: trail.price }, instrument, price);

/** A bracket as the books keep it on its entry's row (decimal text; a trail in place of a stop_loss). */
export const simBracketOf = (bracket: BracketSpec): SimBracket => ({
  take_profit: bracket.takeProfit && text(bracket.takeProfit),
  stop_loss: bracket.stopLoss && text(bracket.stopLoss),
  stop_loss_limit: bracket.stopLossLimit ? text(bracket.stopLossLimit) : null,
  ...(bracket.trail ? ('percent' in bracket.trail ? { [TRAIL_PERCENT]: text(bracket.trail.percent) } : { [TRAIL_PRICE]: text(bracket.trail.price) }) : {}),
});

/** A bracket as its entry's row keeps it, as the matching reads it. */
export const bracketSpecOf = (bracket: SimBracket): BracketSpec => ({
  takeProfit: bracket.take_profit === null ? null : d(bracket.take_profit),
  stopLoss: bracket.stop_loss === null ? null : d(bracket.stop_loss),
  stopLossLimit: bracket.stop_loss_limit === null ? null : d(bracket.stop_loss_limit),
  trail: bracket.trail_percent !== undefined ? { percent: d(bracket.trail_percent) } : bracket.trail_price !== undefined ? { price: d(bracket.trail_price) } : null,
});

/**
 * A trailing stop's terms at acceptance, the current price its mark: its first stop and the
 * metadata its row keeps (the trail as decimal text, and the mark). A trailing stop's stop is the
 * broker's, set from the trail, so a request that names a stop, a limit, a stop-limit or a
 * bracket is refused; so is a trail on any other order type, which would be silently ignored.
 * Undefined for another order type.
 */
export const checkTrailingRequest = (request: BrokerOrderRequest, instrument: InstrumentRow, price: Decimal): { stopPrice: Decimal; metadata: Record<string, unknown> } | undefined => {
  if (request.orderType !== 'trailing_stop') {
    if (metadataValue(request.metadata, TRAIL_PERCENT) !== undefined || metadataValue(request.metadata, TRAIL_PRICE) !== undefined) {
      throw rejected(`trail_percent and trail_price belong to a trailing_stop, not a ${request.orderType} order`);
    }
    return undefined;
  }
  if (request.limitPrice != null) throw rejected('a trailing_stop takes no limit_price');
  if (request.stopPrice != null) throw rejected('a trailing_stop takes no stop_price: the broker sets it from the trail');
  if (request.bracket) throw rejected('a trailing_stop takes no bracket');
  if (metadataValue(request.metadata, 'stop_limit_price') !== undefined) throw rejected('a trailing_stop takes no stop_limit_price');
  const trail = requestedTrail(request.metadata, instrument, price);
  const stopPrice = trailStopOf({ side: request.side, mark: price, trail, tickSize: tickSizeOf(instrument) });
  if (stopPrice.lte(0)) throw rejected(`the trail leaves no stop above 0 below the price ${text(price)}`);
  const kept = 'percent' in trail ? { [TRAIL_PERCENT]: text(trail.percent) } : { [TRAIL_PRICE]: text(trail.price) };
  return { stopPrice, metadata: { ...request.metadata, ...kept, [HWM]: text(price) } };
};

/**
 * A working trailing stop given a new trail by its owner's replace: its stop is set again from its
 * mark (a looser trail may loosen it: the owner asked), and the row's metadata keeps the new trail
 * in place of the old. The trail is checked as a placement's is.
 */
export const retrail = (row: SimOrderRow, trail: { percent: string } | { price: string }, instrument: InstrumentRow): { stopPrice: Decimal; metadata: Record<string, unknown> } => {
  const state = trailingStateOf(row);
  if (!state) throw rejected(`a ${row.orderType} order takes no trail_percent or trail_price`);
  const asked = 'percent' in trail ? { [TRAIL_PERCENT]: trail.percent } : { [TRAIL_PRICE]: trail.price };
  const next = requestedTrail(asked, instrument, state.hwm);
  const stopPrice = trailStopOf({ side: row.side, mark: state.hwm, trail: next, tickSize: tickSizeOf(instrument) });
  if (stopPrice.lte(0)) throw rejected(`the trail leaves no stop above 0 below the mark ${text(state.hwm)}`);
  const { [TRAIL_PERCENT]: _percent, [TRAIL_PRICE]: _price, ...rest } = row.metadata;
  const kept = 'percent' in next ? { [TRAIL_PERCENT]: text(next.percent) } : { [TRAIL_PRICE]: text(next.price) };
  return { stopPrice, metadata: { ...rest, ...kept } };
};

/** A working trailing stop's trail, mark and stop as its row keeps them; undefined for any other order. */
export const trailingStateOf = (row: SimOrderRow): TrailingState | undefined => {
  if (row.orderType !== 'trailing_stop' || row.stopPrice === null) return undefined;
  const percent = metadataValue(row.metadata, TRAIL_PERCENT);
  const price = metadataValue(row.metadata, TRAIL_PRICE);
  const hwm = metadataValue(row.metadata, HWM);
  if (hwm === undefined || (percent === undefined) === (price === undefined)) return undefined;
  return { side: row.side, trail: percent === undefined ? { price: d(price!) } : { percent: d(percent) }, hwm: d(hwm), stopPrice: d(row.stopPrice) };
};
