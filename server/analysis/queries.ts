// SQL of the analysis area: reports, their traces, the analysis queue, the spend per user and day
// that the daily budgets read, and the token bucket of the analysis rate limit. The only module that knows these
// tables.
import { and, asc, count, desc, eq, gte, inArray, lte, sql, sum } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { analysisQueue, analysisRateBuckets, analysisReports, analysisSpend, analysisTraces, type AnalysisReportRow, type AnalysisTraceRow } from '../db/schema/index.ts';

export type { AnalysisReportRow, AnalysisTraceRow };
export type ReportInsert = typeof analysisReports.$inferInsert;
export type TraceInsert = typeof analysisTraces.$inferInsert;

const reportIs = ({ userId, reportId }: { userId: number; reportId: string }) => and(eq(analysisReports.userId, userId), eq(analysisReports.id, reportId));

/** Inserts a report; the row as stored (its defaults filled in). */
export const insertReport = async (db: Queryable, values: ReportInsert): Promise<AnalysisReportRow> => (await db.insert(analysisReports).values(values).returning())[0]!;

export const findReport = async (db: Queryable, key: { userId: number; reportId: string }): Promise<AnalysisReportRow | undefined> =>
  (await db.select().from(analysisReports).where(reportIs(key)))[0];

export const listReports = async (
  db: Queryable,
  { userId, assetClass, symbol, from, to, page, size }: { userId: number; assetClass?: TAssetClass; symbol?: string; from?: Date; to?: Date; page: number; size: number },
): Promise<{ rows: AnalysisReportRow[]; total: number }> => {
  const where = and(
    eq(analysisReports.userId, userId),
    assetClass === undefined ? undefined : eq(analysisReports.assetClass, assetClass),
    symbol === undefined ? undefined : eq(analysisReports.symbol, symbol),
    from === undefined ? undefined : gte(analysisReports.requestedAt, from),
    to === undefined ? undefined : lte(analysisReports.requestedAt, to),
  );
  const [rows, [totals]] = await Promise.all([
    db
      .select()
      .from(analysisReports)
      .where(where)
      .orderBy(desc(analysisReports.requestedAt), desc(analysisReports.id))
      .limit(size)
      .offset((page - 1) * size),
    db.select({ total: count() }).from(analysisReports).where(where),
  ]);
  return { rows, total: totals?.total ?? 0 };
};

/**
 * Moves a queued report (or one a dead worker left running) to running and returns it; undefined
 * when it is neither (deleted, or finished by an earlier attempt).
 */
export const startReport = async (db: Queryable, key: { userId: number; reportId: string }, at: Date): Promise<AnalysisReportRow | undefined> =>
  (
    await db
      .update(analysisReports)
      .set({ status: 'running', startedAt: at })
      .where(and(reportIs(key), inArray(analysisReports.status, ['queued', 'running'])))
      .returning()
  )[0];

/** Records how a run ended; false when the report is gone (deleted while it ran). */
export const finishReport = async (
  db: Queryable,
  key: { userId: number; reportId: string },
  fields: Partial<
    Pick<
      ReportInsert,
      'status' | 'score' | 'decision' | 'confidence' | 'costUsd' | 'tokensInput' | 'tokensOutput' | 'outputs' | 'dashboardMd' | 'errorMessage' | 'dataFrom' | 'dataTo' | 'completedAt' | 'model'
    >
  >,
): Promise<boolean> => (await db.update(analysisReports).set(fields).where(reportIs(key)).returning({ id: analysisReports.id })).length > 0;

/** Starts a run afresh (a worker retrying a job killed mid-run): its traces go, the report stays. */
export const clearTraces = async (db: Queryable, key: { userId: number; reportId: string }): Promise<void> => {
  await db.delete(analysisTraces).where(and(eq(analysisTraces.userId, key.userId), eq(analysisTraces.reportId, key.reportId)));
};

export const insertTrace = async (db: Queryable, values: TraceInsert): Promise<void> => {
  await db.insert(analysisTraces).values(values);
};

export const tracesOf = (db: Queryable, key: { userId: number; reportId: string }): Promise<AnalysisTraceRow[]> =>
  db
    .select()
    .from(analysisTraces)
    .where(and(eq(analysisTraces.userId, key.userId), eq(analysisTraces.reportId, key.reportId)))
    .orderBy(asc(analysisTraces.stepIndex));

export const insertQueueRow = async (db: Queryable, values: { userId: number; reportId: string; priority: number; createdAt: Date }): Promise<number> => {
  const [row] = await db.insert(analysisQueue).values(values).returning({ id: analysisQueue.id });
  return row!.id;
};

export const setQueueJob = async (db: Queryable, { queueId, jobId }: { queueId: number; jobId: string }): Promise<void> => {
  await db.update(analysisQueue).set({ jobId }).where(eq(analysisQueue.id, queueId));
};

/** Deletes the report with its traces and queue rows; the pg-boss jobs of those rows, for cancelling. */
export const deleteReport = async (db: Queryable, key: { userId: number; reportId: string }): Promise<{ deleted: boolean; jobIds: string[] }> => {
  const removed = await db.delete(analysisReports).where(reportIs(key)).returning({ id: analysisReports.id });
  if (removed.length === 0) return { deleted: false, jobIds: [] };
  await db.delete(analysisTraces).where(and(eq(analysisTraces.userId, key.userId), eq(analysisTraces.reportId, key.reportId)));
  const queued = await db
    .delete(analysisQueue)
    .where(and(eq(analysisQueue.userId, key.userId), eq(analysisQueue.reportId, key.reportId)))
    .returning({ jobId: analysisQueue.jobId });
  return { deleted: true, jobIds: queued.flatMap((row) => (row.jobId ? [row.jobId] : [])) };
};

/** The UTC day an instant falls on, as the spend rows are keyed. */
export const utcDayOf = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Adds what a run cost (a decimal string) to its user's spend on `day`: one upsert, whose row lock
 * serialises the runs of a user that end together. Nothing ever takes from it.
 */
export const addSpend = async (db: Queryable, { userId, day, costUsd }: { userId: number; day: string; costUsd: string }): Promise<void> => {
  await db
    .insert(analysisSpend)
    .values({ userId, day, spentUsd: costUsd })
    .onConflictDoUpdate({ target: [analysisSpend.userId, analysisSpend.day], set: { spentUsd: sql`${analysisSpend.spentUsd} + excluded.spent_usd` } });
};

/** What the user's reports requested on `day` cost, as a decimal string: one row. */
export const userSpentOn = async (db: Queryable, { userId, day }: { userId: number; day: string }): Promise<string> =>
  (await db.select({ spent: analysisSpend.spentUsd }).from(analysisSpend).where(and(eq(analysisSpend.userId, userId), eq(analysisSpend.day, day))))[0]?.spent ?? '0';

/** What everyone's reports requested on `day` cost, as a decimal string: a row per user who spent that day. */
export const globalSpentOn = async (db: Queryable, { day }: { day: string }): Promise<string> =>
  (await db.select({ spent: sum(analysisSpend.spentUsd) }).from(analysisSpend).where(eq(analysisSpend.day, day)))[0]?.spent ?? '0';

/**
 * Takes one token from the user's bucket (capacity `capacity`, refilled at `capacity` a minute);
 * when it is empty, the seconds until a token is back. One upsert: the row's lock serialises
 * parallel requests on any instance, so no more are taken than there are.
 */
export const takeRateToken = async (db: Queryable, { userId, capacity, at }: { userId: number; capacity: number; at: Date }): Promise<{ taken: true } | { taken: false; retryAfterSec: number }> => {
  const perMs = capacity / 60_000;
  const now = sql`${at.toISOString()}::timestamptz`;
  const refilled = sql`least(${capacity}::float8, ${analysisRateBuckets.tokens} + greatest(0, extract(epoch from (${now} - ${analysisRateBuckets.updatedAt}))) * 1000 * ${perMs}::float8)`;
  const [row] = await db
    .insert(analysisRateBuckets)
    .values({ userId, tokens: capacity - 1, lastTaken: true, updatedAt: at })
    .onConflictDoUpdate({
      target: analysisRateBuckets.userId,
      set: {
        tokens: sql`case when ${refilled} >= 1 then ${refilled} - 1 else ${refilled} end`,
        lastTaken: sql`${refilled} >= 1`,
        updatedAt: at,
      },
    })
    .returning({ tokens: analysisRateBuckets.tokens, taken: analysisRateBuckets.lastTaken });
  if (!row || row.taken) return { taken: true };
  return { taken: false, retryAfterSec: Math.max(1, Math.ceil((1 - row.tokens) / perMs / 1000)) };
};

/** Reports waiting in the queue (queued, not yet started by a worker). */
export const countQueued = async (db: Queryable): Promise<number> =>
  (await db.select({ n: count() }).from(analysisReports).where(eq(analysisReports.status, 'queued')))[0]?.n ?? 0;
