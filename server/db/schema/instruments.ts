// Reference data: the instruments that can be traded, and their daily bars. Shared by every
// user (no user_id): replicated, not distributed, past one Postgres primary.
import { boolean, date, index, numeric, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';

/** Decimal columns come back as strings: never as binary floats. */
export const decimal = (name: string) => numeric(name, { mode: 'string' });

export const instruments = pgTable(
  'instruments',
  {
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    symbol: text('symbol').notNull(),
    exchange: text('exchange').notNull(),
    currency: text('currency').notNull(),
    name: text('name').notNull(),
    referencePrice: decimal('reference_price').notNull(),
    /** `fixed`: every price is a multiple of tick_size; `krx_bands`: the KRX price-band table. */
    tickRule: text('tick_rule', { enum: ['fixed', 'krx_bands'] }).notNull().default('fixed'),
    tickSize: decimal('tick_size').notNull(),
    lotSize: decimal('lot_size').notNull(),
    fractional: boolean('fractional').notNull(),
    createdAt: createdAt(),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.assetClass, t.symbol] })],
);

export const dailyBars = pgTable(
  'daily_bars',
  {
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    symbol: text('symbol').notNull(),
    /** The exchange's local date (Asia/Seoul for KRX, America/New_York for US, UTC for crypto). */
    date: date('date', { mode: 'string' }).notNull(),
    open: decimal('open').notNull(),
    high: decimal('high').notNull(),
    low: decimal('low').notNull(),
    close: decimal('close').notNull(),
    adjClose: decimal('adj_close'),
    volume: decimal('volume').notNull(),
    /** `synthetic` (demo data), `import` (an operator's file or JSON), or a provider's name. */
    source: text('source').notNull(),
    importedAt: tsColumn('imported_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.assetClass, t.symbol, t.date] }), index('daily_bars_source_idx').on(t.assetClass, t.symbol, t.source)],
);

export type InstrumentRow = typeof instruments.$inferSelect;
export type DailyBarRow = typeof dailyBars.$inferSelect;
