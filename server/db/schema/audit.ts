// The append-only audit log: who did what, to whom, from where.
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
