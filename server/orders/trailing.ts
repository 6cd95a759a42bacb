// What the order service keeps of a trailing stop (DESIGN §6 "Advanced orders"): its trail, as the
// request gave it, in the order's metadata (`trail_percent` or `trail_price`); its current stop in
// `stop_price` and its mark in `metadata.hwm`, as its broker reports them (with the acceptance,
// and on each `replaced` event the broker makes as the stop follows the price). Pure.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TPlaceOrderRequest, TReplaceOrderRequest } from '../../contracts/orders.ts';
import type { Decimal } from 'decimal.js';
import type { TOrderSide } from '../brokers/fills.ts';
import { trailStopOf, type TTrail } from '../brokers/matching.ts';
import type { BrokerOrder } from '../brokers/types.ts';
import type { InstrumentRow, OrderRow } from '../db/schema/index.ts';
import { ExactDecimal } from '../decimal.ts';
import type { TTrailRequest } from './attempt.ts';
import { gridTickAt } from './risk/price-grid.ts';

export const TRAIL_PERCENT = 'trail_percent';
export const TRAIL_PRICE = 'trail_price';
export const HWM = 'hwm';

/** Where a trail is given: an order's own fields, a replace's, or a bracket's stop leg. */
type TrailFields = Pick<TPlaceOrderRequest, 'trail_percent' | 'trail_price'>;

/** The trail a request or a replace asks for, as the gates and the broker take it; null when it names none. */
export const trailRequestOf = ({ trail_percent, trail_price }: TrailFields | TReplaceOrderRequest): TTrailRequest | null => {
  if (trail_percent != null) return { percent: String(trail_percent) };
  if (trail_price != null) return { price: String(trail_price) };
  return null;
};

/**
 * The stop a trailing stop would start at from `price` (its broker sets the real one from its own
 * price at acceptance): what the risk gate and the preview judge it as, on the instrument's grid.
 */
export const firstStopOf = ({ side, price, trail, instrument }: { side: TOrderSide; price: Decimal; trail: TTrailRequest; instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'> }): Decimal =>
  trailStopOf({
    side,
    mark: price,
    trail: trailOf(trail),
    tickSize: gridTickAt({ assetClass: instrument.assetClass, tickRule: instrument.tickRule, tickSize: new ExactDecimal(instrument.tickSize) }),
  });

/** A trail as decimals. */
export const trailOf = (trail: TTrailRequest): TTrail => ('percent' in trail ? { percent: new ExactDecimal(trail.percent) } : { price: new ExactDecimal(trail.price) });

/** The trail as the order's metadata keeps it (and its broker request carries it); empty for any other order. */
export const trailMetadataOf = (fields: TrailFields | TReplaceOrderRequest): { trail_percent?: number; trail_price?: number } => {
  if (fields.trail_percent != null) return { [TRAIL_PERCENT]: fields.trail_percent };
  if (fields.trail_price != null) return { [TRAIL_PRICE]: fields.trail_price };
  return {};
};

/** A replaced trailing stop's metadata: the new trail in place of the old one, whichever kind it was. */
export const retrailedMetadata = (metadata: Record<string, unknown>, change: TReplaceOrderRequest): Record<string, unknown> => {
  const trail = trailMetadataOf(change);
  if (Object.keys(trail).length === 0) return metadata;
  const { [TRAIL_PERCENT]: _percent, [TRAIL_PRICE]: _price, ...rest } = metadata;
  return { ...rest, ...trail };
};

const markOf = (value: unknown): number | undefined => (typeof value === 'string' || typeof value === 'number' ? Number(value) : undefined);

/**
 * A trailing stop's stop and mark as its broker accepted it: the stop the trail set from the
 * price at acceptance. Nothing for any other order (its stop is the one it was sent).
 */
export const acceptedTrail = (intent: Pick<OrderRow, 'orderType' | 'metadata'>, accepted: BrokerOrder): Pick<OrderRow, 'stopPrice' | 'metadata'> | undefined => {
  if (intent.orderType !== 'trailing_stop') return undefined;
  const hwm = markOf(accepted.metadata[HWM]);
  return { stopPrice: accepted.stopPrice, metadata: hwm === undefined ? intent.metadata : { ...intent.metadata, [HWM]: hwm } };
};

/**
 * A broker's order (a bracket's leg it made) as our record keeps it: a broker reads a trailing
 * stop as a stop with its trail and mark in metadata (decimal text); our row says trailing_stop,
 * with the trail and the mark as numbers, as an order placed through us shows them.
 */
export const recordedTypeOf = (order: Pick<BrokerOrder, 'orderType' | 'metadata'>): { orderType: OrderRow['orderType']; metadata: Record<string, unknown> } => {
  const { metadata } = order;
  const trail = markOf(metadata[TRAIL_PERCENT]) ?? markOf(metadata[TRAIL_PRICE]);
  const hwm = markOf(metadata[HWM]);
  if (order.orderType !== 'stop' || trail === undefined || hwm === undefined) return { orderType: order.orderType, metadata };
  const kept = metadata[TRAIL_PERCENT] !== undefined ? { [TRAIL_PERCENT]: trail } : { [TRAIL_PRICE]: trail };
  return { orderType: 'trailing_stop', metadata: { ...metadata, ...kept, [HWM]: hwm } };
};

/** The stop a broker's `replaced` event moved a trailing stop to; nothing when the event says none. */
export const movedStopOf = (event: Pick<TBrokerEvent, 'stop_price'>): Pick<OrderRow, 'stopPrice'> | undefined => (event.stop_price === undefined ? undefined : { stopPrice: event.stop_price });

/** The mark a broker's `replaced` event gives a trailing stop, as its metadata keeps it; nothing when the event says none. */
export const movedMarkOf = (event: Pick<TBrokerEvent, 'hwm'>): Record<string, number> | undefined => {
  const hwm = markOf(event.hwm);
  return hwm === undefined ? undefined : { [HWM]: hwm };
};
