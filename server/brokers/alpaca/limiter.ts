// The outbound request limiter of one broker key: a token bucket every caller of that key draws
// from, so all users and adapters sharing a key stay under the rate the broker allows it. Born
// with the Alpaca adapter; the KIS and ccxt adapters use it too.
import { createWaiterQueue, limiterClosed, refusalBeforeQueueing } from '../limits/waiters.ts';

/** Alpaca's published Trading API limit per key. */
export const ALPACA_REQUESTS_PER_MINUTE = 200;

export interface TokenBucketOptions {
  /** Tokens added per minute, spread evenly. */
  requestsPerMinute: number;
  /** The most tokens held at once (the largest burst); defaults to a minute's worth. */
  burst?: number;
}

/**
 * The bucket's arithmetic, apart from any timer so a test can drive it with its own clock. Tokens
 * are whole requests; fractional refill is kept so a slow rate still adds up.
 */
export const createTokenBucket = ({ requestsPerMinute, burst = requestsPerMinute }: TokenBucketOptions, startMs: number) => {
  if (!(requestsPerMinute > 0) || !(burst >= 1)) throw new Error('a token bucket needs a positive rate and a burst of at least 1');
  const refillPerMs = requestsPerMinute / 60_000;
  let tokens = burst;
  let refilledAt = startMs;
  const refill = (nowMs: number) => {
    if (nowMs > refilledAt) tokens = Math.min(burst, tokens + (nowMs - refilledAt) * refillPerMs);
    refilledAt = Math.max(refilledAt, nowMs);
  };
  return {
    /** Takes a token and answers 0, or answers how many ms until one is due (taking nothing). */
    tryTake(nowMs: number): number {
      refill(nowMs);
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      // A pause leaves refilledAt in the future: nothing refills before it ends.
      const pausedMs = Math.max(0, refilledAt - nowMs);
      // The epsilon keeps float noise (1.0000000000000009 ms) from adding a whole millisecond.
      return Math.max(1, Math.ceil(pausedMs + (1 - tokens) / refillPerMs - 1e-6));
    },
    /**
     * Empties the bucket and refills nothing before `untilMs`: the broker said "too many", so our
     * idea of what is left was wrong, and the bucket starts again from empty when the pause ends.
     */
    pause(untilMs: number): void {
      tokens = 0;
      refilledAt = Math.max(refilledAt, untilMs);
    },
  };
};

/** The longest pause a Retry-After can impose (a broken header must not stop a key for days). */
export const MAX_PAUSE_MS = 10 * 60_000;

/** A pause's length as honoured: finite, not negative, at most MAX_PAUSE_MS. */
export const pauseMsOf = (forMs: number): number => (Number.isFinite(forMs) ? Math.min(MAX_PAUSE_MS, Math.max(0, forMs)) : MAX_PAUSE_MS);

export interface RequestLimiter {
  /** Resolves when the caller may send one request; rejects when the signal aborts or the limiter closes. */
  take(signal?: AbortSignal): Promise<void>;
  /**
   * Stops handing out tokens for `forMs` (a broker's 429 Retry-After), for every caller of the
   * key; afterwards the budget refills from empty. Capped at MAX_PAUSE_MS.
   */
  pause(forMs: number): void;
  /** Callers waiting for a token now. */
  readonly waiting: number;
  /** Rejects every waiting caller (BrokerUnavailableError) and every later one. */
  close(): void;
}

/** Waiting callers are served first come, first served, by one timer set for the next token. */
export const createRequestLimiter = (options: TokenBucketOptions, now: () => number = Date.now): RequestLimiter => {
  const bucket = createTokenBucket(options, now());
  const waiters = createWaiterQueue();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const drain = () => {
    timer = undefined;
    while (waiters.length > 0) {
      const waitMs = bucket.tryTake(now());
      if (waitMs > 0) {
        timer = setTimeout(drain, waitMs);
        return;
      }
      waiters.admitFirst();
    }
  };

  return {
    take: (signal) => {
      const refusal = refusalBeforeQueueing(closed, signal);
      if (refusal) return Promise.reject(refusal);
      // Nobody ahead: take straight away when a token is there (no timer, no tick lost).
      if (waiters.length === 0 && bucket.tryTake(now()) === 0) return Promise.resolve();
      const turn = waiters.wait(signal);
      timer ??= setTimeout(drain, 0);
      return turn;
    },
    // A drain timer set before the pause finds the bucket empty when it fires and waits again.
    pause: (forMs) => bucket.pause(now() + pauseMsOf(forMs)),
    get waiting() {
      return waiters.length;
    },
    close: () => {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      waiters.refuseAll(limiterClosed);
    },
  };
};

/** Makes the limiter of one key id: in-process by default, or over a budget shared through Postgres. */
export type LimiterFactory = (keyId: string, options: TokenBucketOptions) => RequestLimiter;

const inProcess: LimiterFactory = (_keyId, options) => createRequestLimiter(options);

/**
 * One limiter per key id, shared by everyone who asks for that key: the service builds one of
 * these and hands it to every adapter it makes, so two users of one key share one budget.
 */
export const createLimiterRegistry = (options: TokenBucketOptions = { requestsPerMinute: ALPACA_REQUESTS_PER_MINUTE }, build: LimiterFactory = inProcess) => {
  const byKeyId = new Map<string, RequestLimiter>();
  return {
    forKey: (keyId: string): RequestLimiter => {
      let limiter = byKeyId.get(keyId);
      if (!limiter) byKeyId.set(keyId, (limiter = build(keyId, options)));
      return limiter;
    },
    close: () => {
      for (const limiter of byKeyId.values()) limiter.close();
      byKeyId.clear();
    },
  };
};

export type LimiterRegistry = ReturnType<typeof createLimiterRegistry>;

/** The process's default registry, for adapters built without one. */
export const sharedLimiters: LimiterRegistry = createLimiterRegistry();
