// The real-time events: the frames of the two WebSocket channels (/ws/equity/orders and
// /ws/live), the tRPC subscriptions they forward, and the close codes of both.
import { z } from 'zod';
import { requestText, ZAssetClass, ZTimestamp } from './common.ts';
import { ZAnalysisMode, ZReportStatus } from './analysis.ts';
import { ZOrderEvent } from './orders.ts';

/** An event's id in the outbox: resumable with `last_event_id` (WebSocket) or tRPC's `lastEventId`. */
export const ZEventId = requestText().regex(/^[1-9][0-9]{0,15}$/, 'must be a positive integer event id');

/** Subscription input: where a reconnecting client left off (tRPC sets lastEventId itself). */
export const ZEventsInput = z
  .object({ lastEventId: ZEventId.nullish() })
  .strict()
  .optional();
export type TEventsInput = z.infer<typeof ZEventsInput>;

/** First frame of /ws/equity/orders. */
export const ZHelloFrame = z.object({
  type: z.literal('hello'),
  /** Asset classes with an active key: empty when no broker is registered. */
  asset_classes: z.array(ZAssetClass),
  user_id: z.number().int(),
});
export type THelloFrame = z.infer<typeof ZHelloFrame>;

/** An order event as the channel sends it, with its outbox id (an extension, for last_event_id). */
export const ZOrderEventFrame = ZOrderEvent.extend({ event_id: ZEventId });
export type TOrderEventFrame = z.infer<typeof ZOrderEventFrame>;

export const ZOrdersFrame = z.discriminatedUnion('type', [ZHelloFrame, ZOrderEventFrame]);
export type TOrdersFrame = z.infer<typeof ZOrdersFrame>;

/** /ws/live: a fill of the user's order. */
export const ZTradeFrame = z.object({
  type: z.literal('trade'),
  symbol: z.string(),
  asset_class: ZAssetClass,
  side: z.enum(['buy', 'sell']),
  amount: z.number(),
  price: z.number(),
  fee: z.number(),
  /** An extension on a fill's frame: the fee split into commission and tax (a KRX sell's), in the order's currency. */
  fees: z.object({ commission: z.number(), tax: z.number() }).optional(),
  ts: ZTimestamp,
  event_id: ZEventId,
});

/** /ws/live: the bot's signal (sent once the bot runs). */
export const ZSignalFrame = z.object({
  type: z.literal('signal'),
  symbol: z.string(),
  asset_class: ZAssetClass,
  direction: z.enum(['BUY', 'SELL']),
  confidence: z.number(),
  stop_loss: z.number().nullable(),
  take_profit: z.number().nullable(),
  ts: ZTimestamp,
  event_id: ZEventId,
});

/** /ws/live: the bot's state (sent once the bot runs). */
export const ZBotStatusFrame = z.object({
  type: z.literal('bot_status'),
  is_running: z.boolean(),
  is_halted: z.boolean(),
  halt_reason: z.string().nullable(),
  ts: ZTimestamp,
  event_id: ZEventId,
});

/** /ws/live: a price of a symbol the user holds or has an open order in (not durable: no event_id). */
export const ZTickFrame = z.object({
  type: z.literal('tick'),
  symbol: z.string(),
  asset_class: ZAssetClass,
  last: z.number(),
  ts: ZTimestamp,
});
export type TTickFrame = z.infer<typeof ZTickFrame>;

/**
 * /ws/live: an analysis report's progress, as it goes queued → running → each agent done →
 * done, partial or failed (an extension of the interface, for the console). Written to the
 * outbox with the change it reports, so it is durable and resumable like a trade.
 */
export const ZReportStatusFrame = z.object({
  type: z.literal('report_status'),
  report_id: z.string(),
  asset_class: ZAssetClass,
  symbol: z.string(),
  mode: ZAnalysisMode,
  status: ZReportStatus,
  /** The agent whose step just ended (its answer, or its failure); null on the other changes. */
  agent: z.enum(['technical', 'intel', 'risk', 'bull', 'bear', 'decision']).nullable(),
  /** Agent steps ended so far in this run. */
  agents_done: z.number().int(),
  /**
   * Agent steps the mode plans (quick 2, standard 4, full 4 + 2 per debate round). A run that
   * stops early (the technical agent failed, a cap) ends with agents_done below it.
   */
  agents_total: z.number().int(),
  ts: ZTimestamp,
  event_id: ZEventId,
});
export type TReportStatusFrame = z.infer<typeof ZReportStatusFrame>;

export const ZLiveFrame = z.discriminatedUnion('type', [ZSignalFrame, ZTradeFrame, ZBotStatusFrame, ZTickFrame, ZReportStatusFrame]);
export type TLiveFrame = z.infer<typeof ZLiveFrame>;

/** The close codes of the WebSocket endpoints (both channels and /trpc). */
export const WS_CLOSE = {
  normal: 1000,
  /** More connections for the user than WS_MAX_CONNECTIONS_PER_USER. */
  policy: 1008,
  /** A client frame over the endpoint's limit (4 KiB on the channels, BODY_LIMIT_BYTES on /trpc). */
  tooBig: 1009,
  internal: 1011,
  /** The service is halted, or the client reads too slowly for its send buffer. */
  tryAgainLater: 1013,
  /** Missing or invalid token (also a refresh token, an expired one, a deactivated user). */
  unauthorized: 4001,
} as const;

export const WS_PATHS = { orders: '/ws/equity/orders', live: '/ws/live' } as const;
