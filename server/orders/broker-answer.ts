// The placement's last step: records what the broker answered (its acceptance with the events
// that came with it, its refusal, or a failure whose outcome is unknown) and answers the caller.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TOrderEvent, TOrderResponse } from '../../contracts/orders.ts';
import type { Alerts } from '../alerts/index.ts';
import { brokerError, unconfirmedError } from '../brokers/errors.ts';
import { BrokerRejectedError, FundsRejectedError, type BrokerOrder } from '../brokers/types.ts';
import { AppError } from '../errors.ts';
import type { Clock } from '../clock.ts';
import { markFirstLiveOrder } from '../controls/queries.ts';
import type { Db, Queryable } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { Logger } from '../observability/logger.ts';
import { releaseClaims } from './gates.ts';
import type { OrderAudit } from './order-audit.ts';
import { placementKey, type PlacementsUnderWay } from './placements-under-way.ts';
import type { OrderPublisher } from './publisher.ts';
import { recordAcceptance, recordAnswer, updateOrder } from './write-queries.ts';
import { acceptedTrail } from './trailing.ts';
import { EMULATED_EXITS } from './emulator/exits.ts';
import { acceptanceRecordsOf, acceptedResponse, acceptedRowOf, localBrokerId, orderEventOf, placedFrameOf, placedPayloadOf, UNCONFIRMED, type TPlacedPayload } from './records.ts';
import type { CountGate } from './placement.ts';
import type { PreparedPlacement } from './prepare.ts';

/** Where a rejected order keeps the gate's answer it was refused with under the account's lock (a replay answers it). */
export const REFUSAL_KEY = 'refusal';

/** The gate's answer to a broker's refusal the gate makes too (422 INSUFFICIENT_FUNDS or RISK_RULE_VIOLATION), else undefined. */
export const fundsRefusalOf = (error: unknown): AppError | undefined =>
  error instanceof FundsRejectedError ? new AppError(error.gateCode, error.gateMessage) : undefined;

/** The gate's answer kept on a rejected order (fundsRefusalOf's), for its replays. */
export const keptRefusalOf = (metadata: Record<string, unknown>): AppError | undefined => {
  const kept = metadata[REFUSAL_KEY] as { code?: unknown; message?: unknown } | undefined;
  const code = kept?.code === 'INSUFFICIENT_FUNDS' || kept?.code === 'RISK_RULE_VIOLATION' || kept?.code === 'MARKET_CLOSED' ? kept.code : undefined;
  return code && typeof kept?.message === 'string' ? new AppError(code, kept.message) : undefined;
};

/** An acceptance as written: the accepted row (the creation answer), the events to announce, and the broker events it recorded. */
export interface WrittenAcceptance {
  row: OrderRow;
  frames: TOrderEvent[];
  events: readonly TBrokerEvent[];
}

export interface AnswerRecorderDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  alerts: Alerts;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce' | 'signalUnconfirmed'>;
  underWay: PlacementsUnderWay;
  countGate: CountGate;
}

export const createAnswerRecorder = ({ db, clock, logger, alerts, audit, publisher, underWay, countGate }: AnswerRecorderDeps) => {
  /**
   * Writes a paper order's acceptance with the given broker events in one statement, in `q` (the
   * broker's own transaction where it offers one). Undefined, with nothing written, when the order
   * is no longer pending.
   */
  const writeAcceptance = async (q: Queryable, intent: OrderRow, placed: TPlacedPayload, accepted: BrokerOrder, events: readonly TBrokerEvent[]): Promise<WrittenAcceptance | undefined> => {
    const answer = acceptanceRecordsOf(intent, placed, accepted, events, clock.now());
    return (await recordAnswer(q, intent, answer.change, answer.records)) ? { row: answer.acceptedRow, frames: answer.frames, events } : undefined;
  };

  /**
   * Writes a paper order's acceptance together with the broker events that came before it (the
   * intake kept them aside). Undefined (nothing written, the events left to the intake) when the
   * order is no longer pending.
   */
  const writeAcceptanceWithEarlyEvents = async (intent: OrderRow, placed: TPlacedPayload, accepted: BrokerOrder): Promise<WrittenAcceptance | undefined> => {
    const key = placementKey(intent.userId, intent.clientOrderId);
    const taken = underWay.takeEarly(key);
    const written = await writeAcceptance(db, intent, placed, accepted, taken).catch((error: unknown) => {
      underWay.giveBack(key, taken);
      throw error;
    });
    if (!written) underWay.giveBack(key, taken);
    return written;
  };

  /**
   * Records the broker's acceptance, unless it was written with the broker's own transaction
   * (`written`), and answers the order as the broker accepted it. A live order's acceptance is a
   * transaction of its own that marks the user's first live order, which alerts the operators.
   */
  const recordAccepted = async ({ user, request, symbol, attempt }: PreparedPlacement, intent: OrderRow, accepted: BrokerOrder, written: WrittenAcceptance | undefined): Promise<TOrderResponse> => {
    const placed = placedPayloadOf(request, symbol);
    // An entry whose exits the emulator holds leaves its early fills to the intake, which arms the exits with each.
    const recorded = written ?? (intent.live || intent.metadata[EMULATED_EXITS] === true ? undefined : await writeAcceptanceWithEarlyEvents(intent, placed, accepted));
    if (recorded) {
      publisher.announce(recorded.frames);
      return acceptedResponse(recorded.row, accepted);
    }
    const { assetClass } = intent;
    const { row, firstLive, frames } = await db.transaction(async (tx) => {
      const { row: acceptedRow, event: acceptedEvent } = acceptedRowOf(intent, accepted, clock.now());
      const answered = { brokerOrderId: accepted.brokerOrderId, at: acceptedRow.updatedAt, trail: acceptedTrail(intent, accepted) };
      // The placed frame travels with the answer: it carries the broker's id.
      const answerFrames = [placedFrameOf(intent, accepted.brokerOrderId, placed, acceptedRow.updatedAt), acceptedEvent];
      if (!intent.live) {
        // Sent together: one round trip for the update, its audit record and its event.
        const [updated, , appended] = await Promise.all([
          recordAcceptance(tx, intent, answered),
          audit(tx, acceptedRow, 'order.accepted', { broker_status: accepted.status }),
          publisher.appendEvents(tx, acceptedRow, answerFrames),
        ]);
        return { row: updated!, firstLive: false, frames: appended };
      }
      const updated = await recordAcceptance(tx, intent, answered);
      const first = await markFirstLiveOrder(tx, { userId: user.id, assetClass, at: intent.submittedAt });
      await audit(tx, acceptedRow, 'order.accepted', { broker_status: accepted.status, ...(first ? { first_live_order: true } : {}) });
      return { row: updated!, firstLive: first, frames: await publisher.appendEvents(tx, acceptedRow, answerFrames) };
    });
    publisher.announce(frames);
    if (firstLive) {
      alerts.critical({ kind: 'first_live_order', title: `First live ${assetClass} order of user ${user.id}`, text: `User ${user.id} placed its first live ${assetClass} order: ${request.side} ${attempt.qty} ${intent.symbol}`, data: { user_id: user.id, asset_class: assetClass, client_order_id: intent.clientOrderId } });
    }
    return acceptedResponse(row, accepted);
  };

  /**
   * Records a placement that failed at the broker and throws its answer. A failure that may have
   * reached the broker (`outcomeUnknown`) leaves the order pending for the reconciler; any other
   * marks it rejected and gives back its rate units.
   */
  const recordFailed = async ({ attempt, request, symbol }: PreparedPlacement, intent: OrderRow, error: unknown, outcomeUnknown: boolean): Promise<never> => {
    const { assetClass, clientOrderId } = intent;
    if (outcomeUnknown) {
      // The request may have reached the broker (a timeout, a connection broken after sending, a
      // 5xx): the order stays pending, and the reconciler (every minute) asks the broker for it by
      // its client order id, links what it finds, and settles it as not at the broker otherwise.
      // Its rate units stay counted: it may be an order. The mark writes no order event (not even
      // `placed`, whose broker id is still unknown: clients see nothing until the reconciler settles it), so a signal, sent if the mark commits, wakes the duplicates waiting
      // for its answer on other instances.
      const detail = error instanceof Error ? error.message : String(error);
      await db.transaction(async (tx) => {
        const updated = await updateOrder(tx, intent, { reason: UNCONFIRMED, updatedAt: clock.now() });
        await audit(tx, updated!, 'order.unconfirmed', { gate: 'broker', code: 'BROKER_UNAVAILABLE', reason: detail, decision: 'pending until reconciled with the broker' });
        await publisher.signalUnconfirmed(tx, updated!);
      });
      countGate(assetClass, 'broker', 'failed');
      logger.warn({ err: error, clientOrderId }, 'broker call failed with its outcome unknown; the order stays pending for reconciliation');
      throw unconfirmedError();
    }
    await releaseClaims(db, attempt);
    const refused = error instanceof BrokerRejectedError;
    const reason = refused ? error.message : 'broker_unavailable';
    // Funds or units the gate saw on its snapshot and the books no longer had under the
    // account's lock (another placement took them meanwhile): answered as the gate answers it.
    // A paper order in the books takes its intent back instead (in-books-submission.ts); this
    // keeps one whose intent committed before the call (a live order at the simulator).
    const funds = fundsRefusalOf(error);
    const frames = await db.transaction(async (tx) => {
      const updated = await updateOrder(tx, intent, {
        status: 'rejected',
        reason,
        brokerOrderId: localBrokerId(clientOrderId),
        ...(funds ? { metadata: { ...intent.metadata, [REFUSAL_KEY]: { code: funds.code, message: funds.message } } } : {}),
        updatedAt: clock.now(),
      });
      await audit(tx, updated!, 'order.rejected', {
        gate: funds ? 'risk' : 'broker',
        code: funds ? funds.code : refused ? 'BROKER_REJECTED' : 'BROKER_UNAVAILABLE',
        reason: refused ? reason : String(error instanceof Error ? error.message : error),
      });
      const at = clock.now();
      return publisher.appendEvents(tx, updated!, [placedFrameOf(intent, updated!.brokerOrderId!, placedPayloadOf(request, symbol), at), orderEventOf(updated!, 'rejected', { reason }, at)]);
    });
    countGate(assetClass, 'broker', refused ? 'refused' : 'failed');
    publisher.announce(frames);
    if (!refused) logger.warn({ err: error, clientOrderId }, 'broker call failed');
    throw funds ?? brokerError(error, 'place');
  };

  return { writeAcceptance, recordAccepted, recordFailed };
};

export type AnswerRecorder = ReturnType<typeof createAnswerRecorder>;
