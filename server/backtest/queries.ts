// SQL of stored backtest results: the only module that knows their table.
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { backtestResults, backtestSweeps, type BacktestResultRow } from '../db/schema/index.ts';

export type BacktestInsert = typeof backtestResults.$inferInsert;

export const insertResult = async (db: Queryable, values: BacktestInsert): Promise<void> => {
  await db.insert(backtestResults).values(values);
};

export const findResult = async (db: Queryable, { userId, id, assetClasses }: { userId: number; id: string; assetClasses: readonly TAssetClass[] }): Promise<BacktestResultRow | undefined> =>
  (await db.select().from(backtestResults).where(and(eq(backtestResults.userId, userId), eq(backtestResults.id, id), inArray(backtestResults.assetClass, [...assetClasses]))))[0];

/** The user's results of these asset classes, newest first, without their curves and trades. */
export const listResults = async (
  db: Queryable,
  { userId, assetClasses, symbol, strategy, page, size }: { userId: number; assetClasses: readonly TAssetClass[]; symbol?: string; strategy?: string; page: number; size: number },
) => {
  const where = and(
    eq(backtestResults.userId, userId),
    inArray(backtestResults.assetClass, [...assetClasses]),
    symbol === undefined ? undefined : eq(backtestResults.symbol, symbol),
    strategy === undefined ? undefined : eq(backtestResults.strategyName, strategy),
  );
  const summary = {
    id: backtestResults.id,
    assetClass: backtestResults.assetClass,
    symbol: backtestResults.symbol,
    strategyName: backtestResults.strategyName,
    profileName: backtestResults.profileName,
    currency: backtestResults.currency,
    startDate: backtestResults.startDate,
    endDate: backtestResults.endDate,
    totalReturnPct: backtestResults.totalReturnPct,
    sharpeRatio: backtestResults.sharpeRatio,
    maxDrawdownPct: backtestResults.maxDrawdownPct,
    winRate: backtestResults.winRate,
    totalTrades: backtestResults.totalTrades,
    createdAt: backtestResults.createdAt,
  };
  const rows = await db.select(summary).from(backtestResults).where(where).orderBy(desc(backtestResults.createdAt), desc(backtestResults.id)).limit(size).offset((page - 1) * size);
  const [total] = await db.select({ n: count() }).from(backtestResults).where(where);
  return { rows, total: total?.n ?? 0 };
};

export const insertSweep = async (db: Queryable, values: typeof backtestSweeps.$inferInsert): Promise<void> => {
  await db.insert(backtestSweeps).values(values);
};

export const findSweep = async (db: Queryable, { userId, id }: { userId: number; id: string }) =>
  (await db.select().from(backtestSweeps).where(and(eq(backtestSweeps.userId, userId), eq(backtestSweeps.id, id))))[0];

/**
 * The user's sweeps, newest first: each one's answer without its points (a sweep holds up to
 * a thousand), its point and skip counts, and its first-ranked point.
 */
export const listSweeps = async (db: Queryable, { userId, symbol, strategy, page, size }: { userId: number; symbol?: string; strategy?: string; page: number; size: number }) => {
  const where = and(
    eq(backtestSweeps.userId, userId),
    symbol === undefined ? undefined : eq(backtestSweeps.symbol, symbol),
    strategy === undefined ? undefined : eq(backtestSweeps.strategyName, strategy),
  );
  const rows = await db
    .select({
      id: backtestSweeps.id,
      createdAt: backtestSweeps.createdAt,
      head: sql<Record<string, unknown>>`${backtestSweeps.result} - 'points' - 'skipped'`,
      pointsTotal: sql<number>`jsonb_array_length(${backtestSweeps.result} -> 'points')`.mapWith(Number),
      skippedTotal: sql<number>`jsonb_array_length(${backtestSweeps.result} -> 'skipped')`.mapWith(Number),
      best: sql<Record<string, unknown> | null>`${backtestSweeps.result} -> 'points' -> 0`,
    })
    .from(backtestSweeps)
    .where(where)
    .orderBy(desc(backtestSweeps.createdAt), desc(backtestSweeps.id))
    .limit(size)
    .offset((page - 1) * size);
  const [total] = await db.select({ n: count() }).from(backtestSweeps).where(where);
  return { rows, total: total?.n ?? 0 };
};
