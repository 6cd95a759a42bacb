// Flows of an account: changes of its equity that are no trading result (today a paper reset's
// start over), rows of their own beside the day-start snapshots, which are never rewritten. The
// day's P&L is equity now − day-start equity − the day's flows (DESIGN §6).
import { bigint, date, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

export const accountFlows = pgTable(
  'account_flows',
  {
    userId: integer('user_id').notNull(),
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    mode: text('mode', { enum: ['paper', 'live'] }).notNull(),
    /** The UTC day the flow counts on, 'YYYY-MM-DD'. */
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind', { enum: ['reset'] }).notNull(),
    /** The equity added (positive) or removed (negative): equity after − equity before. */
    amount: decimal('amount').notNull(),
    equityBefore: decimal('equity_before').notNull(),
    equityAfter: decimal('equity_after').notNull(),
    at: tsColumn('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index('account_flows_day_idx').on(t.userId, t.assetClass, t.mode, t.day)],
);

export type AccountFlowRow = typeof accountFlows.$inferSelect;
