// The pure pieces of the backtest service: bars from their stored columns, a run's spec and
// warm-up, a strategy's params as JSON schema, grid points and their ranking, and the summaries
// the lists show.
import { z } from 'zod';
import type { TExitEcho, TSweepList, TSweepRequest, TSweepResult } from '../../contracts/backtest.ts';
import type { BacktestResultRow } from '../db/schema/index.ts';
import type { BarColumnsText } from '../marketdata/queries.ts';
import { readDayColumn, readNumberColumn } from './bar-columns.ts';
import type { listSweeps } from './queries.ts';
import type { ExitRules } from './exits.ts';
import type { StrategyRunSpec } from './task.ts';
import type { Bars, StrategyDefinition } from './types.ts';

/** Bars as the engine reads them: typed arrays, oldest first. */
export const toBars = (columns: BarColumnsText): Bars => {
  const { count } = columns;
  const numbers = (text: string): Float64Array => readNumberColumn(text, count);
  return { length: count, dates: readDayColumn(columns.days, count), open: numbers(columns.open), high: numbers(columns.high), low: numbers(columns.low), close: numbers(columns.close), volume: numbers(columns.volume) };
};

export const toSummary = (row: Pick<BacktestResultRow, 'id' | 'assetClass' | 'currency' | 'profileName' | 'strategyName' | 'symbol' | 'startDate' | 'endDate' | 'totalReturnPct' | 'sharpeRatio' | 'maxDrawdownPct' | 'winRate' | 'totalTrades' | 'createdAt'>) => ({
  result_id: row.id,
  asset_class: row.assetClass,
  currency: row.currency,
  profile_name: row.profileName,
  strategy_name: row.strategyName,
  symbol: row.symbol,
  start_date: row.startDate,
  end_date: row.endDate,
  total_return_pct: row.totalReturnPct,
  sharpe_ratio: row.sharpeRatio,
  max_drawdown_pct: row.maxDrawdownPct,
  win_rate: row.winRate,
  total_trades: row.totalTrades,
  created_at: row.createdAt.toISOString(),
});

/** A request's (or a stored answer's) exits, each a number, null or absent. */
type TExitsGiven = { [K in keyof TExitEcho]?: number | null | undefined };

/** The exits as the engine takes them: null and absent alike are none. */
export const exitRulesOf = (given: TExitsGiven): ExitRules => ({ stopLossPct: given.stop_loss_pct ?? undefined, takeProfitPct: given.take_profit_pct ?? undefined, trailPct: given.trail_pct ?? undefined });

/** The exits as an answer echoes them, null for none (answers stored before exits existed had none). */
export const exitEchoOf = (given: TExitsGiven): TExitEcho => ({ stop_loss_pct: given.stop_loss_pct ?? null, take_profit_pct: given.take_profit_pct ?? null, trail_pct: given.trail_pct ?? null });

/** The longest warm-up the runs need. */
export const warmupOf = (strategy: StrategyDefinition, runs: readonly StrategyRunSpec[]): number => Math.max(0, ...runs.map((spec) => strategy.warmup(spec.params)));

/** One strategy run of a job: its validated params and the size they say. */
export const specOf = (strategyName: string, params: Record<string, unknown>): StrategyRunSpec => ({ strategyName, params, size: typeof params.size === 'number' ? params.size : 1 });

// Made once per strategy: every sweep checks its grid's keys against it, and making it takes longer than the check.
const PARAMS_SCHEMAS = new WeakMap<StrategyDefinition, Readonly<Record<string, unknown>>>();

/** A strategy's parameters as JSON schema, by name (type, default, bounds, description). */
export const paramsSchemaOf = (strategy: StrategyDefinition): Readonly<Record<string, unknown>> => {
  let schema = PARAMS_SCHEMAS.get(strategy);
  if (!schema) {
    schema = (z.toJSONSchema(strategy.params, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown> }).properties ?? {};
    PARAMS_SCHEMAS.set(strategy, schema);
  }
  return schema;
};

/** Every combination of the grid's values, in the grid's order (the first key varies slowest). */
export const gridPoints = (grid: Record<string, number[]>): Record<string, number>[] =>
  Object.entries(grid).reduce<Record<string, number>[]>((points, [key, values]) => points.flatMap((point) => values.map((value) => ({ ...point, [key]: value }))), [{}]);

/** A point's value for ranking: higher is better (a drawdown nearer zero is higher already). */
export const rankValue = (point: TSweepResult['points'][number], metric: TSweepRequest['rank_by']): number => {
  const value = point[metric];
  // No losing trip: the best profit factor there is, unless nothing traded at all.
  if (value === null) return point.total_trades > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return value;
};


/** A stored sweep as the list shows it: its answer without the points, their counts, the best one. */
export const sweepSummaryOf = (row: Awaited<ReturnType<typeof listSweeps>>['rows'][number]): TSweepList['items'][number] => {
  const head = row.head as Omit<TSweepResult, 'sweep_id' | 'created_at' | 'points' | 'skipped'>;
  return {
    sweep_id: row.id,
    asset_class: head.asset_class,
    symbol: head.symbol,
    strategy_name: head.strategy_name,
    profile_name: head.profile_name,
    start_date: head.start_date,
    end_date: head.end_date,
    initial_capital: head.initial_capital,
    ...exitEchoOf(head),
    rank_by: head.rank_by,
    points_total: row.pointsTotal,
    skipped_total: row.skippedTotal,
    best: row.best as TSweepResult['points'][number] | null,
    created_at: row.createdAt.toISOString(),
  };
};
