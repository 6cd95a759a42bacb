// The outbox of durable events: each row is written in the transaction of the change it reports,
// and delivered to the user's clients on every instance after that transaction commits.
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const outboxEvents = pgTable(
  'outbox_events',
  {
    /** The event id clients resume from (`last_event_id`, tRPC's `lastEventId`). */
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /**
     * The writing transaction's id (xid8 as a number). Ids are taken before commit, so they do not
     * arrive in commit order; readers deliver in (tx_id, id) order and only rows whose transaction
     * is older than every transaction still running, which no later commit can precede.
     */
    txId: bigint('tx_id', { mode: 'number' })
      .notNull()
      .default(sql`(pg_current_xact_id()::text::bigint)`),
    userId: integer('user_id').notNull(),
    /** Which WebSocket channel carries it: `orders` (/ws/equity/orders) or `live` (/ws/live); `notices` reach no client, only the notification channels (notifications/notices.ts). */
    channel: text('channel', { enum: ['orders', 'live', 'notices'] }).notNull(),
    /** The frame as clients receive it, without its event_id. */
    frame: jsonb('frame').$type<Record<string, unknown>>().notNull(),
    createdAt: tsColumn('created_at').notNull(),
  },
  (t) => [
    index('outbox_events_tx_idx').on(t.txId, t.id),
    index('outbox_events_user_idx').on(t.userId, t.txId, t.id),
    // Pruning reads by age: a BRIN index (rows arrive in time order) costs the write path almost
    // nothing, where a b-tree took an entry per event on every order's hot path.
    index('outbox_events_created_idx').using('brin', t.createdAt),
  ],
);
