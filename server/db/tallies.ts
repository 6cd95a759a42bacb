// Counts kept by the database (migration 0016_kept_counts.sql): triggers append +n/-n rows to a
// table of changes, never updating a counter that writers would queue on; `foldTallies` moves
// them into a summary table a batch at a time; `tallyTotal` adds both, so that a total reads a few
// summary rows and the changes not yet folded, never the rows it counts.
import { sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { rowsOf, type Queryable } from './client.ts';

/** A kept count: its summary (one row per key, `n`) and its changes (`n` per row), keyed by the same columns. */
export interface Tally {
  readonly summary: PgTable;
  readonly changes: PgTable;
  /** The key's column names, the same in both tables. */
  readonly key: readonly string[];
}

/** Arbitrary constant shared by every instance: the key of the fold's advisory lock. */
export const FOLD_LOCK_KEY = 7_326_501_915;
const FOLD_BATCH = 5_000;
/** Batches a fold runs at most: under a write rate that outpaces it, the next run goes on. */
const FOLD_ROUNDS = 100;

/**
 * The total of the rows `where` selects, summary and changes alike (unqualified column names of
 * the key), in one statement: one snapshot, so a fold committing meanwhile is seen whole or not at all.
 */
export const tallyTotal = async (db: Queryable, { summary, changes }: Tally, where: SQL): Promise<number> => {
  const [row] = await rowsOf<{ total: string | number }>(
    db,
    sql`select coalesce(sum(n), 0)::bigint as total from (select n from ${summary} where ${where} union all select n from ${changes} where ${where}) as kept`,
  );
  return Number(row?.total ?? 0);
};

/**
 * Folds up to `batch` changes into the summary in one statement (delete ... returning, then an
 * upsert that adds), when no other fold holds the lock; how many it moved. A change is either
 * still in its table or added to the summary, never both, whenever a total is read.
 */
const foldBatch = async (db: Queryable, { summary, changes, key }: Tally, batch: number): Promise<number> => {
  const columns = sql.join(
    key.map((name) => sql.identifier(name)),
    sql`, `,
  );
  const [row] = await rowsOf<{ moved: number }>(
    db,
    sql`with held as (select pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) as locked),
      moved as (
        delete from ${changes} where (select locked from held) and ctid = any (array(select ctid from ${changes} limit ${batch}))
        returning ${columns}, n),
      folded as (
        insert into ${summary} (${columns}, n) select ${columns}, sum(n) from moved group by ${columns}
        on conflict (${columns}) do update set n = ${summary}.n + excluded.n)
    select count(*)::integer as moved from moved`,
  );
  return row?.moved ?? 0;
};

/**
 * Folds every tally's changes, a batch per statement (each its own short transaction: a long one
 * would hold back every reader that waits for the oldest transaction, the outbox's among them).
 * Safe to run anywhere at any time: two folds at once take turns on the lock, and a batch that
 * finds the lock taken moves nothing.
 */
export const foldTallies = async (db: Queryable, tallies: readonly Tally[], { batch = FOLD_BATCH } = {}): Promise<number> => {
  let moved = 0;
  for (const tally of tallies) {
    for (let round = 0; round < FOLD_ROUNDS; round++) {
      const folded = await foldBatch(db, tally, batch);
      moved += folded;
      if (folded < batch) break;
    }
  }
  return moved;
};
