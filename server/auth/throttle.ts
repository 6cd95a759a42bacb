// Throttling of credential checks, kept in the database so it holds across API instances: after
// LOGIN_MAX_FAILURES failed attempts on one key within LOGIN_WINDOW_MIN, further attempts answer
// 429 until the window ends, even with the right password. An attempt is counted before the
// password is verified (and the count reset when it proves right), so parallel guesses cannot
// slip past the limit between a check and a write.
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { claimAttempt, clearAttempts, throttleWindowStart, type ThrottleKey } from './queries.ts';

export type { ThrottleKey };

export interface Throttle {
  /** Counts an attempt on the key, or throws 429 RATE_LIMIT_EXCEEDED with Retry-After. */
  admit(key: ThrottleKey): Promise<void>;
  /** Forgets the key's failures (a proven password), inside the caller's transaction. */
  reset(tx: Queryable, key: ThrottleKey): Promise<void>;
  readonly windowMs: number;
}

export const createThrottle = ({ db, clock, maxFailures, windowMin }: { db: Db; clock: Clock; maxFailures: number; windowMin: number }): Throttle => {
  const windowMs = windowMin * 60_000;
  return {
    windowMs,
    admit: async (key) => {
      const at = clock.now();
      const windowStart = new Date(at.getTime() - windowMs);
      if (await claimAttempt(db, { ...key, at, windowStart, max: maxFailures })) return;
      const startedAt = (await throttleWindowStart(db, key)) ?? at;
      const retryAfterSec = Math.max(1, Math.ceil((startedAt.getTime() + windowMs - at.getTime()) / 1000));
      throw new AppError('RATE_LIMIT_EXCEEDED', 'Too many failed attempts; try again later', { retryAfterSec });
    },
    reset: (tx, key) => clearAttempts(tx, key),
  };
};
