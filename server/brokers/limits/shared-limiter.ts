// The request limiter of one broker key or exchange host over a budget every instance shares
// through Postgres (broker_request_budgets), so that K instances together stay within what the
// broker allows, and one instance alone still gets all of it (no fixed 1/K split).
//
// Why batches rather than a round trip per request, or a lease of a share of the bucket: the
// callers waiting here when a round trip starts are all served by it (want = how many wait), so a
// burst of N concurrent requests costs one round trip, not N; and a few tokens more than that
// (`prefetch`, at most MAX_PREFETCH) are kept for callers that come one at a time, so a trickle
// of requests mostly pays none. A leased share would have to be sized per instance and would
// idle when its holder is quiet; batching takes only what is about to be sent.
//
// The bound: a token granted to a waiting caller is used at once; only held tokens (at most
// `prefetch` per instance, each kept at most `holdMs` and then given back) can be taken in one
// window and sent in the next. So in any window of T ms, the requests sent for one budget are at
// most burst + rate x T + K x prefetch, with K the instances using it. Giving a token back never
// raises the bucket above where it would be had the token not been taken (it is capped at the
// burst), so returns add nothing to the bound.
//
// When the database does not answer within `answerTimeoutMs`, or fails, the callers waiting are
// refused (BrokerUnavailableError): nothing is sent without a token, and nobody hangs on a
// database that is down. A 429's Retry-After pauses the budget for every instance.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { Logger } from '../../observability/logger.ts';
import { pauseMsOf, type LimiterFactory, type RequestLimiter, type TokenBucketOptions } from '../alpaca/limiter.ts';
import { BrokerUnavailableError } from '../types.ts';
import { giveBackToBudget, pauseBudget, takeFromBudget, type BudgetTake } from './queries.ts';
import { createWaiterQueue, limiterClosed, refusalBeforeQueueing } from './waiters.ts';

/** How long tokens taken ahead of demand are kept before they go back. */
export const DEFAULT_HOLD_MS = 1_000;
/** The most tokens one instance takes ahead of demand: enough to spare a trickle its round trips. */
export const MAX_PREFETCH = 4;
/** How long a round trip to the budget may take before the waiting callers are refused. */
export const DEFAULT_ANSWER_TIMEOUT_MS = 5_000;

/**
 * Tokens taken ahead of demand by default: no more than the bucket refills while they are held,
 * nor a tenth of the burst (so a small budget, KIS paper's 2 a second, takes none ahead), nor
 * MAX_PREFETCH.
 */
export const prefetchOf = ({ perMs, burst }: { perMs: number; burst: number }, holdMs: number): number =>
  Math.max(0, Math.min(MAX_PREFETCH, Math.floor(burst / 10), Math.floor(perMs * holdMs)));

export interface SharedLimiterOptions extends TokenBucketOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The budget's row: `us:key:<sha256>`, `kr:host:<origin>` and the like, never a secret. */
  name: string;
  /** Tokens taken ahead of demand; prefetchOf(...) by default. */
  prefetch?: number;
  holdMs?: number;
  answerTimeoutMs?: number;
  /**
   * Told each time the limiter has looked at the budget for its waiting callers (a round trip
   * answered, or a turn skipped while paused): a test counts looks to know that no grant is coming
   * at the clock's time, rather than sleeping.
   */
  onLook?: () => void;
}

export const createSharedRequestLimiter = (options: SharedLimiterOptions): RequestLimiter => {
  const { db, clock, name } = options;
  const shape = { perMs: options.requestsPerMinute / 60_000, burst: options.burst ?? options.requestsPerMinute };
  if (!(shape.perMs > 0) || !(shape.burst >= 1)) throw new Error('a request budget needs a positive rate and a burst of at least 1');
  const holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
  const prefetch = options.prefetch ?? prefetchOf(shape, holdMs);
  const answerTimeoutMs = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  const log = options.logger.child({ budget: name });
  const now = () => clock.now().getTime();
  const waiters = createWaiterQueue();

  /** Tokens taken for callers yet to come (at most `prefetch` once a round trip is settled), usable until heldUntil. */
  let held = 0;
  let heldUntil = 0;
  /** No token is used before this (a 429 here or, as the budget says, on another instance). */
  let pausedUntil = 0;
  /** The round trip in flight: its answer or failure settles the waiters only while it is this one. */
  let asking: object | undefined;
  let askTimeout: NodeJS.Timeout | undefined;
  let nextAsk: NodeJS.Timeout | undefined;
  let lapse: NodeJS.Timeout | undefined;
  let closed = false;

  const usable = () => held > 0 && now() < heldUntil && now() >= pausedUntil;

  const admitFromHeld = () => {
    while (waiters.length > 0 && usable()) {
      held -= 1;
      waiters.admitFirst();
    }
  };

  /** Best effort: a token not given back lapses, which only leaves the budget under-used. */
  const giveBack = (count: number) => {
    if (count <= 0) return;
    giveBackToBudget(db, { name, count, burst: shape.burst }).catch((error: unknown) => log.warn({ err: error, count }, 'could not give unused request tokens back; they lapse'));
  };

  /** Gives the held tokens back once their time is up. */
  const armLapse = () => {
    clearTimeout(lapse);
    lapse = undefined;
    if (held === 0) return;
    lapse = setTimeout(
      () => {
        lapse = undefined;
        // Timers run on the real clock, the hold on the injected one: not yet, look again then.
        if (now() < heldUntil) return armLapse();
        const count = held;
        held = 0;
        giveBack(count);
      },
      Math.max(0, heldUntil - now()),
    );
    lapse.unref();
  };

  const scheduleAsk = (delayMs: number) => {
    clearTimeout(nextAsk);
    nextAsk = setTimeout(() => {
      nextAsk = undefined;
      ask();
    }, Math.max(0, delayMs));
  };

  /** When the budget's next whole token is due, by its answer: after any pause, once a whole token has refilled. */
  const dueAt = ({ tokens, refilledAt, pausedUntil: until }: BudgetTake) =>
    Math.max(until?.getTime() ?? 0, refilledAt.getTime() + Math.max(0, 1 - tokens) / shape.perMs);

  const refuseWaiting = (reason: string) =>
    waiters.refuseAll(() => new BrokerUnavailableError(`the shared request budget could not be read (${reason}); the request was not sent`, { notTaken: true }));

  const received = (answer: BudgetTake) => {
    // Closed meanwhile: what was granted lapses (a round trip's worth, once).
    if (closed) return;
    pausedUntil = Math.max(pausedUntil, answer.pausedUntil?.getTime() ?? 0);
    // Held tokens past their time go back now, before fresh ones would extend their hold.
    if (held > 0 && now() >= heldUntil) {
      giveBack(held);
      held = 0;
    }
    if (now() < pausedUntil) {
      // Paused (here, or by another instance): the broker refuses for now, and the budget was emptied.
      held = 0;
    } else if (answer.granted > 0) {
      held += answer.granted;
      heldUntil = now() + holdMs;
    }
    admitFromHeld();
    // More than the prefetch is left only when callers gave up during the round trip.
    if (held > prefetch) {
      giveBack(held - prefetch);
      held = prefetch;
    }
    armLapse();
    if (waiters.length > 0) scheduleAsk(Math.max(pausedUntil, dueAt(answer)) - now());
    options.onLook?.();
  };

  /** One round trip for every caller waiting now, and the prefetch. */
  function ask() {
    if (closed || asking || nextAsk || waiters.length === 0) return;
    admitFromHeld();
    if (waiters.length === 0) return;
    if (now() < pausedUntil) {
      scheduleAsk(pausedUntil - now());
      options.onLook?.();
      return;
    }
    const trip = {};
    asking = trip;
    const settle = () => {
      clearTimeout(askTimeout);
      const current = asking === trip;
      if (current) asking = undefined;
      return current;
    };
    askTimeout = setTimeout(() => {
      if (!settle()) return;
      log.warn({ answerTimeoutMs }, 'the shared request budget did not answer; refusing the waiting requests');
      refuseWaiting(`no answer within ${answerTimeoutMs} ms`);
    }, answerTimeoutMs);
    askTimeout.unref();
    const want = Math.min(Math.floor(shape.burst), waiters.length + prefetch);
    takeFromBudget(db, { name, want, at: clock.now(), ...shape }).then(
      (answer) => {
        settle();
        // A late answer (after its timeout) still counts: its tokens serve whoever waits now.
        received(answer);
      },
      (error: unknown) => {
        if (!settle()) return;
        log.warn({ err: error }, 'could not take from the shared request budget; refusing the waiting requests');
        refuseWaiting(error instanceof Error ? error.message : String(error));
      },
    );
  }

  return {
    take: (signal) => {
      const refusal = refusalBeforeQueueing(closed, signal);
      if (refusal) return Promise.reject(refusal);
      // A token held from an earlier round trip: no round trip at all.
      if (waiters.length === 0 && usable()) {
        held -= 1;
        return Promise.resolve();
      }
      const turn = waiters.wait(signal);
      // On the next turn of the event loop, so that callers arriving together share one round trip.
      if (!asking && !nextAsk) scheduleAsk(0);
      return turn;
    },
    pause: (forMs) => {
      const until = now() + pauseMsOf(forMs);
      if (closed || until <= pausedUntil) return;
      pausedUntil = until;
      held = 0;
      armLapse();
      pauseBudget(db, { name, until: new Date(until) }).catch((error: unknown) =>
        log.warn({ err: error }, 'could not pause the shared request budget; only this instance waits'),
      );
      // A round trip in flight schedules the next one itself, after the pause.
      if (waiters.length > 0 && !asking) scheduleAsk(until - now());
    },
    get waiting() {
      return waiters.length;
    },
    close: () => {
      closed = true;
      for (const timer of [nextAsk, lapse, askTimeout]) clearTimeout(timer);
      nextAsk = lapse = askTimeout = undefined;
      asking = undefined;
      held = 0;
      waiters.refuseAll(limiterClosed);
    },
  };
};

export interface SharedBudgetDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  answerTimeoutMs?: number;
}

/** A registry's factory whose limiters share their budgets through Postgres, each named by `nameOf(keyId)`. */
export const sharedBudgetLimiters =
  (deps: SharedBudgetDeps, nameOf: (keyId: string) => string): LimiterFactory =>
  (keyId, options) =>
    createSharedRequestLimiter({ ...options, ...deps, name: nameOf(keyId) });
