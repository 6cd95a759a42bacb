// Service-wide state every instance must agree on (the operator halt, for one).
import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const systemState = pgTable('system_state', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<Record<string, unknown>>().notNull(),
  updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});
