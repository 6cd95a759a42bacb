// Wire shapes of signal webhooks (DESIGN §6 "Integrations"): the user's hooks under
// /api/signals/webhooks, the body a TradingView-style alert sends to /hooks/{token}, and the
// signals it made under /api/signals.
import { z } from 'zod';
import { ZTradingMode } from './brokers.ts';
import { pageOf, requestText, ZAssetClass, ZPageQuery, ZTimestamp } from './common.ts';
import { ZOrderSide, ZOrderType, ZTimeInForce } from './orders.ts';
import { ZSymbolInput } from './symbols.ts';

/** The path a hook is called at; its token follows. */
export const SIGNAL_HOOK_PATH = '/hooks/';
export const DEFAULT_MAX_LAG_SEC = 120;
/** At most a day: an alert older than that is no signal to trade on. */
export const MAX_MAX_LAG_SEC = 86_400;

export const ZSignalWebhookCreate = z.object({
  name: requestText().trim().min(1).max(64),
  asset_class: ZAssetClass,
  /** The account its orders go to: paper, or live (besides the live gates, which judge each order). */
  mode: ZTradingMode.default('paper'),
  /** A signal whose `timestamp` is older than this (seconds) is refused as stale. */
  max_lag_sec: z.number().int().min(1).max(MAX_MAX_LAG_SEC).default(DEFAULT_MAX_LAG_SEC),
  /** When set, every call must carry it in its body's `passphrase`; kept only as a hash. */
  passphrase: requestText().min(1).max(128).optional(),
});
export type TSignalWebhookCreate = z.infer<typeof ZSignalWebhookCreate>;

export const ZSignalWebhook = z.object({
  id: z.string(),
  name: z.string(),
  asset_class: ZAssetClass,
  mode: ZTradingMode,
  max_lag_sec: z.number().int(),
  has_passphrase: z.boolean(),
  /** The token's first characters, to tell hooks apart; the token itself is shown only when made. */
  token_prefix: z.string(),
  created_at: ZTimestamp,
  /** When its token was last replaced; null before the first rotation. */
  rotated_at: ZTimestamp.nullable(),
});
export type TSignalWebhook = z.infer<typeof ZSignalWebhook>;

/** A hook as made or rotated: its token and the path to call, shown this once. */
export const ZSignalWebhookCreated = ZSignalWebhook.extend({
  token: z.string(),
  /** `/hooks/{token}`, to append to the service's public address. */
  url: z.string(),
});
export type TSignalWebhookCreated = z.infer<typeof ZSignalWebhookCreated>;

export const ZSignalWebhookList = z.object({ items: z.array(ZSignalWebhook) });
export type TSignalWebhookList = z.infer<typeof ZSignalWebhookList>;

/** A hook id in a path: text that is not one of the caller's hook ids is 404, like another user's. */
export const ZSignalWebhookIdPath = z.object({ id: requestText().min(1).max(64) });

/** The order types a signal may ask for: a trailing stop's trail is not among a signal's fields. */
export const ZSignalOrderType = ZOrderType.exclude(['trailing_stop']);

const positivePrice = () => z.number().finite().positive().max(1e15);

/**
 * The body of a call to /hooks/{token}: JSON, sent as application/json or text/plain. Exactly one
 * of `qty` (units) and `qty_pct` (a fraction, 0 < f <= 1: of the buying power for a buy at the
 * current price, of the held quantity for a sell; rounded down to the instrument's lot). Prices
 * follow the order's rules (POST /api/equity/orders). Numbers are JSON numbers, never strings.
 */
export const ZSignalPayload = z
  .object({
    symbol: ZSymbolInput,
    side: ZOrderSide,
    qty: z.number().finite().positive().max(1e12).optional(),
    qty_pct: z.number().finite().positive().max(1).optional(),
    order_type: ZSignalOrderType.default('market'),
    limit_price: positivePrice().optional(),
    stop_price: positivePrice().optional(),
    time_in_force: ZTimeInForce.optional(),
    /** Checked against the hook's when it has one; never stored. */
    passphrase: requestText().max(256).optional(),
    /** The alert's own id: a retried alert with the same id makes one order. */
    alert_id: requestText().trim().min(1).max(256).optional(),
    /** When the alert fired: ISO 8601 with an offset, or Unix seconds (a number or its digits). */
    timestamp: z.union([requestText().max(64), z.number().finite()]).optional(),
  })
  .superRefine((signal, ctx) => {
    if ((signal.qty === undefined) === (signal.qty_pct === undefined)) ctx.addIssue({ code: 'custom', path: ['qty'], message: 'give exactly one of qty and qty_pct' });
  });
export type TSignalPayload = z.infer<typeof ZSignalPayload>;

/** The answer of a call that was taken: the signal's id, its order follows. */
export const ZSignalReceived = z.object({ signal_id: z.string() });
export type TSignalReceived = z.infer<typeof ZSignalReceived>;

/**
 * What became of a signal: `pending` while its order is placed, `accepted` once the order was
 * (a retried alert's signal names the one order), `refused` by a gate, the broker or the hook's
 * passphrase, `invalid` when its body did not parse, failed validation or was stale.
 */
export const ZSignalOutcome = z.enum(['pending', 'accepted', 'refused', 'invalid']);
export type TSignalOutcome = z.infer<typeof ZSignalOutcome>;

export const ZWebhookSignal = z.object({
  id: z.string(),
  webhook_id: z.string(),
  webhook_name: z.string(),
  asset_class: ZAssetClass,
  mode: ZTradingMode,
  received_at: ZTimestamp,
  outcome: ZSignalOutcome,
  symbol: z.string().nullable(),
  side: ZOrderSide.nullable(),
  order_type: z.string().nullable(),
  /** The quantity ordered: the signal's `qty`, or what its `qty_pct` came to. */
  qty: z.number().nullable(),
  qty_pct: z.number().nullable(),
  alert_id: z.string().nullable(),
  /** The order's id (its client order id) when one was made. */
  order_id: z.string().nullable(),
  broker_order_id: z.string().nullable(),
  error_code: z.string().nullable(),
  error_message: z.string().nullable(),
  /** When its outcome was decided; null while pending. */
  decided_at: ZTimestamp.nullable(),
});
export type TWebhookSignal = z.infer<typeof ZWebhookSignal>;

export const ZSignalListQuery = ZPageQuery.extend({
  webhook_id: requestText().min(1).max(64).optional(),
  outcome: ZSignalOutcome.optional(),
});
export type TSignalListQuery = z.infer<typeof ZSignalListQuery>;

export const ZWebhookSignalList = pageOf(ZWebhookSignal);
export type TWebhookSignalList = z.infer<typeof ZWebhookSignalList>;
