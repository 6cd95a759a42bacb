// Examples of the backtests: a run (stocks and crypto), the lists, one result, the strategies.
import type { z } from 'zod';
import type { ZBacktestIdPath, ZBacktestList, ZBacktestListQuery, ZBacktestRequest, ZBacktestResult, ZStrategyList, TBacktestResult } from '../backtest.ts';
import { example, type OperationExample } from './types.ts';

/** An SMA crossover on AAPL over 2025 (returns are fractions). */
const AAPL_RESULT: TBacktestResult = {
  result_id: 'b3c4d5e6-f7a8-4b9c-8d0e-1f2a3b4c5d6e',
  asset_class: 'us_equity',
  currency: 'USD',
  profile_name: 'us_broker_zero',
  strategy_name: 'sma_crossover',
  symbol: 'AAPL',
  start_date: '2025-01-02',
  end_date: '2025-12-31',
  total_return_pct: 0.1184,
  sharpe_ratio: 1.07,
  max_drawdown_pct: -0.0862,
  win_rate: 0.6,
  total_trades: 5,
  created_at: '2026-12-02T02:40:11.000Z',
  strategy_params: { fast: 20, slow: 50 },
  stop_loss_pct: 8,
  take_profit_pct: null,
  trail_pct: 5,
  initial_capital: 10000,
  warmup_bars: 50,
  final_capital: 11184,
  annual_return: 0.1191,
  profit_factor: 2.14,
  buy_hold_return_pct: 0.0915,
  equity_curve: [
    { date: '2025-01-02', equity: 10000 },
    { date: '2025-07-01', equity: 10642.3 },
    { date: '2025-12-31', equity: 11184 },
  ],
  trades: [
    { timestamp: '2025-03-18T20:00:00.000Z', symbol: 'AAPL', side: 'buy', price: 214.37, amount: 46, fee: 0 },
    { timestamp: '2025-05-09T20:00:00.000Z', symbol: 'AAPL', side: 'sell', price: 226.91, amount: 46, fee: 0.06, reason: 'trail' },
  ],
  equity_curve_total: 250,
  trades_total: 10,
};

/** The same strategy on BTC/USDT over 2025, as the crypto routes answer. */
const BTC_RESULT: TBacktestResult = {
  ...AAPL_RESULT,
  ...{ result_id: 'c9d8e7f6-a5b4-4c3d-8e2f-1a0b9c8d7e6f', asset_class: 'crypto', currency: 'USDT', profile_name: 'crypto_default', symbol: 'BTC/USDT', start_date: '2025-01-01' },
  ...{ total_return_pct: 0.2316, sharpe_ratio: 0.94, max_drawdown_pct: -0.1975, win_rate: 0.5, total_trades: 6 },
  ...{ final_capital: 12316, annual_return: 0.2324, profit_factor: 1.71, buy_hold_return_pct: 0.3102, equity_curve_total: 365, trades_total: 12 },
  equity_curve: [{ date: '2025-01-01', equity: 10000 }, { date: '2025-07-01', equity: 11420.8 }, { date: '2025-12-31', equity: 12316 }],
  trades: [
    { timestamp: '2025-02-11T00:00:00.000Z', symbol: 'BTC/USDT', side: 'buy', price: 97240.5, amount: 0.1027, fee: 9.99 },
    { timestamp: '2025-04-02T00:00:00.000Z', symbol: 'BTC/USDT', side: 'sell', price: 85110.2, amount: 0.1027, fee: 8.74, reason: 'signal' },
  ],
};

const summaryOf = ({ strategy_params: _p, stop_loss_pct: _sl, take_profit_pct: _tp, trail_pct: _tr, initial_capital: _i, warmup_bars: _w, final_capital: _f, annual_return: _a, profit_factor: _pf, buy_hold_return_pct: _b, equity_curve: _c, trades: _t, equity_curve_total: _ct, trades_total: _tt, ...summary }: TBacktestResult) =>
  summary;

const runRequest = (symbol: string, asset_class: string): z.input<typeof ZBacktestRequest> => ({
  symbol,
  asset_class,
  strategy_name: 'sma_crossover',
  strategy_params: { fast: 20, slow: 50 },
  start_date: asset_class === 'crypto' ? '2025-01-01' : '2025-01-02',
  end_date: '2025-12-31',
  initial_capital: 10000,
  profile_name: asset_class === 'crypto' ? 'crypto_default' : 'us_broker_zero',
  timeframe: '1d',
  stop_loss_pct: 8,
  trail_pct: 5,
});

export const BACKTEST_EXAMPLES: Record<string, OperationExample> = {
  backtestEquityRun: example<typeof ZBacktestRequest, typeof ZBacktestResult>({ input: runRequest('AAPL', 'us_equity'), output: AAPL_RESULT }),
  backtestEquityList: example<typeof ZBacktestListQuery, typeof ZBacktestList>({
    input: { page: 1, size: 20, asset_class: 'us_equity', symbol: 'AAPL', strategy: 'sma_crossover' },
    output: { items: [summaryOf(AAPL_RESULT)], total: 1, page: 1, size: 20 },
  }),
  backtestEquityGet: example<typeof ZBacktestIdPath, typeof ZBacktestResult>({ input: { result_id: AAPL_RESULT.result_id }, output: AAPL_RESULT }),
  backtestCryptoRun: example<typeof ZBacktestRequest, typeof ZBacktestResult>({ input: runRequest('BTC/USDT', 'crypto'), output: BTC_RESULT }),
  backtestCryptoList: example<typeof ZBacktestListQuery, typeof ZBacktestList>({
    input: { page: 1, size: 20, asset_class: 'crypto', symbol: 'BTC/USDT', strategy: 'sma_crossover' },
    output: { items: [summaryOf(BTC_RESULT)], total: 1, page: 1, size: 20 },
  }),
  backtestCryptoGet: example<typeof ZBacktestIdPath, typeof ZBacktestResult>({ input: { result_id: BTC_RESULT.result_id }, output: BTC_RESULT }),
  backtestStrategies: example<z.ZodVoid, typeof ZStrategyList>({
    output: {
      items: [
        {
          name: 'sma_crossover',
          description: 'Buys when the fast simple moving average of the closes crosses above the slow one; sells when it crosses below.',
          params: {
            fast: { default: 10, description: 'Bars in the fast simple moving average of the closes.', type: 'integer', minimum: 1, maximum: 500 },
            slow: { default: 30, description: 'Bars in the slow simple moving average of the closes; more than fast.', type: 'integer', minimum: 2, maximum: 500 },
            size: { default: 1, description: 'Fraction of the cash each entry spends: more than 0, at most 1 (all of it).', type: 'number', exclusiveMinimum: 0, maximum: 1 },
          },
          asset_classes: ['us_equity', 'kr_equity', 'crypto'],
        },
      ],
    },
  }),
};
