// SQL of live promotion: the paper record readiness reads, and the confirm tokens (issued with
// the user's earlier active ones made inactive, consumed in one conditional update); today's live
// orders and the critical alerts the operator views read. The live flags and locks are the
// controls' (controls/queries.ts).
import { and, count, desc, eq, gt, gte, isNull, like, min, sql } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { criticalAlerts, liveConfirmTokens, orderRateCounters, orders, users } from '../db/schema/index.ts';

/** The user's paper record in an asset class: its first paper order and how many filled. */
export const paperRecordOf = async (db: Queryable, { userId, assetClass }: { userId: number; assetClass: TAssetClass }): Promise<{ firstAt: Date | null; filled: number }> => {
  const mine = and(eq(orders.userId, userId), eq(orders.assetClass, assetClass), eq(orders.live, false));
  const [row] = await db
    .select({ firstAt: min(orders.submittedAt), filled: count(sql`case when ${orders.status} = 'filled' then 1 end`) })
    .from(orders)
    .where(mine);
  return { firstAt: row?.firstAt ?? null, filled: row?.filled ?? 0 };
};

/** Makes every active token of the user inactive, then stores the new one's hash. */
export const issueToken = async (
  tx: Queryable,
  { userId, assetClass, tokenHash, expiresAt, delivery, at }: { userId: number; assetClass: TAssetClass; tokenHash: string; expiresAt: Date; delivery: 'email' | 'log'; at: Date },
): Promise<number> => {
  // The user's row lock orders two issues of one user: the second sees the first's token and makes it inactive.
  await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
  await tx
    .update(liveConfirmTokens)
    .set({ supersededAt: at })
    .where(and(eq(liveConfirmTokens.userId, userId), isNull(liveConfirmTokens.consumedAt), isNull(liveConfirmTokens.supersededAt), gt(liveConfirmTokens.expiresAt, at)));
  const [row] = await tx.insert(liveConfirmTokens).values({ userId, assetClass, tokenHash, expiresAt, delivery, createdAt: at }).returning({ id: liveConfirmTokens.id });
  return row!.id;
};

/** Withdraws a token that could not be delivered. */
export const withdrawToken = async (db: Queryable, { userId, id, at }: { userId: number; id: number; at: Date }): Promise<void> => {
  await db.update(liveConfirmTokens).set({ supersededAt: at }).where(and(eq(liveConfirmTokens.userId, userId), eq(liveConfirmTokens.id, id)));
};

/**
 * Consumes the caller's token when it is active (not consumed, not inactive, not expired), in one
 * statement: of two enables with one token, the row lock lets exactly one match. Returns its
 * asset class, or undefined when it was not the caller's active token.
 */
export const consumeToken = async (tx: Queryable, { userId, tokenHash, at }: { userId: number; tokenHash: string; at: Date }): Promise<TAssetClass | undefined> =>
  (
    await tx
      .update(liveConfirmTokens)
      .set({ consumedAt: at })
      .where(
        and(
          eq(liveConfirmTokens.userId, userId),
          eq(liveConfirmTokens.tokenHash, tokenHash),
          isNull(liveConfirmTokens.consumedAt),
          isNull(liveConfirmTokens.supersededAt),
          gt(liveConfirmTokens.expiresAt, at),
        ),
      )
      .returning({ assetClass: liveConfirmTokens.assetClass })
  )[0]?.assetClass;

// --- the operator overview: reads across users (an operator's view, never a user's) ---

const OVERVIEW_ROWS = 500;

/** A user's live-order counters (the daily limit's), every asset class. */
export const liveOrderCountersOf = (db: Queryable, { userId }: { userId: number }) =>
  db
    .select()
    .from(orderRateCounters)
    .where(and(eq(orderRateCounters.userId, userId), sql`${orderRateCounters.scope} like 'live:%'`));

/** Today's live-order counters (the daily limit's), per user and asset class. */
export const listLiveOrderCounts = async (db: Queryable, { since }: { since: Date }): Promise<{ userId: number; assetClass: TAssetClass; count: number }[]> => {
  const rows = await db
    .select({ userId: orderRateCounters.userId, scope: orderRateCounters.scope, count: orderRateCounters.count })
    .from(orderRateCounters)
    .where(and(like(orderRateCounters.scope, 'live:%'), gte(orderRateCounters.windowStart, since), gt(orderRateCounters.count, 0)))
    .orderBy(desc(orderRateCounters.count))
    .limit(OVERVIEW_ROWS);
  return rows.map((row) => ({ userId: row.userId, assetClass: row.scope.slice('live:'.length) as TAssetClass, count: row.count }));
};

/** A page of critical alerts, newest first: everyone's or one user's, of one kind or all. */
export const listCriticalAlerts = async (db: Queryable, { userId, kind, page, size }: { userId: number | undefined; kind: string | undefined; page: number; size: number }) => {
  const where = and(userId === undefined ? undefined : eq(criticalAlerts.userId, userId), kind === undefined ? undefined : eq(criticalAlerts.kind, kind));
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(criticalAlerts)
      .where(where)
      .orderBy(desc(criticalAlerts.createdAt), desc(criticalAlerts.id))
      .limit(size)
      .offset((page - 1) * size),
    db.select({ total: count() }).from(criticalAlerts).where(where),
  ]);
  return { rows, total: counted?.total ?? 0 };
};

export const listRecentCriticalAlerts = (db: Queryable, { limit }: { limit: number }) => db.select().from(criticalAlerts).orderBy(desc(criticalAlerts.createdAt), desc(criticalAlerts.id)).limit(limit);
