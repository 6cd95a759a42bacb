// Examples of the trading bot: start, stop and status, its fills and its positions.
import type { z } from 'zod';
import type { ZBotPositionList, ZBotPositionsQuery, ZBotStartRequest, ZBotStatus, ZBotTradeList, ZBotTradeQuery, TBotStatus } from '../bot.ts';
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
};
