// SQL of the event outbox: appending, reading what is new in delivery order, a user's events
// since one of them (resumption), and pruning. The only module that knows the table.
import { and, asc, desc, eq, lt, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { outboxEvents } from '../db/schema/index.ts';

export type TEventChannel = (typeof outboxEvents.channel.enumValues)[number];

/** A place in delivery order: (transaction id, event id). */
export interface OutboxPosition {
  txId: number;
  id: number;
}

export interface OutboxRow extends OutboxPosition {
  userId: number;
  channel: TEventChannel;
  frame: Record<string, unknown>;
}

export const START: OutboxPosition = { txId: 0, id: 0 };

const columns = { id: outboxEvents.id, txId: outboxEvents.txId, userId: outboxEvents.userId, channel: outboxEvents.channel, frame: outboxEvents.frame };
const after = ({ txId, id }: OutboxPosition) => sql`(${outboxEvents.txId}, ${outboxEvents.id}) > (${txId}::bigint, ${id}::bigint)`;
const atMost = ({ txId, id }: OutboxPosition) => sql`(${outboxEvents.txId}, ${outboxEvents.id}) <= (${txId}::bigint, ${id}::bigint)`;
/** The oldest transaction still running anywhere: rows of older transactions can no longer appear. */
const horizon = sql<string>`pg_snapshot_xmin(pg_current_snapshot())::text`;

export const insertEvents = async (db: Queryable, rows: { userId: number; channel: TEventChannel; frame: Record<string, unknown>; at: Date }[]): Promise<void> => {
  if (rows.length === 0) return;
  await db.insert(outboxEvents).values(rows.map(({ userId, channel, frame, at }) => ({ userId, channel, frame, createdAt: at })));
};

/**
 * The insert of events as one SQL statement, for a caller that folds it into a larger statement
 * (a data-modifying CTE): written only when `when` holds. Each row's transaction id is the
 * statement's own, as with insertEvents. The rows travel as one JSON parameter (one statement
 * text for any number of rows).
 */
export const eventsInsertSql = (rows: readonly { userId: number; channel: TEventChannel; frame: Record<string, unknown>; at: Date }[], when?: SQL): SQL => {
  const values = rows.map(({ userId, channel, frame, at }) => ({ user_id: userId, channel, frame, created_at: at.toISOString() }));
  return fixedSql`insert into ${outboxEvents} (user_id, channel, frame, created_at)
    select user_id, channel, frame, created_at
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb) as events(user_id integer, channel text, frame jsonb, created_at timestamptz)
    ${when ? fixedSql`where ${when}` : fixedSql``}`;
};

/**
 * The next rows after `position` in delivery order, each with the horizon read in the same
 * statement: a row whose transaction is not older than the horizon may still be overtaken.
 */
export const readAfter = async (db: Queryable, position: OutboxPosition, limit: number): Promise<(OutboxRow & { settled: boolean })[]> => {
  const rows = await db
    .select({ ...columns, horizon })
    .from(outboxEvents)
    .where(after(position))
    .orderBy(asc(outboxEvents.txId), asc(outboxEvents.id))
    .limit(limit);
  return rows.map(({ horizon: oldestRunning, ...row }) => ({ ...row, settled: row.txId < Number(oldestRunning) }));
};

/**
 * As readAfter, with each row's instant: for a reader that acts on an event's time (the
 * notifications' fold), where the clients' readers need none.
 */
export const readTimedAfter = async (db: Queryable, position: OutboxPosition, limit: number): Promise<(OutboxRow & { settled: boolean; at: Date })[]> => {
  const rows = await db
    .select({ ...columns, at: outboxEvents.createdAt, horizon })
    .from(outboxEvents)
    .where(after(position))
    .orderBy(asc(outboxEvents.txId), asc(outboxEvents.id))
    .limit(limit);
  return rows.map(({ horizon: oldestRunning, ...row }) => ({ ...row, settled: row.txId < Number(oldestRunning) }));
};

/** Where a reader starts: after the last row no running transaction can precede (or at the start). */
export const settledEnd = async (db: Queryable): Promise<OutboxPosition> => {
  const [last] = await db
    .select({ txId: outboxEvents.txId, id: outboxEvents.id })
    .from(outboxEvents)
    .where(sql`${outboxEvents.txId} < (${horizon})::bigint`)
    .orderBy(desc(outboxEvents.txId), desc(outboxEvents.id))
    .limit(1);
  return last ?? START;
};

/** The position of the last row committed so far, settled or not. */
export const committedEnd = async (db: Queryable): Promise<OutboxPosition> => {
  const [last] = await db.select({ txId: outboxEvents.txId, id: outboxEvents.id }).from(outboxEvents).orderBy(desc(outboxEvents.txId), desc(outboxEvents.id)).limit(1);
  return last ?? START;
};

export const positionOf = async (db: Queryable, id: number): Promise<OutboxPosition | undefined> =>
  (await db.select({ txId: outboxEvents.txId, id: outboxEvents.id }).from(outboxEvents).where(eq(outboxEvents.id, id)))[0];

/**
 * A user's events on one channel after `since` (an event id the client saw, placed by its
 * position when it is still stored) and up to `upTo`, in delivery order.
 */
export const readUserEvents = async (
  db: Queryable,
  { userId, channel, since, upTo, limit }: { userId: number; channel: TEventChannel; since: OutboxPosition | { id: number }; upTo: OutboxPosition; limit: number },
): Promise<OutboxRow[]> =>
  db
    .select(columns)
    .from(outboxEvents)
    .where(
      and(
        eq(outboxEvents.userId, userId),
        eq(outboxEvents.channel, channel),
        'txId' in since ? after(since) : sql`${outboxEvents.id} > ${since.id}::bigint`,
        atMost(upTo),
      ),
    )
    .orderBy(asc(outboxEvents.txId), asc(outboxEvents.id))
    .limit(limit);

/** Deletes events older than `before`; returns how many. */
export const pruneEvents = async (db: Queryable, before: Date): Promise<number> =>
  (await db.delete(outboxEvents).where(lt(outboxEvents.createdAt, before)).returning({ id: outboxEvents.id })).length;
