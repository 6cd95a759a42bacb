// Wire shapes of the backtests: the request (POST /api/equity/backtest, POST /api/backtest/run),
// the full result, the list of summaries, and the strategy list.
import { z } from 'zod';
import { pageOf, requestJson, requestText, ZPageQuery, ZTimestamp } from './common.ts';
import { ZDate } from './marketdata.ts';
import { ZSymbolInput } from './symbols.ts';

/** A calendar date that exists (2024-02-30 does not). */
export const ZCalendarDate = ZDate.refine((value) => {
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}, 'not a calendar date');

/** The most points the equity curve of an answer holds, and the most trades. */
export const MAX_EQUITY_POINTS = 4_000;
export const MAX_TRADES = 1_000;

/** The bounds of the exits, in percent: a stop below the entry's fill above 0, a trail as an order's trail_percent. */
export const EXIT_BOUNDS = { stop_loss_pct: { below: 100 }, take_profit_pct: { max: 1_000 }, trail_pct: { max: 50 } } as const;

/**
 * The exits every strategy takes (DESIGN, Advanced orders), in percent: a stop-loss below the
 * entry's fill price, a take-profit above it, a trailing stop below the highest high since the
 * entry. Absent or null is none.
 */
const exitFields = {
  stop_loss_pct: z.number().positive().lt(EXIT_BOUNDS.stop_loss_pct.below).nullable().optional(),
  take_profit_pct: z.number().positive().max(EXIT_BOUNDS.take_profit_pct.max).nullable().optional(),
  trail_pct: z.number().positive().max(EXIT_BOUNDS.trail_pct.max).nullable().optional(),
};

/** The exits as an answer echoes them: null is none. */
export const exitEchoFields = {
  stop_loss_pct: z.number().nullable(),
  take_profit_pct: z.number().nullable(),
  trail_pct: z.number().nullable(),
};
export type TExitEcho = { [K in keyof typeof exitEchoFields]: number | null };

/** What every backtest request names: the instrument, the strategy, the range, the money and the exits. */
const runFields = {
  symbol: ZSymbolInput,
  /** us_equity or kr_equity on /api/equity/backtest, crypto on /api/backtest/run; anything else is 422 INVALID_ASSET_CLASS. */
  asset_class: requestText().min(1).max(32),
  strategy_name: requestText().min(1).max(64),
  /** Overrides of the strategy's parameters; an unknown key is refused. */
  strategy_params: z.record(requestText(), requestJson()).nullable().optional(),
  start_date: ZCalendarDate,
  end_date: ZCalendarDate,
  initial_capital: z.number().finite().positive().max(1e15).default(10_000),
  profile_name: requestText().max(64).optional(),
  timeframe: z.literal('1d').default('1d'),
  ...exitFields,
};

const ZRunFields = z.object(runFields);
/** Every backtest request's range rule. */
const endAfterStart: [(request: { start_date: string; end_date: string }) => boolean, { path: string[]; message: string }] = [
  (request) => request.end_date > request.start_date,
  { path: ['end_date'], message: 'must be after start_date' },
];

export const ZBacktestRequest = ZRunFields.strict().refine(...endAfterStart);
export type TBacktestRequest = z.infer<typeof ZBacktestRequest>;

export const ZEquityPoint = z.object({ date: ZDate, equity: z.number() });
/** Why a sell closed the position: the strategy's signal, the end of the run, or one of the exits. */
export const TRADE_REASONS = ['signal', 'end', 'stop_loss', 'trail', 'take_profit'] as const;
export type TTradeReason = (typeof TRADE_REASONS)[number];
export const ZBacktestTrade = z.object({
  timestamp: ZTimestamp,
  symbol: z.string(),
  side: z.enum(['buy', 'sell']),
  price: z.number(),
  amount: z.number(),
  fee: z.number(),
  /** A sell's why (absent on buys, and on sells of results stored before exits existed). */
  reason: z.enum(TRADE_REASONS).optional(),
});

const summaryFields = {
  result_id: z.string(),
  asset_class: z.string(),
  currency: z.string(),
  profile_name: z.string(),
  strategy_name: z.string(),
  symbol: z.string(),
  start_date: ZDate,
  end_date: ZDate,
  total_return_pct: z.number(),
  sharpe_ratio: z.number(),
  max_drawdown_pct: z.number(),
  win_rate: z.number(),
  total_trades: z.number().int(),
  created_at: ZTimestamp,
};

export const ZBacktestSummary = z.object(summaryFields);

export const ZBacktestResult = z.object({
  ...summaryFields,
  strategy_params: z.record(z.string(), z.unknown()),
  ...exitEchoFields,
  initial_capital: z.number(),
  /** Bars before start_date the indicators warmed on (the strategy's warm-up, fewer when fewer are stored); nothing trades on them. */
  warmup_bars: z.number().int(),
  final_capital: z.number(),
  annual_return: z.number(),
  profit_factor: z.number().nullable(),
  buy_hold_return_pct: z.number(),
  equity_curve: z.array(ZEquityPoint),
  trades: z.array(ZBacktestTrade),
  /** How many points and fills there were before the answer was trimmed (an extension). */
  equity_curve_total: z.number().int(),
  trades_total: z.number().int(),
});
export type TBacktestResult = z.infer<typeof ZBacktestResult>;

export const ZBacktestListQuery = ZPageQuery.extend({
  asset_class: requestText().max(32).optional(),
  symbol: requestText().max(32).optional(),
  strategy: requestText().max(64).optional(),
});
export type TBacktestListQuery = z.infer<typeof ZBacktestListQuery>;
export const ZBacktestList = pageOf(ZBacktestSummary);
export type TBacktestList = z.infer<typeof ZBacktestList>;

export const ZBacktestIdPath = z.object({ result_id: requestText().min(1).max(64) });

export const ZStrategyInfo = z.object({
  name: z.string(),
  description: z.string(),
  /** Per parameter: its JSON schema (type, default, bounds, description). */
  params: z.record(z.string(), z.unknown()),
  asset_classes: z.array(z.string()),
});
export const ZStrategyList = z.object({ items: z.array(ZStrategyInfo) });
export type TStrategyList = z.infer<typeof ZStrategyList>;

/** The metrics a sweep can rank its points by; for max_drawdown_pct, nearer zero ranks higher. */
export const ZRankMetric = z.enum(['total_return_pct', 'annual_return', 'sharpe_ratio', 'max_drawdown_pct', 'win_rate', 'profit_factor']);

/** The most points one sweep may run (the grid's product); the service's setting may lower it. */
export const MAX_SWEEP_POINTS = 1_000;

/** Per parameter, the values to try; parameters left out keep their defaults (or `strategy_params`). */
const ZGrid = z.record(requestText().max(64), z.array(z.number().finite()).min(1).max(MAX_SWEEP_POINTS));

export const ZSweepRequest = ZRunFields.extend({ grid: ZGrid, rank_by: ZRankMetric.default('sharpe_ratio') })
  .strict()
  .refine(...endAfterStart);
export type TSweepRequest = z.infer<typeof ZSweepRequest>;

/** A run's metrics (fractions), as a sweep point and a walk-forward report them. */
const metricFields = {
  final_capital: z.number(),
  total_return_pct: z.number(),
  annual_return: z.number(),
  sharpe_ratio: z.number(),
  max_drawdown_pct: z.number(),
  win_rate: z.number(),
  profit_factor: z.number().nullable(),
  total_trades: z.number().int(),
};

export const ZSweepPoint = z.object({
  rank: z.number().int(),
  strategy_params: z.record(z.string(), z.unknown()),
  ...metricFields,
});

export const ZSweepResult = z.object({
  sweep_id: z.string(),
  asset_class: z.string(),
  symbol: z.string(),
  strategy_name: z.string(),
  profile_name: z.string(),
  start_date: ZDate,
  end_date: ZDate,
  initial_capital: z.number(),
  ...exitEchoFields,
  rank_by: ZRankMetric,
  /** Every point that ran, best first. */
  points: z.array(ZSweepPoint),
  /** Grid points whose parameters the strategy refuses (e.g. fast not below slow), with why. */
  skipped: z.array(z.object({ strategy_params: z.record(z.string(), z.unknown()), reason: z.string() })),
  created_at: ZTimestamp,
});
export type TSweepResult = z.infer<typeof ZSweepResult>;
export const ZSweepIdPath = z.object({ sweep_id: requestText().min(1).max(64) });

/** GET /api/equity/backtest/sweep: the user's sweeps, newest first; filters as the backtest list's. */
export const ZSweepListQuery = ZPageQuery.extend({
  symbol: requestText().max(32).optional(),
  strategy: requestText().max(64).optional(),
});
export type TSweepListQuery = z.infer<typeof ZSweepListQuery>;

/**
 * A stored sweep without its points: what it ran (the result's fields), how many points, and the
 * best one. `created_at` is taken out and put back last, so the wire keeps its field order.
 */
export const ZSweepSummary = ZSweepResult.omit({ points: true, skipped: true, created_at: true }).extend({
  points_total: z.number().int(),
  skipped_total: z.number().int(),
  /** The point ranked first (null when every point was skipped). */
  best: ZSweepPoint.nullable(),
  created_at: ZSweepResult.shape.created_at,
});
export const ZSweepList = pageOf(ZSweepSummary);
export type TSweepList = z.infer<typeof ZSweepList>;

export const ZWalkForwardRequest = ZRunFields.extend({
  grid: ZGrid,
  rank_by: ZRankMetric.default('sharpe_ratio'),
  /** Bars each optimisation (train) window spans. */
  train_bars: z.number().int().min(20).max(100_000),
  /** Bars each evaluation (test) window spans; windows roll forward by this much. */
  test_bars: z.number().int().min(5).max(100_000),
})
  .strict()
  .refine(...endAfterStart);
export type TWalkForwardRequest = z.infer<typeof ZWalkForwardRequest>;

const ZWindowMetrics = z.object({
  final_capital: z.number(),
  total_return_pct: z.number(),
  sharpe_ratio: z.number(),
  max_drawdown_pct: z.number(),
  total_trades: z.number().int(),
});

export const ZWalkForwardResult = z.object({
  asset_class: z.string(),
  symbol: z.string(),
  strategy_name: z.string(),
  profile_name: z.string(),
  rank_by: ZRankMetric,
  initial_capital: z.number(),
  ...exitEchoFields,
  windows: z.array(
    z.object({
      train_start: ZDate,
      train_end: ZDate,
      test_start: ZDate,
      test_end: ZDate,
      /** The grid point that ranked best on the train window, run on the test window. */
      best_params: z.record(z.string(), z.unknown()),
      train_score: z.number().nullable(),
      test: ZWindowMetrics,
    }),
  ),
  /** The test windows' equity, one after another (each starts with the capital the last ended with). */
  equity_curve: z.array(ZEquityPoint),
  equity_curve_total: z.number().int(),
  /** Out-of-sample metrics over the stitched curve. */
  ...metricFields,
  skipped: z.array(z.object({ strategy_params: z.record(z.string(), z.unknown()), reason: z.string() })),
});
export type TWalkForwardResult = z.infer<typeof ZWalkForwardResult>;
