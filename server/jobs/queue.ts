// The process's pg-boss: one instance, started on first use, shared by the areas that queue work
// (the analysis queue sends from the API) and the workers that run it. It also gives pg-boss a
// connection that runs in the caller's transaction, so a job is written with the rows it belongs
// to or not at all.
import { sql, type SQL } from 'drizzle-orm';
import { PgBoss } from 'pg-boss';
import { rowsOf, type DatabaseHandle, type Queryable } from '../db/client.ts';
import type { Logger } from '../observability/logger.ts';

/** What pg-boss runs its statements on (its `db` option): text with $n parameters, rows back. */
export interface JobDatabase {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export interface JobQueue {
  /** The started pg-boss of this process. */
  boss(): Promise<PgBoss>;
  /** pg-boss statements in the caller's transaction. */
  inTransaction(tx: Queryable): JobDatabase;
  /** Stops pg-boss (waiting up to `timeoutMs` for running jobs); again, the same promise. */
  stop(timeoutMs: number): Promise<void>;
}

/** pg-boss's statement as drizzle SQL: its $n placeholders become bound parameters. */
const boundStatement = (text: string, values: readonly unknown[]): SQL => {
  const parts = text.split(/\$(\d+)\b/);
  return sql.join(parts.map((part, index) => (index % 2 === 0 ? sql.raw(part) : sql`${values[Number(part) - 1]}`)));
};

export const createJobQueue = ({ database, logger }: { database: DatabaseHandle; logger: Logger }): JobQueue => {
  let starting: Promise<PgBoss> | undefined;
  let stopping: Promise<void> | undefined;
  return {
    boss: () =>
      (starting ??= (async () => {
        const boss = new PgBoss({ ...(await database.jobQueueOptions()), application_name: 'trading-service-jobs' });
        boss.on('error', (error: unknown) => logger.error({ err: error }, 'job queue error'));
        await boss.start();
        return boss;
      })()),
    inTransaction: (tx) => ({
      executeSql: async (text, values = []) => ({ rows: await rowsOf<Record<string, unknown>>(tx, boundStatement(text, values)) }),
    }),
    stop: (timeoutMs) =>
      (stopping ??= (async () => {
        if (!starting) return;
        const boss = await starting.catch(() => undefined);
        await boss?.stop({ graceful: true, timeout: timeoutMs });
      })()),
  };
};
