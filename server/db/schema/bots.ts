// The per-user trading bot: one row per user (its settings, its run and whether it runs), the
// bars it built from ticks (its history across restarts), and the orders it placed (so its
// fills can be told from the user's own orders).
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

const assetClass = () => text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull();

/** One bot per user: the last start's settings and its state. */
export const bots = pgTable('bots', {
  userId: integer('user_id').primaryKey(),
  /** A new id per start: the bot's client order ids carry it, so two runs never share one. */
  runId: text('run_id').notNull(),
  assetClass: assetClass(),
  symbols: jsonb('symbols').$type<string[]>().notNull(),
  strategyName: text('strategy_name').notNull(),
  /** The validated params, defaults filled in. */
  strategyParams: jsonb('strategy_params').$type<Record<string, unknown>>().notNull(),
  liveMode: boolean('live_mode').notNull(),
  timeframe: text('timeframe', { enum: ['1m', '1d'] }).notNull(),
  status: text('status', { enum: ['running', 'stopped', 'halted'] }).notNull(),
  haltReason: text('halt_reason'),
  /** Who ended the last run: the user, an operator, or an emergency lock. */
  stoppedBy: text('stopped_by', { enum: ['user', 'admin', 'lock'] }),
  startedAt: tsColumn('started_at').notNull(),
  stoppedAt: tsColumn('stopped_at'),
  updatedAt: tsColumn('updated_at').notNull(),
}, (t) => [index('bots_running_idx').on(t.status).where(sql`${t.status} = 'running'`)]);

/**
 * Every run of a user's bot (a start, and how it ended): the settings it ran with, kept after the
 * next start replaces the bot's row, so its drift report can replay it.
 */
export const botRuns = pgTable(
  'bot_runs',
  {
    userId: integer('user_id').notNull(),
    runId: text('run_id').notNull(),
    assetClass: assetClass(),
    symbols: jsonb('symbols').$type<string[]>().notNull(),
    strategyName: text('strategy_name').notNull(),
    strategyParams: jsonb('strategy_params').$type<Record<string, unknown>>().notNull(),
    liveMode: boolean('live_mode').notNull(),
    timeframe: text('timeframe', { enum: ['1m', '1d'] }).notNull(),
    startedAt: tsColumn('started_at').notNull(),
    stoppedAt: tsColumn('stopped_at'),
    stoppedBy: text('stopped_by', { enum: ['user', 'admin', 'lock'] }),
    haltReason: text('halt_reason'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.runId] }), index('bot_runs_user_idx').on(t.userId, t.startedAt)],
);

/** Bars the bot built from ticks, closed ones only, per user, symbol and timeframe. */
export const botBars = pgTable(
  'bot_bars',
  {
    userId: integer('user_id').notNull(),
    assetClass: assetClass(),
    symbol: text('symbol').notNull(),
    timeframe: text('timeframe', { enum: ['1m', '1d'] }).notNull(),
    start: tsColumn('start').notNull(),
    open: decimal('open').notNull(),
    high: decimal('high').notNull(),
    low: decimal('low').notNull(),
    close: decimal('close').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.assetClass, t.symbol, t.timeframe, t.start] })],
);

/** Every order the bot placed (or tried to): its client order id, the run and the bar behind it. */
export const botOrders = pgTable(
  'bot_orders',
  {
    userId: integer('user_id').notNull(),
    clientOrderId: text('client_order_id').notNull(),
    runId: text('run_id').notNull(),
    assetClass: assetClass(),
    symbol: text('symbol').notNull(),
    side: text('side', { enum: ['buy', 'sell'] }).notNull(),
    /** Fixed when the signal is recorded, so a placement retried after a restart is the same request. */
    qty: decimal('qty').notNull(),
    barStart: tsColumn('bar_start').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientOrderId] }), index('bot_orders_user_idx').on(t.userId, t.createdAt)],
);

export type BotRow = typeof bots.$inferSelect;
export type BotBarRow = typeof botBars.$inferSelect;
export type BotRunRow = typeof botRuns.$inferSelect;
