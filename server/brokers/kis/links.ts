// The link between our client order id and KIS's order, which KIS cannot keep: its order takes
// no client id, and its order numbers start again every day. An order is known to KIS by (order
// date, order number), our broker order id `YYYYMMDD-ODNO`; the link store maps our
// client_order_id to it and back. The service's store is its orders table (client_order_id and
// broker_order_id are columns there); the memory store serves one process and the tests.
//
// When the answer to a placement is lost (a timeout, a crash between KIS and our write), there is
// no link: `unlinkedCandidates` finds the order among the day's rows by symbol, side, quantity and
// time, as the design's reconciliation rule says, for the reconciler to decide on.
import type { BrokerOrderRequest } from '../types.ts';
import { isReviseOrCancelRow, kisBrokerOrderId, normalDecimal, seoulInstant } from './mapping.ts';
import type { KisDailyOrderRow } from './wire.ts';

export interface KisOrderLink {
  clientOrderId: string;
  /** `YYYYMMDD-ODNO`. */
  brokerOrderId: string;
  /** KRX_FWDG_ORD_ORGNO from the order answer: what a cancel names the order by, with ODNO. */
  orgNo: string;
  /** The request's metadata, kept with the order as the Broker interface asks. */
  metadata: Record<string, unknown>;
}

export interface KisOrderLinkStore {
  put(link: KisOrderLink): Promise<void>;
  byClientOrderId(clientOrderId: string): Promise<KisOrderLink | undefined>;
  byBrokerOrderId(brokerOrderId: string): Promise<KisOrderLink | undefined>;
}

/** One account's links in this process. */
export const createMemoryLinkStore = (): KisOrderLinkStore => {
  const byClient = new Map<string, KisOrderLink>();
  const byBroker = new Map<string, KisOrderLink>();
  return {
    put: (link) => {
      byClient.set(link.clientOrderId, link);
      byBroker.set(link.brokerOrderId, link);
      return Promise.resolve();
    },
    byClientOrderId: (clientOrderId) => Promise.resolve(byClient.get(clientOrderId)),
    byBrokerOrderId: (brokerOrderId) => Promise.resolve(byBroker.get(brokerOrderId)),
  };
};

/** What we meant to place, and when we sent it. */
export interface KisOrderIntent {
  request: Pick<BrokerOrderRequest, 'symbol' | 'side' | 'qty'>;
  sentAt: Date;
}

/**
 * The day's orders that could be this intent's: same symbol, side and quantity, placed no earlier
 * than `skewMs` before it was sent and no later than `windowMs` after, not a revise/cancel row,
 * and not already linked to another client order id; nearest in time first. One candidate is a
 * match; several need the reconciler's judgement (or a human's), which is why this does not pick.
 */
export const unlinkedCandidates = (intent: KisOrderIntent, rows: readonly KisDailyOrderRow[], linkedBrokerOrderIds: ReadonlySet<string>, skewMs = 60_000, windowMs = Number.POSITIVE_INFINITY): KisDailyOrderRow[] =>
  rows
    .filter((row) => !isReviseOrCancelRow(row))
    .filter((row) => row.pdno === intent.request.symbol && (row.sll_buy_dvsn_cd === '01' ? 'sell' : 'buy') === intent.request.side)
    .filter((row) => normalDecimal(row.ord_qty) === normalDecimal(intent.request.qty))
    .filter((row) => !linkedBrokerOrderIds.has(kisBrokerOrderId(row.ord_dt, row.odno)))
    .filter((row) => seoulInstant(row.ord_dt, row.ord_tmd).getTime() >= intent.sentAt.getTime() - skewMs)
    .filter((row) => seoulInstant(row.ord_dt, row.ord_tmd).getTime() <= intent.sentAt.getTime() + windowMs)
    .sort((a, b) => Math.abs(seoulInstant(a.ord_dt, a.ord_tmd).getTime() - intent.sentAt.getTime()) - Math.abs(seoulInstant(b.ord_dt, b.ord_tmd).getTime() - intent.sentAt.getTime()));
