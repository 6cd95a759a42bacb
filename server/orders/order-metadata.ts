// What an order shows in its metadata beyond the interface (DESIGN §6): the fees of its fills
// (commission and tax, in the order's currency) and, when the broker ended it itself, why
// (`cancel_reason`). Pure: the order service writes what these return with the event's change.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { ExactDecimal } from '../decimal.ts';
import type { OrderRow } from '../db/schema/index.ts';
import { movedMarkOf } from './trailing.ts';

type TFill = NonNullable<TBrokerEvent['fill']>;

export interface FillFees {
  commission: number;
  tax: number;
}

/** A fill's fee split: the tax as the broker reports it (a KRX sell's), the rest commission. */
export const feesOfFill = (fill: TFill): FillFees => {
  const tax = new ExactDecimal(fill.tax ?? 0);
  return { commission: new ExactDecimal(fill.fee).minus(tax).toNumber(), tax: tax.toNumber() };
};

/** The order's fees after one more fill, summed in decimals (the numbers are exact decimal text's values). */
const feesAdded = (metadata: Record<string, unknown>, fill: TFill): FillFees => {
  const before = (metadata.fees ?? { commission: 0, tax: 0 }) as FillFees;
  const added = feesOfFill(fill);
  const sum = (a: number, b: number) => new ExactDecimal(String(a)).plus(String(b)).toNumber();
  return { commission: sum(before.commission, added.commission), tax: sum(before.tax, added.tax) };
};

/** The service's own reasons for asking a cancel (the kill switch's), kept on the order until the broker's cancel arrives. */
export const CANCEL_REQUESTED_BY = 'cancel_requested_by';

/**
 * A broker's reasons, as codes a client can branch on. The simulator's texts are known; a real
 * broker's unknown text is kept as `broker` (its words stay in the event's payload).
 */
const REASON_CODES: readonly (readonly [RegExp, string])[] = [
  [/insufficient funds/i, 'insufficient_funds'],
  [/insufficient position/i, 'insufficient_position'],
  [/^ioc\b/i, 'ioc_unfilled'],
  [/^fok\b/i, 'fok_unfilled'],
  [/account reset/i, 'account_reset'],
  // The other leg of its OCO filled (or was canceled): the simulator's words, and the ccxt adapter's for Binance's expiry of the leg.
  [/^oco: the other leg/i, 'oco_sibling'],
];

/**
 * Why the broker ended the order itself, or undefined when the user asked (a cancel without a
 * broker reason and without a request of the service's own) or the event ends nothing.
 */
export const cancelReasonOf = (row: Pick<OrderRow, 'metadata'>, event: Pick<TBrokerEvent, 'type' | 'reason'>): string | undefined => {
  if (event.type === 'expired') return 'expired';
  if (event.type !== 'canceled') return undefined;
  const requestedBy = row.metadata[CANCEL_REQUESTED_BY];
  if (typeof requestedBy === 'string') return requestedBy;
  if (!event.reason) return undefined;
  return REASON_CODES.find(([pattern]) => pattern.test(event.reason!))?.[1] ?? 'broker';
};

/** The metadata the event leaves on the order, or undefined when it changes none. */
export const metadataAfter = (row: Pick<OrderRow, 'metadata'>, event: TBrokerEvent, recordsFill: boolean): Record<string, unknown> | undefined => {
  const fees = recordsFill && event.fill ? feesAdded(row.metadata, event.fill) : undefined;
  const cancelReason = row.metadata.cancel_reason === undefined ? cancelReasonOf(row, event) : undefined;
  // A trailing stop's new mark, with the stop its broker moved.
  const mark = movedMarkOf(event);
  if (!fees && !cancelReason && !mark) return undefined;
  return { ...row.metadata, ...(fees ? { fees } : {}), ...(cancelReason ? { cancel_reason: cancelReason } : {}), ...mark };
};
