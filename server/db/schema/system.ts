// Service-wide state every instance must agree on (the operator halt, for one).
import { bigint, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const systemState = pgTable('system_state', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<Record<string, unknown>>().notNull(),
  // Raised by every write: an instance keeps the newest state it has read, whatever order its
  // reloads finish in.
  version: bigint('version', { mode: 'number' }).notNull().default(0),
  updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

/** Work one instance must do at a time (the price walk, resting-order matching): a lease in the database. */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: tsColumn('expires_at').notNull(),
});
