// SQL of the rate counters (the order gates', a signal hook's calls): a claim of one unit in a window (on its own, or folded into the
// intent statement of orders/write-queries.ts), the window's start for Retry-After, and a unit given back.
import { and, eq, sql } from 'drizzle-orm';
import { rowsOf, type Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { orderRateCounters } from '../db/schema/index.ts';

/**
 * Counts one unit on a rate counter unless it already holds `max` in its window, in one statement
 * under the row's lock (parallel requests are counted one after another). Returns whether it was
 * counted, and when the window started.
 */
/** A rate claim: one unit of `scope` for the user, counted in a window that starts at `windowStart` or later. */
export interface RateClaim {
  userId: number;
  scope: string;
  windowStart: Date;
  at: Date;
  max: number;
}

/**
 * Counts one unit when the window has room (or has run out, which starts a new one at `at`);
 * returns the window's start when counted, no row when the limit is reached.
 */
/**
 * One unit of a rate window: counted when the window has room or has run out (a new window then
 * starts at `at`); no row comes back when the window is full.
 */
export const claimSql = ({ userId, scope, windowStart, at, max }: RateClaim) => {
  const stale = fixedSql`${orderRateCounters.windowStart} < ${windowStart.toISOString()}::timestamptz`;
  return fixedSql`insert into ${orderRateCounters} (user_id, scope, window_start, count) values (${userId}::integer, ${scope}::text, ${at.toISOString()}::timestamptz, 1)
    on conflict (user_id, scope) do update set
      count = case when ${stale} then 1 else ${orderRateCounters.count} + 1 end,
      window_start = case when ${stale} then ${at.toISOString()}::timestamptz else ${orderRateCounters.windowStart} end
    where ${stale} or ${orderRateCounters.count} < ${max}::integer
    returning (extract(epoch from window_start) * 1000)::float8 as window_start_ms`;
};

/** When the window that refused a claim started (for Retry-After). */
export const rateWindowStart = async (db: Queryable, { userId, scope, at }: { userId: number; scope: string; at: Date }): Promise<Date> => {
  const [held] = await db.select({ windowStart: orderRateCounters.windowStart }).from(orderRateCounters).where(and(eq(orderRateCounters.userId, userId), eq(orderRateCounters.scope, scope)));
  return held?.windowStart ?? at;
};

export const claimRate = async (db: Queryable, claim: RateClaim): Promise<{ counted: boolean; windowStartedAt: Date }> => {
  const [row] = await rowsOf<{ window_start_ms: number }>(db, claimSql(claim));
  if (row) return { counted: true, windowStartedAt: new Date(row.window_start_ms) };
  return { counted: false, windowStartedAt: await rateWindowStart(db, claim) };
};

/** Gives back a unit claimed for an attempt that did not end in an accepted order. */
export const releaseRate = async (db: Queryable, { userId, scope }: { userId: number; scope: string }): Promise<void> => {
  await db
    .update(orderRateCounters)
    .set({ count: sql`greatest(${orderRateCounters.count} - 1, 0)` })
    .where(and(eq(orderRateCounters.userId, userId), eq(orderRateCounters.scope, scope)));
};
