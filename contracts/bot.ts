// Wire shapes of the per-user trading bot: start, stop and status (POST /api/bot/start,
// POST /api/bot/stop, GET /api/bot/status), the operator's force stop, and the bot's fills and
// positions that backfill /ws/live (GET /api/trades, GET /api/positions).
import { z } from 'zod';
import { ZTradingMode } from './brokers.ts';
import { ZTradeFrame } from './events.ts';
import { bodyBoolean, pageOf, requestJson, requestText, ZAssetClass, ZPageQuery, ZTimestamp } from './common.ts';
import { ZPositionList, type ZPosition } from './orders.ts';
import { ZSymbolInput } from './symbols.ts';

/** The most symbols one bot trades. */
export const BOT_MAX_SYMBOLS = 20;

/** The bar a strategy is evaluated on: 1-minute bars built from ticks, or daily bars. */
export const ZBotTimeframe = z.enum(['1m', '1d']);
export type TBotTimeframe = z.infer<typeof ZBotTimeframe>;

export const ZBotStartRequest = z.object({
  asset_class: ZAssetClass,
  symbols: z
    .array(ZSymbolInput)
    .min(1)
    .max(BOT_MAX_SYMBOLS)
    .refine((symbols) => new Set(symbols.map((symbol) => symbol.toUpperCase())).size === symbols.length, 'must not repeat a symbol'),
  /** A registered strategy (GET /api/strategy/list), lower-cased. */
  strategy_name: requestText().min(1).max(64),
  /** Overrides of the strategy's parameters; an unknown key is refused. */
  strategy_params: z.record(requestText(), requestJson()).nullable().optional(),
  /** True trades the live account: every live gate must pass. */
  live_mode: bodyBoolean().default(false),
  /** An extension: the bar the strategy decides on (default 1m). */
  timeframe: ZBotTimeframe.default('1m'),
});
export type TBotStartRequest = z.infer<typeof ZBotStartRequest>;

/** GET /api/bot/status, and the answer of start and stop: the `bot_status` frame's fields and the bot's settings. */
export const ZBotStatus = z.object({
  is_running: z.boolean(),
  is_halted: z.boolean(),
  halt_reason: z.string().nullable(),
  asset_class: ZAssetClass.nullable(),
  symbols: z.array(z.string()),
  strategy_name: z.string().nullable(),
  strategy_params: z.record(z.string(), z.unknown()).nullable(),
  live_mode: z.boolean(),
  timeframe: ZBotTimeframe.nullable(),
  started_at: ZTimestamp.nullable(),
  stopped_at: ZTimestamp.nullable(),
  /** Who ended the last run: user, admin or lock; null while it runs or before the first start. */
  stopped_by: z.enum(['user', 'admin', 'lock']).nullable(),
  ts: ZTimestamp,
});
export type TBotStatus = z.infer<typeof ZBotStatus>;

/** The operator's force stop: the user in the path. */
export const ZBotForceStopped = ZBotStatus.extend({ user_id: z.number().int() });

/** A fill of one of the bot's orders: the `trade` frame's fields, plus its order. */
export const ZBotTrade = ZTradeFrame.omit({ type: true, event_id: true }).extend({ client_order_id: z.string() });
export const ZBotTradeQuery = ZPageQuery.extend({ asset_class: ZAssetClass.optional() });
export type TBotTradeQuery = z.infer<typeof ZBotTradeQuery>;
export const ZBotTradeList = pageOf(ZBotTrade);
export type TBotTradeList = z.infer<typeof ZBotTradeList>;

/** Positions for /ws/live's backfill: of one asset class, or of every class the user has a broker for. */
export const ZBotPositionsQuery = z.object({ asset_class: ZAssetClass.optional(), mode: ZTradingMode.optional() });
export const ZBotPositionList = ZPositionList;
export type TBotPosition = z.infer<typeof ZPosition>;

/** The operator overview's view of a running bot. */
export interface RunningBot {
  user_id: number;
  username: string;
  asset_class: z.infer<typeof ZAssetClass>;
  strategy_name: string;
  live_mode: boolean;
  started_at: string;
}

/** One run of the bot (a start, and how it ended), newest first in GET /api/bot/runs. */
export const ZBotRun = z.object({
  run_id: z.string(),
  asset_class: ZAssetClass,
  symbols: z.array(z.string()),
  strategy_name: z.string(),
  strategy_params: z.record(z.string(), z.unknown()),
  live_mode: z.boolean(),
  timeframe: ZBotTimeframe,
  started_at: ZTimestamp,
  stopped_at: ZTimestamp.nullable(),
  stopped_by: z.enum(['user', 'admin', 'lock']).nullable(),
  halt_reason: z.string().nullable(),
  is_running: z.boolean(),
});
export type TBotRun = z.infer<typeof ZBotRun>;
export const ZBotRunList = pageOf(ZBotRun);
export const ZBotRunQuery = ZPageQuery;

export const ZBotDriftPath = z.object({
  run_id: requestText().min(1).max(64),
  /** One of the run's symbols (default its first). */
  symbol: ZSymbolInput.optional(),
});

const ZDriftFill = z.object({ at: ZTimestamp, qty: z.number(), price: z.number(), fee: z.number() });

/**
 * Why a decision's fills differ: `match` (none), `price`, `fee`, `missing_live` (the replay
 * traded, the bot did not), `extra_live` (the bot traded, the replay did not), `unfilled` (the
 * bot's order never filled).
 */
export const ZDriftCause = z.enum(['match', 'price', 'fee', 'missing_live', 'extra_live', 'unfilled']);

export const ZBotDriftRow = z.object({
  bar_start: ZTimestamp,
  side: z.enum(['buy', 'sell']),
  cause: ZDriftCause,
  backtest: ZDriftFill.nullable(),
  live: ZDriftFill.extend({ client_order_id: z.string() }).nullable(),
  price_gap_pct: z.number().nullable(),
  fee_gap_pct: z.number().nullable(),
  effect_pct: z.number().nullable(),
});
export type TBotDriftRow = z.infer<typeof ZBotDriftRow>;

/** GET /api/bot/runs/{run_id}/drift: the run's bars replayed through the backtest engine beside what the bot did. */
export const ZBotDrift = z.object({
  run_id: z.string(),
  symbol: z.string(),
  strategy_name: z.string(),
  timeframe: ZBotTimeframe,
  bars: z.number().int(),
  warmup_bars: z.number().int(),
  backtest_return_pct: z.number(),
  live_return_pct: z.number(),
  return_gap_pct: z.number(),
  gap_by_cause: z.object({ price_pct: z.number(), fee_pct: z.number(), trades_pct: z.number() }),
  compared: z.number().int(),
  differing: z.number().int(),
  rows: z.array(ZBotDriftRow),
});
export type TBotDrift = z.infer<typeof ZBotDrift>;
