// The order service's own records: orders (the intent is written before the broker is called),
// their fills (one row per broker execution), and the per-user state the gates read: live flags,
// emergency locks, rate counters and the day-start equity snapshots; and the order list's totals,
// kept by triggers (migration 0016_kept_counts.sql).
import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

const assetClass = () => text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull();
const ORDER_STATUSES = ['pending', 'accepted', 'open', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired'] as const;

/**
 * An entry's exit legs as its request gave them: an oto leaves one leg null, and a trailing stop
 * leg keeps its trail (trail_percent or trail_price) instead of a stop_loss.
 */
export interface OrderBracket {
  take_profit: number | null;
  stop_loss: number | null;
  stop_loss_limit: number | null;
  trail_percent?: number;
  trail_price?: number;
}

export const orders = pgTable(
  'orders',
  {
    userId: integer('user_id').notNull(),
    clientOrderId: text('client_order_id').notNull(),
    /** Null until the broker has answered (an intent). */
    brokerOrderId: text('broker_order_id'),
    assetClass: assetClass(),
    live: boolean('live').notNull(),
    broker: text('broker').notNull(),
    symbol: text('symbol').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    /** As the caller asked: stop_limit stays stop_limit here (the broker sees a stop). */
    orderType: text('order_type', { enum: ['market', 'limit', 'stop', 'stop_limit', 'trailing_stop'] }).notNull(),
    timeInForce: text('time_in_force', { enum: ['day', 'gtc', 'ioc', 'fok'] }).notNull(),
    qty: decimal('qty').notNull(),
    filledQty: decimal('filled_qty').notNull().default('0'),
    avgFillPrice: decimal('avg_fill_price'),
    limitPrice: decimal('limit_price'),
    stopPrice: decimal('stop_price'),
    status: text('status', { enum: ORDER_STATUSES }).notNull(),
    bracket: jsonb('bracket').$type<OrderBracket | null>(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** The normalised request, to tell a replay from a different request under the same id. */
    requestHash: text('request_hash'),
    /** Why a broker refused or failed it, when it did. */
    reason: text('reason'),
    submittedAt: tsColumn('submitted_at').notNull(),
    updatedAt: tsColumn('updated_at').notNull(),
    /**
     * Whether the order list shows the order (a broker id, and its placement by this user in the
     * audit log), as counted in order_counts. Set by the database's triggers, never by the service:
     * kept on the row so that each change of it is counted once, however the writes that make it
     * are ordered.
     */
    listed: boolean('listed').notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.clientOrderId] }),
    uniqueIndex('orders_broker_id_key').on(t.userId, t.brokerOrderId),
    index('orders_list_idx').on(t.userId, t.assetClass, t.submittedAt),
    // The rarer statuses, each group with an index of its own in list order, so that a read of
    // them passes over no filled history (docs/architecture.md, "What a read of history costs"). A partial
    // index takes an entry only while a row is in its group: a market order, intent then filled,
    // costs one entry here, as the index of pending intents it replaces did.
    index('orders_working_idx').on(t.userId, t.assetClass, t.submittedAt).where(sql`${t.status} in ('pending', 'accepted', 'open', 'partially_filled')`),
    index('orders_ended_idx').on(t.userId, t.assetClass, t.submittedAt).where(sql`${t.status} in ('canceled', 'expired', 'rejected')`),
  ],
);

export const orderFills = pgTable(
  'order_fills',
  {
    userId: integer('user_id').notNull(),
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    clientOrderId: text('client_order_id').notNull(),
    /** The broker's execution id: a duplicate delivery of one fill is dropped by it. */
    executionId: text('execution_id').notNull(),
    qty: decimal('qty').notNull(),
    price: decimal('price').notNull(),
    fee: decimal('fee').notNull(),
    /** The part of `fee` that is a transaction tax (a KRX sell's), as the broker said; 0 where it says none. */
    tax: decimal('tax').notNull().default('0'),
    at: tsColumn('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), uniqueIndex('order_fills_execution_key').on(t.userId, t.executionId), index('order_fills_order_idx').on(t.userId, t.clientOrderId)],
);

/** Per user and asset class: may it trade live, and when was its first live order. */
export const liveFlags = pgTable(
  'live_flags',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    liveEnabled: boolean('live_enabled').notNull().default(false),
    firstLiveOrderAt: tsColumn('first_live_order_at'),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass] })],
);

/** The kill switch's lock per user and asset class (set by the kill switch, cleared by operators). */
export const emergencyLocks = pgTable(
  'emergency_locks',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    lockedUntil: tsColumn('locked_until').notNull(),
    reason: text('reason').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass] })],
);

/** Counters of the order rate limits, per user and window (a minute, or a UTC day for live orders). */
export const orderRateCounters = pgTable(
  'order_rate_counters',
  {
    userId: integer('user_id').notNull(),
    /** `minute`, or `live:<asset_class>` for the daily live limit. */
    scope: text('scope').notNull(),
    windowStart: tsColumn('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.scope] })],
);

/** Equity at the first risk evaluation of each UTC day, per account: the daily loss bound and the kill switch read it. */
export const equitySnapshots = pgTable(
  'equity_snapshots',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    mode: text('mode', { enum: ['paper', 'live'] }).notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    equity: decimal('equity').notNull(),
    /** The cash part of `equity`; null in snapshots taken where it was not known (before 0019, a reset's). */
    cash: decimal('cash'),
    takenAt: tsColumn('taken_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.mode, t.day] })],
);

/** An order as the service reads and writes it (`listed` belongs to the triggers). */
export type OrderRow = Omit<typeof orders.$inferSelect, 'listed'>;

/** The key the order list's total is counted by: the list's filters are a user, an asset class, statuses and a mode. */
const orderCountKey = () => ({
  userId: integer('user_id').notNull(),
  assetClass: assetClass(),
  live: boolean('live').notNull(),
  status: text('status', { enum: ORDER_STATUSES }).notNull(),
});

/** Listed orders per key, as folded from order_count_changes by the counts job (server/db/tallies.ts). */
export const orderCounts = pgTable(
  'order_counts',
  { ...orderCountKey(), n: bigint('n', { mode: 'number' }).notNull() },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.live, t.status] })],
);

/**
 * What the triggers on orders and audit_events append when an order starts or stops being
 * listed under a key (+1, -1): never updated, so writers of one user's orders never wait on each
 * other for a counter; removed as they are folded into order_counts.
 */
export const orderCountChanges = pgTable(
  'order_count_changes',
  { ...orderCountKey(), id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(), n: integer('n').notNull() },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.id] })],
);
