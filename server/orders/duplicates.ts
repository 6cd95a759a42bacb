// The answer a duplicate placement gets (a request whose client order id is already used): the
// order as it stands once its first copy has the broker's answer, or the refusal it ended with.
import type { TOrderResponse } from '../../contracts/orders.ts';
import { refusedError, unavailableError, unconfirmedError } from '../brokers/errors.ts';
import type { Db } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { OrderAttempt } from './attempt.ts';
import { MINUTE_SCOPE, releaseClaims } from './gates.ts';
import type { OrderPublisher } from './publisher.ts';
import { findOrderByClientId } from './queries.ts';
import { releaseRate } from '../controls/rate-queries.ts';
import { toOrderResponse, UNCONFIRMED } from './records.ts';
import { keptRefusalOf } from './broker-answer.ts';

/** How long a duplicate waits for the first copy's answer, by default. */
const REPLAY_WAIT_MS = 15_000;

export interface DuplicatesDeps {
  db: Db;
  /**
   * The user's order events and unknown-outcome marks from every instance: the first copy's
   * answer, or its failure with the outcome unknown, wakes its duplicates.
   */
  publisher: Pick<OrderPublisher, 'followUser' | 'followUnconfirmed'>;
  /** How long a duplicate waits for the first copy's answer (tests make it long: only a wake-up answers then). */
  replayWaitMs?: number;
}

/**
 * Still waiting for the broker's answer to its first copy. One whose placement failed with its
 * outcome unknown has no answer to wait for until it is reconciled.
 */
const awaitsAnswer = (row: OrderRow | undefined) => row?.status === 'pending' && row.reason !== UNCONFIRMED;

/** Resolves when `woken` does or after `ms`, whichever comes first, leaving no timer behind. */
const wokenOrAfter = (woken: Promise<void>, ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void woken.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

export const createDuplicates = ({ db, publisher, replayWaitMs = REPLAY_WAIT_MS }: DuplicatesDeps) => {
  /**
   * The order once its first copy has the broker's answer, or as it stands at the deadline. The
   * first copy may be placed by another instance: the event that takes the order off pending, or
   * the signal of its mark as unconfirmed (which has no event), committed there, reaches this one
   * through the event bus and wakes a read of the row. Nothing is read between wake-ups (a copy in
   * this process waits for the placement itself, in `place`).
   */
  const untilAnswered = async (userId: number, clientOrderId: string, deadline: number): Promise<OrderRow | undefined> => {
    let wake: () => void = () => undefined;
    const nextWake = () => new Promise<void>((resolve) => (wake = resolve));
    let woken = nextWake();
    const unfollowUnconfirmed = publisher.followUnconfirmed(userId, (unconfirmed) => {
      if (unconfirmed === clientOrderId) wake();
    });
    const unsubscribe = await publisher.followUser(userId, (event) => {
      if (event.client_order_id === clientOrderId && event.status !== 'pending') wake();
    }).catch((error: unknown) => {
      unfollowUnconfirmed();
      throw error;
    });
    try {
      for (;;) {
        // Read after listening: an answer committed before is in the row, one after wakes this.
        const row = await findOrderByClientId(db, { userId, clientOrderId });
        const left = deadline - performance.now();
        if (!awaitsAnswer(row) || left <= 0) return row;
        await wokenOrAfter(woken, left);
        woken = nextWake();
      }
    } finally {
      unsubscribe();
      unfollowUnconfirmed();
    }
  };

  /** The answer a replay of an order gets: its current state, or the refusal it ended with. */
  const answerDuplicate = async (userId: number, clientOrderId: string, hash: string): Promise<TOrderResponse> => {
    // A wait bound in real time, not a rule of the domain: the injected clock may stand still.
    const deadline = performance.now() + replayWaitMs;
    let row = await findOrderByClientId(db, { userId, clientOrderId });
    if (row && row.requestHash !== hash) throw new AppError('IDEMPOTENCY_CONFLICT', 'This client_order_id was used for a different order');
    // A copy that arrives while the first is still with the broker waits for its answer.
    if (awaitsAnswer(row)) row = await untilAnswered(userId, clientOrderId, deadline);
    if (!row) throw new AppError('INTERNAL_ERROR', 'The order vanished while a duplicate waited for it');
    if (row.status === 'pending' && row.reason === UNCONFIRMED) throw unconfirmedError();
    if (row.status === 'rejected' && row.reason === 'broker_unavailable') throw unavailableError('replay');
    if (row.status === 'rejected') throw keptRefusalOf(row.metadata) ?? refusedError('replay', row.reason ?? 'rejected');
    return toOrderResponse(row);
  };

  /**
   * A copy of a request that raced its original past the first lookup is a replay after all:
   * it answers as one and does not count toward the per-minute limit.
   */
  const answerRacedDuplicate = async (attempt: OrderAttempt, clientOrderId: string, hash: string) => {
    await releaseClaims(db, attempt);
    if (attempt.countedThisMinute) await releaseRate(db, { userId: attempt.userId, scope: MINUTE_SCOPE });
    return answerDuplicate(attempt.userId, clientOrderId, hash);
  };

  return { answerDuplicate, answerRacedDuplicate };
};

export type Duplicates = ReturnType<typeof createDuplicates>;
