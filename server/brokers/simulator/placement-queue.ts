// The simulator's placement queue: placements that arrive while transactions run go together in
// the next one (group commit), across accounts, each with the caller's intent and record steps; a
// transaction that fails is run again one placement at a time, so only the one at fault fails.
import { statementsSent, type Db, type Tx } from '../../db/client.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { placementStep } from '../../observability/placement-steps.ts';
import { BrokerRejectedError, type BrokerAnswer, type BrokerOrderRequest, type BrokerSnapshot } from '../types.ts';
import { toBrokerOrder } from './books.ts';
import { placeInBooks } from './books-placement.ts';
import type { EventHub } from './events.ts';
import type { MarketState } from './exchange-rules.ts';
import { quoteFrom } from './prices.ts';
import { lockAccountForSymbol, type LockedAccount } from './account-reads.ts';
import { CLIENT_ORDER_ID_KEY, type AccountKey } from './queries.ts';
import type { InBooksPlacement, InBooksSteps } from './api.ts';

/** At most this many queued placements share a transaction (it stays short). */
const MAX_PLACEMENTS_PER_COMMIT = 64;
/**
 * At most this many placement transactions send their statements at once. Each takes what queued
 * while the others ran, so under load a transaction carries many accounts' orders: one BEGIN, one
 * COMMIT and one round trip per step for them all, where a transaction per account paid each per
 * order. More than one, so the database works on one while this process prepares the next. A
 * transaction whose statements are all sent and answered no longer counts: its COMMIT waits for
 * the WAL's flush, and the next transaction runs meanwhile (its commit joins the next flush), as a
 * connection per order would, rather than waiting for that flush before it begins.
 */
export const MAX_TRANSACTIONS_AT_ONCE = 2;
/**
 * At most this many placement transactions hold a connection at once, committing ones counted: a
 * flush that stalls (storage now and then takes tens of ms) must not take the whole pool
 * (DB_POOL_SIZE, 10 by default) from the service's other statements.
 */
export const MAX_TRANSACTIONS_IN_FLIGHT = 4;

export const accountIdOf = (key: AccountKey) => `${key.userId}:${key.assetClass}:${key.mode}`;

/** One placement waiting for a transaction. */
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

/** A queued placement with its account. */
interface Queued {
  key: AccountKey;
  placement: QueuedPlacement;
}

export interface PlacementQueueDeps {
  db: Db;
  hub: EventHub;
  /** The cash and currency an account opens with. */
  opening: (assetClass: AccountKey['assetClass']) => { currency: string; cash: string };
  liquidityLotsPerTick: number;
  /** The account as a snapshot reports it, from what was read with its lock (with its holdings): what a placement's `judge` step judges. */
  snapshotUnderLock: (tx: Tx, key: AccountKey, locked: LockedAccount) => Promise<BrokerSnapshot>;
}

/** Accounts in the order every placement transaction locks them: by user, asset class and mode. */
const byAccount = (a: AccountKey, b: AccountKey) => a.userId - b.userId || a.assetClass.localeCompare(b.assetClass) || a.mode.localeCompare(b.mode);

/**
 * A batch in rounds: round r holds each account's r-th placement, so every round meets each
 * account once and its reads see what the account's earlier rounds wrote. An account's
 * placements keep their order. A round's accounts are in one order for every transaction
 * (byAccount), and the first round locks every account of the batch: two transactions (of two
 * instances, say) that place for the same accounts take their locks in the same order, so
 * neither waits for the other while holding what the other waits for.
 */
export const roundsOf = <T extends { key: AccountKey }>(batch: readonly T[]): T[][] => {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of batch) {
    const id = accountIdOf(item.key);
    const round = seen.get(id) ?? 0;
    seen.set(id, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds.map((round) => round.sort((a, b) => byAccount(a.key, b.key)));
};

export const createPlacementQueue = ({ db, hub, opening, liquidityLotsPerTick, snapshotUnderLock }: PlacementQueueDeps) => {
  /** Placements not yet in a transaction, in their order of arrival. */
  let waiting: Queued[] = [];
  /** Accounts with placements in a transaction under way: theirs wait for it to end, so an account's placements keep their order. */
  const busy = new Set<string>();
  /** Transactions sending statements (MAX_TRANSACTIONS_AT_ONCE), and those with a connection, committing ones too (MAX_TRANSACTIONS_IN_FLIGHT). */
  let running = 0;
  let inFlight = 0;
  /** A client order id used before in the account, as the caller hears of it. */
  const refusalOf = (failure: unknown) => (isUniqueViolation(failure, CLIENT_ORDER_ID_KEY) ? new BrokerRejectedError('duplicate client order id') : failure);

  type Taken = { placement: QueuedPlacement; answer: BrokerAnswer; unsettled: Promise<[unknown, void]> };
  type Ended = { placement: QueuedPlacement; outcome: Exclude<InBooksPlacement<unknown>, { outcome: 'taken' }> };

  /**
   * One placement on the books after its intent step, in the transaction: taken (its record sent,
   * not waited for), or ended (withdrawn by its intent step, or refused).
   */
  const placeOne = async (tx: Tx, { key, placement }: Queued, locked: ReturnType<typeof lockAccountForSymbol>, intended: Promise<boolean>): Promise<Taken | Ended> => {
    const { request, instrument, at, expiresAt, market, steps } = placement;
    if (!(await intended)) {
      await locked;
      return { placement, outcome: { outcome: 'withdrawn' } };
    }
    let placed: Awaited<ReturnType<typeof placeInBooks>>;
    try {
      const { judge } = steps;
      placed = await placeInBooks(tx, {
        key,
        opening: opening(key.assetClass),
        request,
        instrument,
        quote: async (stored) => (await quoteFrom(tx, instrument, stored)).price,
        at,
        expiresAt,
        market,
        locked,
        liquidityLotsPerTick,
        judge: judge && (async (account, price) => judge(tx, await snapshotUnderLock(tx, key, account), price.toFixed())),
      });
    } catch (error) {
      if (!(error instanceof BrokerRejectedError)) throw error;
      // Awaited: the refusal path may wait a round trip; the one of a taken order does not.
      const undone = steps.undoIntent ? await steps.undoIntent(tx, error) : false;
      return { placement, outcome: { outcome: undone ? 'undone' : 'refused', error } };
    }
    const answer: BrokerAnswer = { order: toBrokerOrder(placed.row), events: placed.events };
    // Sent without waiting: the next placement's statements, and in the end COMMIT, go out right
    // behind them.
    const unsettled = Promise.all([steps.record(tx, answer), placed.written]);
    unsettled.catch(() => undefined);
    return { placement, answer, unsettled };
  };

  /**
   * Places a batch of placements in one transaction, round by round (roundsOf), each after the
   * caller's intent step and with the caller's record of its answer. A round sends every
   * placement's account lock and intent at once (one round trip for them all), then puts each on
   * the books in turn. A refusal (funds, say) is that placement's alone: the broker writes nothing
   * for it (its intent stays, unless the caller's undoIntent step takes it back) and the others go
   * on; so is an intent step that withdraws its placement. Committed, each placement resolves with
   * what committed; throws (resolving none) when the transaction fails, with the error of the
   * statement that failed it.
   */
  const placeTogether = async (batch: readonly Queued[], committing: () => void = () => undefined): Promise<void> => {
    const taken: Taken[] = [];
    const ended: Ended[] = [];
    try {
      await db.transaction(async (tx) => {
        for (const { key, placement } of batch) placementStep(key.userId, placement.request.clientOrderId, 'began');
        for (const round of roundsOf(batch)) {
          // Every account's lock read and, right behind it, the caller's intent: sent together,
          // answered in one round trip.
          const sent = round.map((queued) => {
            // A placement its caller judges reads the account's holdings too, for its equity.
            const locked = lockAccountForSymbol(tx, queued.key, queued.placement.request.symbol, { holdings: queued.placement.steps.judge !== undefined });
            locked.catch(() => undefined);
            const { intent } = queued.placement.steps;
            const intended = intent ? intent(tx) : Promise.resolve(true);
            intended.catch(() => undefined);
            return { queued, locked, intended };
          });
          for (const { queued, locked, intended } of sent) {
            const outcome = await placeOne(tx, queued, locked, intended);
            if ('answer' in outcome) taken.push(outcome);
            else ended.push(outcome);
          }
        }
        await statementsSent();
        committing();
      });
      for (const { key, placement } of batch) placementStep(key.userId, placement.request.clientOrderId, 'committed');
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
   * Places a batch, and when its transaction failed, each of its placements again on its own, so
   * that only the placement at fault fails.
   */
  const placeBatch = async (batch: readonly Queued[], committing: () => void): Promise<void> => {
    const failed = await placeTogether(batch, committing).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    if (!failed) return;
    if (batch.length === 1) {
      batch[0]!.placement.reject(refusalOf(failed.error));
      return;
    }
    for (const queued of batch) await placeTogether([queued]).catch((error: unknown) => queued.placement.reject(refusalOf(error)));
  };

  /**
   * The next batch: waiting placements of accounts no running transaction holds, oldest first. An
   * account met busy keeps all its placements waiting (their order is kept).
   */
  const takeBatch = (): Queued[] => {
    const batch: Queued[] = [];
    const left: Queued[] = [];
    const held = new Set<string>();
    for (const queued of waiting) {
      const id = accountIdOf(queued.key);
      if (batch.length >= MAX_PLACEMENTS_PER_COMMIT || busy.has(id)) left.push(queued);
      else {
        batch.push(queued);
        held.add(id);
      }
    }
    for (const id of held) busy.add(id);
    waiting = left;
    return batch;
  };

  /**
   * Starts transactions while fewer than the most send statements and placements can go. Under no
   * load each placement has a transaction of its own, with no wait. A batch's accounts stay busy
   * until it has ended (committed, or failed and been placed again one by one): their next
   * placements read what it wrote.
   */
  const pump = (): void => {
    while (running < MAX_TRANSACTIONS_AT_ONCE && inFlight < MAX_TRANSACTIONS_IN_FLIGHT && waiting.length > 0) {
      const batch = takeBatch();
      if (batch.length === 0) return;
      running += 1;
      inFlight += 1;
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        running -= 1;
      };
      void placeBatch(batch, () => {
        release();
        pump();
      }).finally(() => {
        release();
        inFlight -= 1;
        for (const { key } of batch) busy.delete(accountIdOf(key));
        pump();
      });
    }
  };

  /** Queues the placement for the next transaction, and starts one when it can. */
  const enqueue = (key: AccountKey, placement: QueuedPlacement): void => {
    waiting.push({ key, placement });
    pump();
  };

  return { enqueue };
};
