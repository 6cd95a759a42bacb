// Examples of the trading bot: start, stop and status, its fills and its positions.
import type { z } from 'zod';
import type {
  ZBotDrift,
  ZBotDriftPath,
  ZBotPositionList,
  ZBotPositionsQuery,
  ZBotRunList,
  ZBotRunQuery,
  ZBotStartRequest,
  ZBotStatus,
  ZBotTradeList,
  ZBotTradeQuery,
  TBotStatus,
} from '../bot.ts';
import { EXAMPLE_POSITIONS } from './orders.ts';
import { example, type OperationExample } from './types.ts';

/** A paper bot trading two pairs on 1-minute bars. */
export const EXAMPLE_BOT: TBotStatus = {
  is_running: true,
  is_halted: false,
  halt_reason: null,
  asset_class: 'crypto',
  symbols: ['BTC/USDT', 'ETH/USDT'],
  strategy_name: 'ema_crossover',
  strategy_params: { fast: 12, slow: 26 },
  live_mode: false,
  timeframe: '1m',
  started_at: '2026-12-02T01:00:00.000Z',
  stopped_at: null,
  stopped_by: null,
  ts: '2026-12-02T04:15:00.000Z',
};

const STOPPED: TBotStatus = { ...EXAMPLE_BOT, is_running: false, stopped_at: '2026-12-02T04:18:30.000Z', stopped_by: 'user', ts: '2026-12-02T04:18:30.000Z' };

export const BOT_EXAMPLES: Record<string, OperationExample> = {
  botStart: example<typeof ZBotStartRequest, typeof ZBotStatus>({
    input: { asset_class: 'crypto', symbols: ['BTC/USDT', 'ETH/USDT'], strategy_name: 'ema_crossover', strategy_params: { fast: 12, slow: 26 }, live_mode: false, timeframe: '1m' },
    output: { ...EXAMPLE_BOT, started_at: '2026-12-02T04:16:00.000Z', ts: '2026-12-02T04:16:00.000Z' },
  }),
  botStop: example<z.ZodVoid, typeof ZBotStatus>({ output: STOPPED }),
  botStatus: example<z.ZodVoid, typeof ZBotStatus>({ output: EXAMPLE_BOT }),
  botTrades: example<typeof ZBotTradeQuery, typeof ZBotTradeList>({
    input: { page: 1, size: 20, asset_class: 'crypto' },
    output: {
      items: [
        {
          symbol: 'ETH/USDT',
          asset_class: 'crypto',
          side: 'buy',
          amount: 0.8,
          price: 3412.25,
          fee: 2.7298,
          fees: { commission: 2.7298, tax: 0 },
          ts: '2026-12-02T03:47:00.214Z',
          client_order_id: 'bot-5e1f8a2c9b74-ETH-USDT-htn2b-b',
        },
      ],
      total: 1,
      page: 1,
      size: 20,
    },
  }),
  botPositions: example<typeof ZBotPositionsQuery, typeof ZBotPositionList>({ input: { asset_class: 'crypto', mode: 'paper' }, output: EXAMPLE_POSITIONS }),
  botRuns: example<typeof ZBotRunQuery, typeof ZBotRunList>({
    input: { page: 1, size: 20 },
    output: {
      items: [
        {
          run_id: '5e1f8a2c9b74',
          asset_class: 'crypto',
          symbols: ['BTC/USDT', 'ETH/USDT'],
          strategy_name: 'ema_crossover',
          strategy_params: { fast: 12, slow: 26, size: 1 },
          live_mode: false,
          timeframe: '1m',
          started_at: '2026-12-02T01:00:00.000Z',
          stopped_at: '2026-12-02T04:18:30.000Z',
          stopped_by: 'user',
          halt_reason: null,
          is_running: false,
        },
      ],
      total: 1,
      page: 1,
      size: 20,
    },
  }),
  botDrift: example<typeof ZBotDriftPath, typeof ZBotDrift>({
    input: { run_id: '5e1f8a2c9b74', symbol: 'ETH/USDT' },
    output: {
      run_id: '5e1f8a2c9b74',
      symbol: 'ETH/USDT',
      strategy_name: 'ema_crossover',
      timeframe: '1m',
      bars: 198,
      warmup_bars: 60,
      backtest_return_pct: 1.214,
      live_return_pct: 0.907,
      return_gap_pct: -0.307,
      gap_by_cause: { price_pct: -0.118, fee_pct: 0, trades_pct: -0.189 },
      compared: 2,
      differing: 3,
      rows: [
        {
          bar_start: '2026-12-02T03:46:00.000Z',
          side: 'buy',
          cause: 'price',
          backtest: { at: '2026-12-02T03:47:00.000Z', qty: 29.2, price: 3408.2, fee: 99.5194 },
          live: { at: '2026-12-02T03:47:00.214Z', qty: 0.8, price: 3412.25, fee: 2.7298, client_order_id: 'bot-5e1f8a2c9b74-ETH-USDT-htn2b-b' },
          price_gap_pct: 0.118831,
          fee_gap_pct: 0,
          effect_pct: -0.118831,
        },
        {
          bar_start: '2026-12-02T04:05:00.000Z',
          side: 'sell',
          cause: 'match',
          backtest: { at: '2026-12-02T04:06:00.000Z', qty: 29.2, price: 3451.6, fee: 100.7867 },
          live: { at: '2026-12-02T04:06:00.180Z', qty: 0.8, price: 3451.6, fee: 2.7613, client_order_id: 'bot-5e1f8a2c9b74-ETH-USDT-htn2u-s' },
          price_gap_pct: 0,
          fee_gap_pct: 0,
          effect_pct: 0,
        },
        {
          bar_start: '2026-12-02T04:12:00.000Z',
          side: 'buy',
          cause: 'missing_live',
          backtest: { at: '2026-12-02T04:13:00.000Z', qty: 29.1, price: 3447.1, fee: 100.3106 },
          live: null,
          price_gap_pct: null,
          fee_gap_pct: null,
          effect_pct: null,
        },
      ],
    },
  }),
};
