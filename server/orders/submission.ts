// The submit step of a placement: the order's intent committed and the order sent to its broker.
// A paper order at a broker whose books share our database goes in the broker's own transaction
// (in books); any other order commits its intent first and calls its broker after (remote).
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TOrderResponse } from '../../contracts/orders.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerOrder, type RecordedPlacement } from '../brokers/types.ts';
import type { Db } from '../db/client.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from './broker-calls.ts';
import type { AnswerRecorder, WrittenAcceptance } from './broker-answer.ts';
import type { Duplicates } from './duplicates.ts';
import { releaseClaims } from './gates.ts';
import type { Intent, PreparedPlacement } from './placement.ts';
import { placementKey, type PlacementsUnderWay } from './placements-under-way.ts';
import { findOrderByClientId, type IntentOutcome } from './queries.ts';

/** What a submission committed and what the broker did. */
export type Submitted =
  /** The intent did not stand (a full window, a lock, a copy that won the id): the placement's answer. */
  | { kind: 'answered'; response: TOrderResponse }
  /** The broker took the order; `written` when its acceptance was recorded with it. */
  | { kind: 'accepted'; order: BrokerOrder; written?: WrittenAcceptance }
  /** The intent committed and the broker call failed; `outcomeUnknown` when it may have reached the broker. */
  | { kind: 'failed'; error: unknown; outcomeUnknown: boolean };

export interface SubmissionDeps {
  db: Db;
  underWay: PlacementsUnderWay;
  duplicates: Pick<Duplicates, 'answerRacedDuplicate'>;
  writeAcceptance: AnswerRecorder['writeAcceptance'];
}

export const createSubmission = ({ db, underWay, duplicates, writeAcceptance }: SubmissionDeps) => {
  /**
   * A paper order at a broker whose books share our database: the intent, the broker's
   * acceptance and our record of it (with the fill on arrival) commit together, or none of them
   * does, so there is no moment at which the broker holds an order we have no record of. No timer
   * here: one that fired while the transaction ran on would mark the order failed and then see it
   * commit.
   */
  const submitInBooks = async ({ user, attempt, clientOrderId, hash }: PreparedPlacement, intent: Intent): Promise<Submitted> => {
    let written: IntentOutcome | undefined;
    let answered: readonly TBrokerEvent[] = [];
    let placement: RecordedPlacement<WrittenAcceptance | undefined>;
    try {
      placement = await intent.broker.placeOrderRecorded!(intent.brokerRequest, {
        intent: async (tx) => {
          written = await intent.write(tx);
          return written.claimed && written.placed;
        },
        record: (tx, answer) => {
          answered = answer.events;
          return writeAcceptance(tx, intent.row, answer.order, answer.events);
        },
      });
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        // The database failed, not the broker: the placement's one transaction committed whole
        // (its COMMIT went out before the connection broke) or not at all. Committed, it is this
        // order's answer; else nothing of the order stands, and the caller's retry with the same
        // client order id places it (503, or 503 again while the database stays away).
        if (await findOrderByClientId(db, { userId: user.id, clientOrderId })) return { kind: 'answered', response: await duplicates.answerRacedDuplicate(attempt, clientOrderId, hash) };
        await releaseClaims(db, attempt);
        throw error;
      }
      // Nothing committed, the intent neither: it is written now, and the failure marks it after.
      const response = await intent.answerUnlessStands(await intent.write(db));
      if (response) return { kind: 'answered', response };
      return { kind: 'failed', error, outcomeUnknown: false };
    }
    const response = await intent.answerUnlessStands(written ?? (await intent.write(db)));
    if (response) return { kind: 'answered', response };
    if (placement.outcome === 'refused') return { kind: 'failed', error: placement.error, outcomeUnknown: false };
    // A withdrawn placement's intent did not stand: answerUnlessStands answered it above.
    if (placement.outcome !== 'taken') return { kind: 'failed', error: new Error('a withdrawn placement reached the broker step'), outcomeUnknown: false };
    if (placement.recorded) underWay.forgetRecorded(placementKey(user.id, clientOrderId), answered);
    return { kind: 'accepted', order: placement.order, written: placement.recorded };
  };

  /** The intent commits first, and the broker is called after, with a deadline. */
  const submitRemote = async ({ instrument }: PreparedPlacement, intent: Intent): Promise<Submitted> => {
    const response = await intent.answerUnlessStands(await intent.write(db));
    if (response) return { kind: 'answered', response };
    if (!instrument) return { kind: 'failed', error: new BrokerRejectedError(`unknown symbol ${intent.row.symbol}`), outcomeUnknown: false };
    try {
      return { kind: 'accepted', order: await withTimeout(intent.broker.placeOrder(intent.brokerRequest), BROKER_TIMEOUT_MS) };
    } catch (error) {
      // Only a refusal, or a failure the broker says it never took, is known not to be an order.
      return { kind: 'failed', error, outcomeUnknown: !(error instanceof BrokerRejectedError) && !(error instanceof BrokerUnavailableError && error.notTaken) };
    }
  };

  return (prepared: PreparedPlacement, intent: Intent): Promise<Submitted> =>
    intent.broker.placeOrderRecorded && !intent.row.live && prepared.instrument ? submitInBooks(prepared, intent) : submitRemote(prepared, intent);
};
