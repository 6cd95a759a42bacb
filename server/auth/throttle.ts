// Failed-login throttling, kept in the database so it holds across API instances: after
// LOGIN_MAX_FAILURES failures for one username from one address within LOGIN_WINDOW_MIN, login
// answers 429 until the oldest failure in the window ages out.
import { and, count, eq, gte, lt, min } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.ts';
import { loginFailures } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';

export interface LoginThrottle {
  /** Throws 429 RATE_LIMIT_EXCEEDED with Retry-After when the pair is over the limit. */
  check(usernameKey: string, address: string): Promise<void>;
  /** Records a failure inside the caller's transaction (with its audit record). */
  recordFailure(tx: Tx, usernameKey: string, address: string): Promise<void>;
  clear(tx: Tx, usernameKey: string, address: string): Promise<void>;
}

export const createLoginThrottle = ({ db, maxFailures, windowMin }: { db: Db; maxFailures: number; windowMin: number }): LoginThrottle => {
  const windowMs = windowMin * 60_000;
  const pair = (usernameKey: string, address: string) =>
    and(eq(loginFailures.usernameKey, usernameKey), eq(loginFailures.address, address));

  return {
    check: async (usernameKey, address) => {
      const since = new Date(Date.now() - windowMs);
      const [row] = await db
        .select({ failures: count(), oldest: min(loginFailures.failedAt) })
        .from(loginFailures)
        .where(and(pair(usernameKey, address), gte(loginFailures.failedAt, since)));
      if (!row || row.failures < maxFailures || !row.oldest) return;
      const retryAfterSec = Math.max(1, Math.ceil((new Date(row.oldest).getTime() + windowMs - Date.now()) / 1000));
      throw new AppError('RATE_LIMIT_EXCEEDED', 'Too many failed logins; try again later', { retryAfterSec });
    },
    recordFailure: async (tx, usernameKey, address) => {
      // Rows older than the window can never count again: drop them as we go.
      await tx.delete(loginFailures).where(and(pair(usernameKey, address), lt(loginFailures.failedAt, new Date(Date.now() - windowMs))));
      await tx.insert(loginFailures).values({ usernameKey, address });
    },
    clear: async (tx, usernameKey, address) => {
      await tx.delete(loginFailures).where(pair(usernameKey, address));
    },
  };
};
