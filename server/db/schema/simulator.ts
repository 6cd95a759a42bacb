// The simulated broker's own books: accounts, orders, fills and positions per user, asset class
// and mode, as a real broker keeps them (the order service keeps its own and checks them against
// these), and the prices it trades at.
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

const assetClass = () => text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull();
const mode = () => text('mode', { enum: ['paper', 'live'] }).notNull();

export const simAccounts = pgTable(
  'sim_accounts',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    mode: mode(),
    currency: text('currency').notNull(),
    cash: decimal('cash').notNull(),
    initialCash: decimal('initial_cash').notNull(),
    createdAt: createdAt(),
    resetAt: tsColumn('reset_at'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.mode] })],
);

/**
 * A bracket entry's legs as the books keep them (decimal text): an OTO leaves one leg null, and a
 * trailing stop leg keeps its trail instead of a stop_loss.
 */
export interface SimBracket {
  take_profit: string | null;
  stop_loss: string | null;
  stop_loss_limit: string | null;
  trail_percent?: string;
  trail_price?: string;
}

export const simOrders = pgTable(
  'sim_orders',
  {
    userId: integer('user_id').notNull(),
    /** The broker order id. */
    id: text('id').notNull(),
    clientOrderId: text('client_order_id').notNull(),
    assetClass: assetClass(),
    mode: mode(),
    symbol: text('symbol').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    orderType: text('order_type', { enum: ['market', 'limit', 'stop', 'trailing_stop'] }).notNull(),
    timeInForce: text('time_in_force', { enum: ['day', 'gtc', 'ioc', 'fok'] }).notNull(),
    qty: decimal('qty').notNull(),
    filledQty: decimal('filled_qty').notNull().default('0'),
    avgFillPrice: decimal('avg_fill_price'),
    limitPrice: decimal('limit_price'),
    stopPrice: decimal('stop_price'),
    status: text('status', { enum: ['accepted', 'open', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired'] }).notNull(),
    /** A bracket entry's spec, turned into an OCO pair of children once the entry fills. */
    bracket: jsonb('bracket').$type<SimBracket | null>(),
    /** The entry order of a bracket child, and the sibling it cancels when it fills. */
    parentId: text('parent_id'),
    ocoSiblingId: text('oco_sibling_id'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** When a day order expires: its session's close. */
    expiresAt: tsColumn('expires_at'),
    createdAt: createdAt(),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.id] }),
    uniqueIndex('sim_orders_client_id_key').on(t.userId, t.assetClass, t.mode, t.clientOrderId),
    index('sim_orders_resting_idx').on(t.assetClass, t.symbol).where(sql`${t.status} in ('accepted', 'open', 'partially_filled')`),
    index('sim_orders_expiry_idx').on(t.expiresAt).where(sql`${t.status} in ('accepted', 'open', 'partially_filled')`),
    // An account's working orders (its snapshot, a sell's check of what is already for sale):
    // entries only while an order rests, none for a market order filled as it is written.
    index('sim_orders_account_working_idx').on(t.userId, t.assetClass, t.mode, t.symbol).where(sql`${t.status} in ('accepted', 'open', 'partially_filled')`),
  ],
);

export const simFills = pgTable(
  'sim_fills',
  {
    userId: integer('user_id').notNull(),
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    orderId: text('order_id').notNull(),
    assetClass: assetClass(),
    mode: mode(),
    symbol: text('symbol').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    qty: decimal('qty').notNull(),
    price: decimal('price').notNull(),
    fee: decimal('fee').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index('sim_fills_order_idx').on(t.userId, t.orderId)],
);

export const simPositions = pgTable(
  'sim_positions',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    mode: mode(),
    symbol: text('symbol').notNull(),
    qty: decimal('qty').notNull(),
    avgEntryPrice: decimal('avg_entry_price').notNull(),
    realizedPnl: decimal('realized_pnl').notNull().default('0'),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.mode, t.symbol] })],
);

/** Prices the simulator trades at: an operator's price wins over the random walk's last tick. */
export const simPrices = pgTable(
  'sim_prices',
  {
    assetClass: assetClass(),
    symbol: text('symbol').notNull(),
    adminPrice: decimal('admin_price'),
    tickPrice: decimal('tick_price'),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.assetClass, t.symbol] })],
);

export type SimOrderRow = typeof simOrders.$inferSelect;
