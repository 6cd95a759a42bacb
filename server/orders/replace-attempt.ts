// A replace as the gates judge it (DESIGN §6 "Rules a real broker enforces"): the order it would
// become, with the replaced order's fields where the change leaves them out. Its quantity is what
// is left to fill: the filled part is already in the position (or the cash) the gates read.
import type { TReplaceOrderRequest } from '../../contracts/orders.ts';
import { checkLot } from '../brokers/fills.ts';
import type { InstrumentRow, OrderRow } from '../db/schema/index.ts';
import { ExactDecimal } from '../decimal.ts';
import { AppError } from '../errors.ts';
import type { OrderAttempt, TTrailRequest } from './attempt.ts';
import { trailRequestOf } from './trailing.ts';
import { brokerBracketOf } from './brackets.ts';

const qtyError = (message: string) => new AppError('VALIDATION_ERROR', `qty: ${message}`, { errors: [{ path: 'qty', message }] });

/**
 * The new total quantity (undefined when the change keeps it), checked as a placement's is: the
 * lot size, and above what already filled (else nothing would be left to replace).
 */
export const replacedQtyOf = (row: OrderRow, change: TReplaceOrderRequest, instrument: InstrumentRow | undefined): string | undefined => {
  if (change.qty === undefined) return undefined;
  const qty = new ExactDecimal(change.qty);
  const lot = instrument && checkLot(qty, new ExactDecimal(instrument.lotSize), instrument.fractional);
  if (lot) throw qtyError(lot);
  if (!qty.gt(row.filledQty)) throw qtyError(`must stay above the ${new ExactDecimal(row.filledQty).toFixed()} already filled`);
  return qty.toFixed();
};

/** The trail a trailing stop's row keeps in its metadata. */
const keptTrailOf = (row: OrderRow): TTrailRequest | null => {
  const { trail_percent: percent, trail_price: price } = row.metadata;
  if (typeof percent === 'number' || typeof percent === 'string') return { percent: String(percent) };
  if (typeof price === 'number' || typeof price === 'string') return { price: String(price) };
  return null;
};

const priceText = (value: number | string | null | undefined) => (value == null ? null : String(value));

export const replaceAttemptOf = (
  row: OrderRow,
  change: TReplaceOrderRequest,
  { qty, instrument, preflight }: { qty: string | undefined; instrument: InstrumentRow | undefined; preflight: { liveEnabled: boolean; lockedUntil: Date | null } },
): OrderAttempt => ({
  userId: row.userId,
  assetClass: row.assetClass,
  mode: row.live ? 'live' : 'paper',
  side: row.side,
  qty: new ExactDecimal(qty ?? row.qty).minus(row.filledQty).toFixed(),
  orderType: row.orderType,
  limitPrice: priceText(change.limit_price ?? row.limitPrice),
  stopPrice: priceText(change.stop_price ?? row.stopPrice),
  // A trailing stop is judged with its new trail, or the one it has.
  trail: row.orderType === 'trailing_stop' ? (trailRequestOf(change) ?? keptTrailOf(row)) : null,
  bracket: row.bracket ? brokerBracketOf(row.bracket) : null,
  orderClass: row.metadata.order_class === 'oto' || row.metadata.order_class === 'oco' ? row.metadata.order_class : row.bracket ? 'bracket' : 'simple',
  instrument,
  liveEnabled: preflight.liveEnabled,
  // Read before the gates: no intent statement follows a replace to check it with its write.
  lockedUntil: preflight.lockedUntil,
  claimed: [],
  replacing: { brokerOrderId: row.brokerOrderId! },
});
