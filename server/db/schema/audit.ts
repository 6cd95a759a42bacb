// The append-only audit log: who did what, to whom, from where; and its records counted per
// action, kept by a trigger (migration 0016_kept_counts.sql).
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    action: text('action').notNull(),
    actorUserId: integer('actor_user_id'),
    subjectUserId: integer('subject_user_id'),
    requestId: text('request_id'),
    address: text('address'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    index('audit_events_subject_idx').on(t.subjectUserId, t.createdAt),
    index('audit_events_action_idx').on(t.action, t.createdAt),
    // An order's records by its client order id: the order reads' cross-check (its placement by
    // this user) and one order's trail. Only records that name an order take an entry.
    index('audit_events_order_idx')
      .on(t.subjectUserId, sql`(${t.data}->>'client_order_id')`, t.action)
      .where(sql`(${t.data}->>'client_order_id') is not null`),
  ],
);

/** Audit records per action, as folded from audit_count_changes by the counts job (server/db/tallies.ts). */
export const auditCounts = pgTable('audit_counts', { action: text('action').primaryKey(), n: bigint('n', { mode: 'number' }).notNull() });

/** What the trigger on audit_events appends per statement and action (records written, or minus those removed); removed as folded. */
export const auditCountChanges = pgTable('audit_count_changes', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  action: text('action').notNull(),
  n: integer('n').notNull(),
});
