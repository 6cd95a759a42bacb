// Example of GET /api/equity/portfolio/history: three days of a paper crypto account, a reset on
// the second (a flow, not a loss), today's point live.
import type { ZActivitiesQuery, ZActivityList, ZPerformance, ZPerformanceQuery, ZPortfolioHistory, ZPortfolioHistoryQuery } from '../portfolio.ts';
import { example, type OperationExample } from './types.ts';

export const PORTFOLIO_EXAMPLES: Record<string, OperationExample> = {
  equityPortfolioHistory: example<typeof ZPortfolioHistoryQuery, typeof ZPortfolioHistory>({
    input: { asset_class: 'crypto', mode: 'paper', from: '2026-11-30', to: '2026-12-02' },
    output: {
      asset_class: 'crypto',
      mode: 'paper',
      currency: 'USDT',
      base_value: 100000,
      points: [
        { date: '2026-11-30', equity: 101250.5, cash: 55210.5, flows: 0, pnl: 1250.5, pnl_pct: 0.012505 },
        { date: '2026-12-01', equity: 100000, cash: 100000, flows: -1840.25, pnl: 589.75, pnl_pct: 0.00582466 },
        { date: '2026-12-02', equity: 99420, cash: 49450, flows: 0, pnl: -580, pnl_pct: -0.0058 },
      ],
    },
  }),
  equityPerformance: example<typeof ZPerformanceQuery, typeof ZPerformance>({
    input: { asset_class: 'crypto', mode: 'paper', from: '2026-11-30', to: '2026-12-02' },
    output: {
      asset_class: 'crypto',
      mode: 'paper',
      currency: 'USDT',
      from: '2026-11-30',
      to: '2026-12-02',
      time_weighted_return: 0.01249576,
      realized_pnl: 1180.25,
      unrealized_pnl: -580,
      fees: 96.4,
      taxes: 0,
      closed_lots: 2,
      win_rate: 0.5,
      max_drawdown_pct: -0.0058,
      sharpe_ratio: 9.87,
      profit_factor: 24.1,
      by_symbol: [
        { symbol: 'BTC/USDT', realized_pnl: 1180.25, unrealized_pnl: -580, fees: 96.4, taxes: 0, closed_lots: 2, win_rate: 0.5 },
      ],
      daily: [
        { date: '2026-11-30', return: 0.012505 },
        { date: '2026-12-01', return: 0.00582466 },
        { date: '2026-12-02', return: -0.0058 },
      ],
      weekly: [{ week: '2026-W49', return: 0.01249576 }],
      monthly: [
        { month: '2026-11', return: 0.012505 },
        { month: '2026-12', return: -0.00000912 },
      ],
    },
  }),
  equityActivities: example<typeof ZActivitiesQuery, typeof ZActivityList>({
    input: { asset_class: 'crypto', mode: 'paper', type: 'lot', from: '2026-11-30', to: '2026-12-02', page: 1, size: 20, format: 'json' },
    output: {
      items: [
        {
          type: 'lot',
          symbol: 'BTC/USDT',
          qty: '0.05',
          acquired_at: '2026-11-30T09:12:44.120Z',
          sold_at: '2026-12-01T14:03:10.552Z',
          cost_basis: '4579.7725',
          proceeds: '4747.55075',
          gain: '167.77825',
        },
      ],
      total: 1,
      page: 1,
      size: 20,
    },
  }),
};
