// SQL of the trading controls: the users' live flags, the emergency locks, the day-start
// equity snapshots and the flows beside them. The only module that knows these tables: the order gates, the paper reset,
// the bot, the kill switch and the operator views read and write them through it. The lock in
// particular is read here only, in the three ways the order path needs: a live order's preflight
// embeds lockedUntilMsSql, a paper order's intent statement embeds runningLockSql (so the check is
// atomic with its write), and the risk gate, like the paper reset, calls findLock.
import { and, asc, eq, gt, lte, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { AccountEquity } from '../brokers/types.ts';
import { rowsOf, type Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { ExactDecimal } from '../decimal.ts';
import { accountFlows, emergencyLocks, equitySnapshots, liveFlags, users } from '../db/schema/index.ts';

interface UserAssetClass {
  userId: number;
  assetClass: TAssetClass;
}

/** How many rows an operator's list shows at most. */
const OVERVIEW_ROWS = 500;

// --- live flags ---

export const setLiveEnabled = async (db: Queryable, { userId, assetClass, enabled, at }: UserAssetClass & { enabled: boolean; at: Date }): Promise<void> => {
  await db
    .insert(liveFlags)
    .values({ userId, assetClass, liveEnabled: enabled, updatedAt: at })
    .onConflictDoUpdate({ target: [liveFlags.userId, liveFlags.assetClass], set: { liveEnabled: enabled, updatedAt: at } });
};

/** Marks the first live order of the user and asset class; true only for the call that marked it. */
export const markFirstLiveOrder = async (db: Queryable, { userId, assetClass, at }: UserAssetClass & { at: Date }): Promise<boolean> =>
  (
    await db
      .update(liveFlags)
      .set({ firstLiveOrderAt: at, updatedAt: at })
      .where(and(eq(liveFlags.userId, userId), eq(liveFlags.assetClass, assetClass), sql`${liveFlags.firstLiveOrderAt} is null`))
      .returning({ userId: liveFlags.userId })
  ).length > 0;

/** The user's live flag for the asset class (null without a row), as a scalar subquery of a larger read. */
export const liveEnabledSql = ({ userId, assetClass }: UserAssetClass) => fixedSql`(select live_enabled from ${liveFlags} where user_id = ${userId} and asset_class = ${assetClass})`;

/** Everyone with live trading enabled (an operator's view). */
export const listLiveEnabled = (db: Queryable) =>
  db
    .select({ userId: liveFlags.userId, username: users.username, assetClass: liveFlags.assetClass, firstLiveOrderAt: liveFlags.firstLiveOrderAt })
    .from(liveFlags)
    .innerJoin(users, eq(users.id, liveFlags.userId))
    .where(eq(liveFlags.liveEnabled, true))
    .orderBy(asc(liveFlags.userId), asc(liveFlags.assetClass))
    .limit(OVERVIEW_ROWS);

// --- the emergency lock: every read and write of it ---

/** The account's lock, whether or not it has run out. */
export const findLock = async (db: Queryable, { userId, assetClass }: UserAssetClass) =>
  (await db.select().from(emergencyLocks).where(and(eq(emergencyLocks.userId, userId), eq(emergencyLocks.assetClass, assetClass))))[0];

/**
 * The end of the account's lock in epoch milliseconds (whether or not it has run out; null
 * without one), as a scalar subquery: what a live order's preflight reads beside its id and flag.
 */
export const lockedUntilMsSql = ({ userId, assetClass }: UserAssetClass) =>
  fixedSql`(select extract(epoch from locked_until) * 1000 from ${emergencyLocks} where user_id = ${userId} and asset_class = ${assetClass})::float8`;

/**
 * The account's lock while it runs at `at`, as one row of `locked_until_ms` (no row otherwise): the
 * check a paper order's intent statement makes atomically with its write.
 */
export const runningLockSql = ({ userId, assetClass, at }: UserAssetClass & { at: Date }) =>
  fixedSql`select (extract(epoch from locked_until) * 1000)::float8 as locked_until_ms from ${emergencyLocks}
        where user_id = ${userId}::integer and asset_class = ${assetClass}::text and locked_until > ${at.toISOString()}::timestamptz`;

export const setLock = async (db: Queryable, values: UserAssetClass & { lockedUntil: Date; reason: string; at: Date }): Promise<void> => {
  const { at, ...fields } = values;
  await db
    .insert(emergencyLocks)
    .values({ ...fields, createdAt: at })
    .onConflictDoUpdate({ target: [emergencyLocks.userId, emergencyLocks.assetClass], set: { lockedUntil: fields.lockedUntil, reason: fields.reason, createdAt: at } });
};

/** Ends the account's emergency lock; whether there was one. */
export const clearLock = async (db: Queryable, { userId, assetClass }: UserAssetClass): Promise<boolean> =>
  (await db.delete(emergencyLocks).where(and(eq(emergencyLocks.userId, userId), eq(emergencyLocks.assetClass, assetClass))).returning({ userId: emergencyLocks.userId })).length > 0;

/** The locks still running at `at`, soonest end first (the operator overview, the kill switch's sweep). */
export const listActiveLocks = (db: Queryable, { at }: { at: Date }) =>
  db
    .select({ userId: emergencyLocks.userId, username: users.username, assetClass: emergencyLocks.assetClass, lockedUntil: emergencyLocks.lockedUntil, reason: emergencyLocks.reason, lockedAt: emergencyLocks.createdAt })
    .from(emergencyLocks)
    .innerJoin(users, eq(users.id, emergencyLocks.userId))
    .where(gt(emergencyLocks.lockedUntil, at))
    .orderBy(asc(emergencyLocks.lockedUntil))
    .limit(OVERVIEW_ROWS);

/** A user's live flags and locks, every asset class, in one read each. */
export const controlsOf = async (db: Queryable, { userId }: { userId: number }) => {
  const [flags, locks] = await Promise.all([db.select().from(liveFlags).where(eq(liveFlags.userId, userId)), db.select().from(emergencyLocks).where(eq(emergencyLocks.userId, userId))]);
  return { flags, locks };
};

// --- day-start equity ---

interface AccountDay extends UserAssetClass {
  mode: TTradingMode;
  /** The UTC day, 'YYYY-MM-DD'. */
  day: string;
}

/** The day-start equity of an account: taken at the first evaluation of the UTC day, kept after. */
export const dayStartEquity = async (db: Queryable, { userId, assetClass, mode, day, equity, cash, at }: AccountDay & { equity: string; cash?: string | undefined; at: Date }): Promise<string> => {
  await db.insert(equitySnapshots).values({ userId, assetClass, mode, day, equity, cash: cash ?? null, takenAt: at }).onConflictDoNothing();
  const [row] = await db
    .select({ equity: equitySnapshots.equity })
    .from(equitySnapshots)
    .where(and(eq(equitySnapshots.userId, userId), eq(equitySnapshots.assetClass, assetClass), eq(equitySnapshots.mode, mode), eq(equitySnapshots.day, day)));
  return row?.equity ?? equity;
};

/** The account's day-start equity of a UTC day, when taken: a read that takes none. */
export const findDayStartEquity = async (db: Queryable, { userId, assetClass, mode, day }: AccountDay): Promise<string | null> =>
  (
    await db
      .select({ equity: equitySnapshots.equity })
      .from(equitySnapshots)
      .where(and(eq(equitySnapshots.userId, userId), eq(equitySnapshots.assetClass, assetClass), eq(equitySnapshots.mode, mode), eq(equitySnapshots.day, day)))
  )[0]?.equity ?? null;

export interface AccountDayStart {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  dayStartEquity: string;
}

/**
 * Takes today's day-start snapshot of every account that has none yet (this evaluation is its
 * first of the UTC day, and its equity now is the snapshot), and returns every account's stored
 * snapshot of the day. One statement, whatever the number of accounts: the equities travel as one
 * JSON parameter.
 */
export const takeDayStarts = async (db: Queryable, { accounts, day, at }: { accounts: AccountEquity[]; day: string; at: Date }): Promise<AccountDayStart[]> => {
  if (accounts.length === 0) return [];
  const json = JSON.stringify(accounts.map((account) => ({ user_id: account.userId, asset_class: account.assetClass, mode: account.mode, equity: account.equity, cash: account.cash ?? null })));
  const rows = await rowsOf<{ user_id: number; asset_class: TAssetClass; mode: TTradingMode; start: string }>(
    db,
    sql`with now_equity as (select * from jsonb_to_recordset(${json}::jsonb) as e(user_id integer, asset_class text, mode text, equity numeric, cash numeric)),
      taken as (
        insert into ${equitySnapshots} (user_id, asset_class, mode, day, equity, cash, taken_at)
        select user_id, asset_class, mode, ${day}::date, equity, cash, ${at.toISOString()}::timestamptz from now_equity
        on conflict do nothing
        returning user_id, asset_class, mode, equity
      )
      select user_id, asset_class, mode, equity::text as start from taken
      union all
      select s.user_id, s.asset_class, s.mode, s.equity::text as start
      from now_equity e
      join ${equitySnapshots} s on s.user_id = e.user_id and s.asset_class = e.asset_class and s.mode = e.mode and s.day = ${day}::date`,
  );
  return rows.map((row) => ({ userId: row.user_id, assetClass: row.asset_class, mode: row.mode, dayStartEquity: row.start }));
};

// --- flows ---

/**
 * Records a paper reset as a flow, in the reset's transaction: the equity it added or removed. When
 * the day has no snapshot yet, the reset is the day's first evaluation and the equity before it is
 * the snapshot (never the equity after it: that would count the reset's flow twice).
 */
export const recordResetFlow = async (
  tx: Queryable,
  { userId, assetClass, mode, day, equityBefore, cashBefore, equityAfter, at }: AccountDay & { equityBefore: string; cashBefore: string; equityAfter: string; at: Date },
): Promise<void> => {
  await tx.insert(equitySnapshots).values({ userId, assetClass, mode, day, equity: equityBefore, cash: cashBefore, takenAt: at }).onConflictDoNothing();
  const amount = new ExactDecimal(equityAfter).minus(equityBefore).toFixed();
  await tx.insert(accountFlows).values({ userId, assetClass, mode, day, kind: 'reset', amount, equityBefore, equityAfter, at });
};

/**
 * The sum of an account's flows of a UTC day up to `through` (the account's last reset as its
 * broker answered with the equity), so the flows read match that equity even when another reset
 * committed since.
 */
export const dayFlowsThrough = async (db: Queryable, { userId, assetClass, mode, day, through }: AccountDay & { through: Date }): Promise<string> =>
  (
    await db
      .select({ total: sql<string>`coalesce(sum(${accountFlows.amount}), 0)::text` })
      .from(accountFlows)
      .where(and(eq(accountFlows.userId, userId), eq(accountFlows.assetClass, assetClass), eq(accountFlows.mode, mode), eq(accountFlows.day, day), lte(accountFlows.at, through)))
  )[0]?.total ?? '0';
