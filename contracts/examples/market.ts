// Examples of the instrument registry and the daily bars (GET /api/instruments,
// GET /api/market-data/ohlcv).
import type { ZInstrumentList, ZInstrumentListQuery, TInstrument } from '../instruments.ts';
import type { ZOhlcvQuery, ZOhlcvResponse } from '../marketdata.ts';
import { example, type OperationExample } from './types.ts';

export const EXAMPLE_INSTRUMENT: TInstrument = {
  symbol: 'AAPL',
  asset_class: 'us_equity',
  exchange: 'NASDAQ',
  currency: 'USD',
  name: 'Apple Inc.',
  reference_price: 238.5,
  tick_rule: 'fixed',
  tick_size: 0.01,
  lot_size: 1,
  fractional: true,
  updated_at: '2026-12-01T22:05:00.000Z',
};

export const MARKET_EXAMPLES: Record<string, OperationExample> = {
  instrumentsList: example<typeof ZInstrumentListQuery, typeof ZInstrumentList>({
    input: { page: 1, size: 20, asset_class: 'us_equity', q: 'apple' },
    output: { items: [EXAMPLE_INSTRUMENT], total: 1, page: 1, size: 20 },
  }),
  marketDataOhlcv: example<typeof ZOhlcvQuery, typeof ZOhlcvResponse>({
    input: { asset_class: 'crypto', symbol: 'BTC/USDT', from: '2026-11-27', to: '2026-11-28' },
    output: {
      asset_class: 'crypto',
      symbol: 'BTC/USDT',
      currency: 'USDT',
      bars: [
        { date: '2026-11-27', open: 90120.5, high: 92480, low: 89650.25, close: 91875.4, adj_close: null, volume: 18342.77, source: 'import' },
        { date: '2026-11-28', open: 91875.4, high: 93010, low: 90840.1, close: 91502.3, adj_close: null, volume: 16910.05, source: 'import' },
      ],
    },
  }),
};
