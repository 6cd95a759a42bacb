// SQL of stored backtest results: the only module that knows their table.
import { and, count, desc, eq, inArray } from 'drizzle-orm';
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
