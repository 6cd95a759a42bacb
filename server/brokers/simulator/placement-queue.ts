// The simulator's placement queue: an account's placements that arrive while its transaction
// runs go together in the next one (group commit), each with the caller's intent and record steps;
// a transaction that fails is run again one placement at a time, so only the one at fault fails.
import { statementsSent, type Db } from '../../db/client.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { BrokerRejectedError, type BrokerAnswer, type BrokerOrderRequest } from '../types.ts';
import { toBrokerOrder } from './books.ts';
import { placeInBooks } from './books-placement.ts';
import type { EventHub } from './events.ts';
import type { MarketState } from './exchange-rules.ts';
import { quoteFrom } from './prices.ts';
import { lockAccountForSymbol } from './account-reads.ts';
import { CLIENT_ORDER_ID_KEY, type AccountKey } from './queries.ts';
import type { InBooksPlacement, InBooksSteps } from './api.ts';

/** At most this many queued placements of one account share a transaction (it stays short). */
const MAX_PLACEMENTS_PER_COMMIT = 64;

export const accountIdOf = (key: AccountKey) => `${key.userId}:${key.assetClass}:${key.mode}`;

/** One placement waiting for its account's next transaction. */
export interface QueuedPlacement {
  request: BrokerOrderRequest;
  instrument: InstrumentRow;
  at: Date;
  expiresAt: Date | null;
  /** The market at `at`, read before the placement queued (no statement in its transaction). */
  market: MarketState;
  steps: InBooksSteps<unknown>;
  resolve: (placed: InBooksPlacement<unknown>) => void;
  reject: (error: unknown) => void;
}

export interface PlacementQueueDeps {
  db: Db;
  hub: EventHub;
  /** The cash and currency an account opens with. */
  opening: (assetClass: AccountKey['assetClass']) => { currency: string; cash: string };
  liquidityLotsPerTick: number;
}

export const createPlacementQueue = ({ db, hub, opening, liquidityLotsPerTick }: PlacementQueueDeps) => {
  /** Placements queued behind their account's transaction under way, by account; absent when none runs. */
  const placementQueues = new Map<string, QueuedPlacement[]>();
  /** A client order id used before in the account, as the caller hears of it. */
  const refusalOf = (failure: unknown) => (isUniqueViolation(failure, CLIENT_ORDER_ID_KEY) ? new BrokerRejectedError('duplicate client order id') : failure);

  /**
   * Places the queued placements of one account in one transaction, in their order, each after
   * the caller's intent step and with the caller's record of its answer. A refusal (funds, say) is
   * that placement's alone: the broker writes nothing for it (its intent stays, unless the caller's
   * undoIntent step takes it back) and the others go on; so is an intent step that withdraws its
   * placement. Committed, each placement resolves with
   * what committed; throws (resolving none) when the transaction fails, with the error of the
   * statement that failed it.
   */
  const placeTogether = async (key: AccountKey, batch: readonly QueuedPlacement[]): Promise<void> => {
    const taken: { placement: QueuedPlacement; answer: BrokerAnswer; unsettled: Promise<[unknown, void]> }[] = [];
    const ended: { placement: QueuedPlacement; outcome: Exclude<InBooksPlacement<unknown>, { outcome: 'taken' }> }[] = [];
    try {
      await db.transaction(async (tx) => {
        for (const placement of batch) {
          const { request, instrument, at, expiresAt, market, steps } = placement;
          // The account's lock is read first and the caller's intent right behind it: the small
          // read waits in the connection's buffer for the larger statement, and both go out in
          // one write and come back in one round trip.
          const locked = lockAccountForSymbol(tx, key, request.symbol);
          locked.catch(() => undefined);
          if (steps.intent && !(await steps.intent(tx))) {
            await locked;
            ended.push({ placement, outcome: { outcome: 'withdrawn' } });
            continue;
          }
          let placed: Awaited<ReturnType<typeof placeInBooks>>;
          try {
            placed = await placeInBooks(tx, { key, opening: opening(key.assetClass), request, instrument, quote: async (stored) => (await quoteFrom(tx, instrument, stored)).price, at, expiresAt, market, locked, liquidityLotsPerTick, judge: steps.judge });
          } catch (error) {
            if (!(error instanceof BrokerRejectedError)) throw error;
            // Awaited: the refusal path may wait a round trip; the one of a taken order does not.
            const undone = steps.undoIntent ? await steps.undoIntent(tx, error) : false;
            ended.push({ placement, outcome: { outcome: undone ? 'undone' : 'refused', error } });
            continue;
          }
          const answer: BrokerAnswer = { order: toBrokerOrder(placed.row), events: placed.events };
          // Sent without waiting: the next placement's read, and in the end COMMIT, go out right
          // behind them, so the account's row lock is held one round trip per placement.
          const unsettled = Promise.all([steps.record(tx, answer), placed.written]);
          unsettled.catch(() => undefined);
          taken.push({ placement, answer, unsettled });
        }
        await statementsSent();
      });
    } catch (error) {
      // When a statement sent without waiting failed, COMMIT rolled back: its error says why.
      for (const { unsettled } of taken) {
        const failure = await unsettled.then(() => undefined, (cause: unknown) => cause);
        if (failure) throw failure;
      }
      throw error;
    }
    for (const { placement, answer, unsettled } of taken) {
      const [recorded] = await unsettled;
      hub.emit(answer.events);
      placement.resolve({ outcome: 'taken', order: answer.order, recorded });
    }
    for (const { placement, outcome } of ended) placement.resolve(outcome);
  };

  /**
   * Runs an account's queued placements until none is left: whatever queued while a transaction
   * ran goes together in the next one (group commit: one commit, and one wait for the disk, for
   * them all). Under no load each placement has a transaction of its own, with no wait. A batch
   * whose transaction failed is placed again one by one, so that only the placement at fault fails.
   */
  const drainPlacements = async (key: AccountKey, queue: QueuedPlacement[]) => {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_PLACEMENTS_PER_COMMIT);
      const failed = await placeTogether(key, batch).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      if (!failed) continue;
      if (batch.length === 1) {
        batch[0]!.reject(refusalOf(failed.error));
        continue;
      }
      for (const placement of batch) await placeTogether(key, [placement]).catch((error: unknown) => placement.reject(refusalOf(error)));
    }
    placementQueues.delete(accountIdOf(key));
  };

  /** Queues the placement behind its account's transaction under way, or starts one. */
  const enqueue = (key: AccountKey, placement: QueuedPlacement): void => {
    const id = accountIdOf(key);
    const queue = placementQueues.get(id);
    if (queue) {
      queue.push(placement);
      return;
    }
    const started = [placement];
    placementQueues.set(id, started);
    void drainPlacements(key, started);
  };

  return { enqueue };
};
