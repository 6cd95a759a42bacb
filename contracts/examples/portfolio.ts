// Example of GET /api/equity/portfolio/history: three days of a paper crypto account, a reset on
// the second (a flow, not a loss), today's point live.
import type { ZPortfolioHistory, ZPortfolioHistoryQuery } from '../portfolio.ts';
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
};
