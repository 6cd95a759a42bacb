// Examples of the parameter sweeps and the walk-forward test of the stock backtests.
import type { ZSweepIdPath, ZSweepList, ZSweepListQuery, ZSweepRequest, ZSweepResult, ZWalkForwardRequest, ZWalkForwardResult, TSweepResult } from '../backtest.ts';
import { example, type OperationExample } from './types.ts';

const RUN = {
  symbol: 'AAPL',
  asset_class: 'us_equity',
  strategy_name: 'sma_crossover',
  start_date: '2024-01-02',
  end_date: '2025-12-31',
  initial_capital: 10000,
  profile_name: 'us_broker_zero',
  stop_loss_pct: 8,
} as const;

/** The exits as the answers echo them: the stop-loss asked for, no take-profit, no trail. */
const EXITS = { stop_loss_pct: RUN.stop_loss_pct, take_profit_pct: null, trail_pct: null };

const BEST = { rank: 1, strategy_params: { fast: 20, slow: 50, size: 1 }, final_capital: 12410, total_return_pct: 0.241, annual_return: 0.1142, sharpe_ratio: 1.21, max_drawdown_pct: -0.0934, win_rate: 0.62, profit_factor: 2.3, total_trades: 8 };
const SECOND = { rank: 2, strategy_params: { fast: 10, slow: 50, size: 1 }, final_capital: 11876, total_return_pct: 0.1876, annual_return: 0.0899, sharpe_ratio: 0.97, max_drawdown_pct: -0.1108, win_rate: 0.55, profit_factor: 1.8, total_trades: 11 };
const SKIPPED = [{ strategy_params: { fast: 50, slow: 50, size: 1 }, reason: 'slow must be greater than fast' }];

const SWEEP: TSweepResult = {
  sweep_id: 'e1d2c3b4-a596-4877-8c6d-5e4f3a2b1c0d',
  asset_class: 'us_equity',
  symbol: 'AAPL',
  strategy_name: 'sma_crossover',
  profile_name: 'us_broker_zero',
  start_date: RUN.start_date,
  end_date: RUN.end_date,
  initial_capital: 10000,
  ...EXITS,
  rank_by: 'sharpe_ratio',
  points: [BEST, SECOND],
  skipped: SKIPPED,
  created_at: '2026-12-02T02:55:40.000Z',
};

/** The sweep as its list shows it: no points and no skipped ones, but their counts and the best point. */
const { points: _points, skipped: _skipped, created_at: _createdAt, ...summaryHead } = SWEEP;

const GRID = { fast: [10, 20, 50], slow: [50] };

export const SWEEP_EXAMPLES: Record<string, OperationExample> = {
  backtestSweep: example<typeof ZSweepRequest, typeof ZSweepResult>({ input: { ...RUN, grid: GRID, rank_by: 'sharpe_ratio' }, output: SWEEP }),
  backtestListSweeps: example<typeof ZSweepListQuery, typeof ZSweepList>({
    input: { page: 1, size: 20, symbol: 'AAPL', strategy: 'sma_crossover' },
    output: {
      items: [{ ...summaryHead, points_total: SWEEP.points.length, skipped_total: SWEEP.skipped.length, best: BEST, created_at: SWEEP.created_at }],
      total: 1,
      page: 1,
      size: 20,
    },
  }),
  backtestGetSweep: example<typeof ZSweepIdPath, typeof ZSweepResult>({ input: { sweep_id: SWEEP.sweep_id }, output: SWEEP }),
  backtestWalkForward: example<typeof ZWalkForwardRequest, typeof ZWalkForwardResult>({
    input: { ...RUN, grid: GRID, rank_by: 'sharpe_ratio', train_bars: 252, test_bars: 63 },
    output: {
      asset_class: 'us_equity',
      symbol: 'AAPL',
      strategy_name: 'sma_crossover',
      profile_name: 'us_broker_zero',
      rank_by: 'sharpe_ratio',
      initial_capital: 10000,
      ...EXITS,
      windows: [
        {
          train_start: '2024-01-02',
          train_end: '2024-12-31',
          test_start: '2025-01-02',
          test_end: '2025-04-03',
          best_params: { fast: 20, slow: 50, size: 1 },
          train_score: 1.34,
          test: { final_capital: 10352, total_return_pct: 0.0352, sharpe_ratio: 0.88, max_drawdown_pct: -0.0411, total_trades: 2 },
        },
      ],
      equity_curve: [
        { date: '2025-01-02', equity: 10000 },
        { date: '2025-04-03', equity: 10352 },
      ],
      equity_curve_total: 63,
      final_capital: 10352,
      total_return_pct: 0.0352,
      annual_return: 0.1485,
      sharpe_ratio: 0.88,
      max_drawdown_pct: -0.0411,
      win_rate: 0.5,
      profit_factor: 1.6,
      total_trades: 2,
      skipped: SKIPPED,
    },
  }),
};
