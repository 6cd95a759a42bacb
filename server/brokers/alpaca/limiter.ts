// The outbound request limiter of one broker key: a token bucket every caller of that key draws
// from, so all users and adapters sharing a key stay under the rate the broker allows it. Born
// with the Alpaca adapter; the KIS and ccxt adapters use it too.
import { BrokerUnavailableError } from '../types.ts';

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
      // The epsilon keeps float noise (1.0000000000000009 ms) from adding a whole millisecond.
      return Math.max(1, Math.ceil((1 - tokens) / refillPerMs - 1e-6));
    },
  };
};

export interface RequestLimiter {
  /** Resolves when the caller may send one request; rejects when the signal aborts or the limiter closes. */
  take(signal?: AbortSignal): Promise<void>;
  /** Callers waiting for a token now. */
  readonly waiting: number;
  /** Rejects every waiting caller (BrokerUnavailableError) and every later one. */
  close(): void;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Waiting callers are served first come, first served, by one timer set for the next token. */
export const createRequestLimiter = (options: TokenBucketOptions, now: () => number = Date.now): RequestLimiter => {
  const bucket = createTokenBucket(options, now());
  const queue: Waiter[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const drain = () => {
    timer = undefined;
    while (queue.length > 0) {
      const waitMs = bucket.tryTake(now());
      if (waitMs > 0) {
        timer = setTimeout(drain, waitMs);
        return;
      }
      queue.shift()!.resolve();
    }
  };

  return {
    take: (signal) => {
      if (closed) return Promise.reject(new BrokerUnavailableError('the request limiter of this key is closed (the service is stopping)'));
      if (signal?.aborted) return Promise.reject(new BrokerUnavailableError('the request was abandoned while waiting for the rate limit'));
      // Nobody ahead: take straight away when a token is there (no timer, no tick lost).
      if (queue.length === 0 && bucket.tryTake(now()) === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          reject(new BrokerUnavailableError('the request was abandoned while waiting for the rate limit'));
        };
        const waiter: Waiter = {
          resolve: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          reject,
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
        timer ??= setTimeout(drain, 0);
      });
    },
    get waiting() {
      return queue.length;
    },
    close: () => {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      for (const waiter of queue.splice(0)) waiter.reject(new BrokerUnavailableError('the request limiter of this key is closed (the service is stopping)'));
    },
  };
};

/**
 * One limiter per key id, shared by everyone who asks for that key: the service builds one of
 * these and hands it to every adapter it makes, so two users of one key share one budget.
 */
export const createLimiterRegistry = (options: TokenBucketOptions = { requestsPerMinute: ALPACA_REQUESTS_PER_MINUTE }) => {
  const byKeyId = new Map<string, RequestLimiter>();
  return {
    forKey: (keyId: string): RequestLimiter => {
      let limiter = byKeyId.get(keyId);
      if (!limiter) byKeyId.set(keyId, (limiter = createRequestLimiter(options)));
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
