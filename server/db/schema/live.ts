// Live promotion and the kill switch's own records: the confirm tokens (only their sha256 is
// kept), the critical alerts the kill switch raised (one per user, asset class, UTC day and kind:
// the unique key is what makes an evaluation idempotent across instances), and nothing else.
import { bigint, date, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';

const assetClass = () => text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull();

/** A live confirm token: active until consumed, expired, or made inactive by a newer one. */
export const liveConfirmTokens = pgTable(
  'live_confirm_tokens',
  {
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    /** sha256 (hex) of the whole token as the user received it. */
    tokenHash: text('token_hash').notNull(),
    expiresAt: tsColumn('expires_at').notNull(),
    consumedAt: tsColumn('consumed_at'),
    /** Set when a newer token of the user was issued (the state table's `inactive`). */
    supersededAt: tsColumn('superseded_at'),
    delivery: text('delivery', { enum: ['email', 'log'] }).notNull(),
    createdAt: createdAt(),
  },
  // Keys lead with user_id (DESIGN §8); enable looks a token up by its owner, the caller.
  (t) => [primaryKey({ columns: [t.userId, t.id] }), uniqueIndex('live_confirm_tokens_hash_key').on(t.userId, t.tokenHash)],
);

/** A critical alert of the kill switch, kept for the operator overview and as its once-a-day marker. */
export const criticalAlerts = pgTable(
  'critical_alerts',
  {
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    /** The UTC day the alert counts for. */
    day: date('day', { mode: 'string' }).notNull(),
    /** 'daily_loss_warning' (at or below −4 %) or 'kill_switch_lock' (at or below −5 %). */
    kind: text('kind').notNull(),
    title: text('title').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), uniqueIndex('critical_alerts_once_key').on(t.userId, t.assetClass, t.day, t.kind), index('critical_alerts_recent_idx').on(t.createdAt)],
);

export type LiveConfirmTokenRow = typeof liveConfirmTokens.$inferSelect;
export type CriticalAlertRow = typeof criticalAlerts.$inferSelect;
