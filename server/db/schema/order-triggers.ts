// The order emulator's triggers (DESIGN §6 "Advanced orders"): for a real broker that does not hold
// an order's type itself (a trailing stop at KIS or a ccxt exchange), one row per emulated order,
// watched on the broker's quote stream by the instance that holds the account's ingestion lease.
// The order row stays the user's one record; this row is the trigger's state: its mark (hwm) and
// stop, saved at most once a second and always at the trigger, so a restart resumes it.
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

export const ORDER_TRIGGER_STATUSES = ['working', 'triggered', 'canceled'] as const;

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
    trailPercent: decimal('trail_percent'),
    trailPrice: decimal('trail_price'),
    /** The mark the stop follows: a sell's highest price seen, a buy's lowest. */
    hwm: decimal('hwm').notNull(),
    stopPrice: decimal('stop_price').notNull(),
    status: text('status', { enum: ORDER_TRIGGER_STATUSES }).notNull(),
    /** The market order placed at the broker when the trigger fired. */
    childClientOrderId: text('child_client_order_id'),
    childBrokerOrderId: text('child_broker_order_id'),
    updatedAt: tsColumn('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.clientOrderId] }),
    uniqueIndex('order_triggers_child_key').on(t.userId, t.childClientOrderId),
    index('order_triggers_working_idx').on(t.userId, t.assetClass, t.live).where(sql`${t.status} = 'working'`),
  ],
);

export type OrderTriggerRow = typeof orderTriggers.$inferSelect;
