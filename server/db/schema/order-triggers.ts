// The order emulator's triggers (DESIGN §6 "Advanced orders"): for a real broker that does not hold
// an order's type itself (a trailing stop at KIS or a ccxt exchange, a stop or a stop-limit where
// the broker or its market holds none), one row per emulated order,
// watched on the broker's quote stream by the instance that holds the account's ingestion lease.
// The order row stays the user's one record; this row is the trigger's state: its mark (hwm) and
// stop, saved at most once a second and always at the trigger, so a restart resumes it.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

export const ORDER_TRIGGER_STATUSES = ['working', 'triggered', 'canceled'] as const;
/**
 * What a trigger holds: a stop that follows the price, or a fixed stop whose child is a market
 * order (stop) or a limit (stop_limit); or an OCO's take-profit (limit), which fires when the price
 * reaches its limit (a sell's at or above it) and whose child is a limit there.
 */
export const ORDER_TRIGGER_TYPES = ['trailing_stop', 'stop', 'stop_limit', 'limit'] as const;

export const orderTriggers = pgTable(
  'order_triggers',
  {
    userId: integer('user_id').notNull(),
    /** The emulated order's (the parent's) client order id. */
    clientOrderId: text('client_order_id').notNull(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    live: boolean('live').notNull(),
    symbol: text('symbol').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    qty: decimal('qty').notNull(),
    orderType: text('order_type', { enum: ORDER_TRIGGER_TYPES }).notNull().default('trailing_stop'),
    /** A stop_limit's limit: its child rests as a limit there. */
    limitPrice: decimal('limit_price'),
    trailPercent: decimal('trail_percent'),
    trailPrice: decimal('trail_price'),
    /** The mark a trailing stop follows: a sell's highest price seen, a buy's lowest; null for a fixed stop. */
    hwm: decimal('hwm'),
    stopPrice: decimal('stop_price').notNull(),
    status: text('status', { enum: ORDER_TRIGGER_STATUSES }).notNull(),
    /** The other leg of an emulated OCO: the first of the two to fire cancels the other, in its transaction. */
    siblingClientOrderId: text('sibling_client_order_id'),
    /** The order placed at the broker when the trigger fired (a market order, or a stop_limit's limit). */
    childClientOrderId: text('child_client_order_id'),
    childBrokerOrderId: text('child_broker_order_id'),
    /** A day order's end (its session's close, from the exchange calendar); null for good-till-canceled. */
    expiresAt: tsColumn('expires_at'),
    /**
     * When the trigger was armed: at its placement, and again at each replace. A watch holding an
     * older arming takes the row again, and its saves and its fire touch only the arming it holds.
     */
    // Milliseconds, as a JavaScript Date carries it back (a row from before this column too).
    armedAt: tsColumn('armed_at')
      .notNull()
      .default(sql`date_trunc('milliseconds', now())`),
    updatedAt: tsColumn('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.clientOrderId] }),
    uniqueIndex('order_triggers_child_key').on(t.userId, t.childClientOrderId),
    index('order_triggers_working_idx').on(t.userId, t.assetClass, t.live).where(sql`${t.status} = 'working'`),
  ],
);

export type OrderTriggerRow = typeof orderTriggers.$inferSelect;
