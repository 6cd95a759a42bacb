// Stored backtest results: each run as the user received it (its curve and trades already
// trimmed), with its summary columns for the list.
import { date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const backtestResults = pgTable(
  'backtest_results',
  {
    /** The result_id clients read it by (a UUID). */
    id: text('id').notNull(),
    userId: integer('user_id').notNull(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    symbol: text('symbol').notNull(),
    strategyName: text('strategy_name').notNull(),
    strategyParams: jsonb('strategy_params').$type<Record<string, unknown>>().notNull(),
    profileName: text('profile_name').notNull(),
    currency: text('currency').notNull(),
    startDate: date('start_date', { mode: 'string' }).notNull(),
    endDate: date('end_date', { mode: 'string' }).notNull(),
    totalReturnPct: doublePrecision('total_return_pct').notNull(),
    sharpeRatio: doublePrecision('sharpe_ratio').notNull(),
    maxDrawdownPct: doublePrecision('max_drawdown_pct').notNull(),
    winRate: doublePrecision('win_rate').notNull(),
    totalTrades: integer('total_trades').notNull(),
    /** The whole answer (TBacktestResult without result_id and created_at). */
    result: jsonb('result').$type<Record<string, unknown>>().notNull(),
    createdAt: tsColumn('created_at').notNull(),
  },
  // Keyed by user first, as every per-user table (DESIGN: distributable by user_id).
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index('backtest_results_user_idx').on(t.userId, t.createdAt)],
);

export type BacktestResultRow = typeof backtestResults.$inferSelect;

/** Stored parameter sweeps: every point's metrics, ranked, as the user received them. */
export const backtestSweeps = pgTable(
  'backtest_sweeps',
  {
    /** The sweep_id clients read it by (a UUID). */
    id: text('id').notNull(),
    userId: integer('user_id').notNull(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    symbol: text('symbol').notNull(),
    strategyName: text('strategy_name').notNull(),
    /** The whole answer (TSweepResult without sweep_id and created_at). */
    result: jsonb('result').$type<Record<string, unknown>>().notNull(),
    createdAt: tsColumn('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index('backtest_sweeps_user_idx').on(t.userId, t.createdAt)],
);
