// Alpaca Trading API v2 as it is spoken on the wire: the request and response bodies this adapter
// and the fake exchange. Numbers are decimal strings there, except the market data's JSON numbers.

/** Every order status Alpaca documents. */
export const ALPACA_ORDER_STATUSES = [
  'new',
  'accepted',
  'pending_new',
  'accepted_for_bidding',
  'partially_filled',
  'filled',
  'done_for_day',
  'canceled',
  'expired',
  'replaced',
  'pending_cancel',
  'pending_replace',
  'stopped',
  'rejected',
  'suspended',
  'calculated',
  'held',
] as const;
export type TAlpacaOrderStatus = (typeof ALPACA_ORDER_STATUSES)[number];

export type TAlpacaOrderType = 'market' | 'limit' | 'stop' | 'stop_limit' | 'trailing_stop';
export type TAlpacaTimeInForce = 'day' | 'gtc' | 'opg' | 'cls' | 'ioc' | 'fok';
export type TAlpacaOrderClass = '' | 'simple' | 'bracket' | 'oco' | 'oto';

/** `POST /v2/orders`. */
export interface AlpacaOrderRequest {
  symbol: string;
  qty: string;
  side: 'buy' | 'sell';
  type: TAlpacaOrderType;
  time_in_force: TAlpacaTimeInForce;
  limit_price?: string;
  stop_price?: string;
  /** A trailing_stop's trail: exactly one of them, as a price distance or a percent of its mark. */
  trail_price?: string;
  trail_percent?: string;
  client_order_id: string;
  /**
   * `bracket`: the entry with both legs; `oto`: the entry with one of them; `oco`: no entry, a
   * `limit` order whose take_profit and stop_loss work at once (one filling cancels the other).
   */
  order_class?: TAlpacaOrderClass;
  take_profit?: { limit_price: string };
  stop_loss?: { stop_price: string; limit_price?: string };
}

/** `PATCH /v2/orders/{id}`: the fields a replace may change. */
export interface AlpacaReplaceRequest {
  qty?: string;
  limit_price?: string;
  stop_price?: string;
  /** A trailing_stop's new trail_price or trail_percent (whichever it has). */
  trail?: string;
  /** The successor's own client order id (Alpaca makes one up when it is left out). */
  client_order_id?: string;
}

export interface AlpacaOrder {
  id: string;
  client_order_id: string;
  created_at: string;
  updated_at: string | null;
  submitted_at: string | null;
  filled_at: string | null;
  canceled_at: string | null;
  expired_at: string | null;
  failed_at: string | null;
  replaced_at: string | null;
  replaced_by: string | null;
  replaces: string | null;
  asset_id: string;
  symbol: string;
  asset_class: string;
  qty: string | null;
  notional: string | null;
  filled_qty: string;
  filled_avg_price: string | null;
  order_class: TAlpacaOrderClass;
  /** Deprecated twin of `type`, still sent. */
  order_type: TAlpacaOrderType;
  type: TAlpacaOrderType;
  side: 'buy' | 'sell';
  time_in_force: TAlpacaTimeInForce;
  limit_price: string | null;
  /** A trailing_stop's current stop. */
  stop_price: string | null;
  /** A trailing_stop's trail (one of the two) and its high-water mark (a buy's low-water mark). */
  trail_percent: string | null;
  trail_price: string | null;
  hwm: string | null;
  status: TAlpacaOrderStatus;
  extended_hours: boolean;
  /** The children of a bracket (take profit, stop loss), when asked for `nested`. */
  legs: AlpacaOrder[] | null;
}

export interface AlpacaPosition {
  asset_id: string;
  symbol: string;
  exchange: string;
  asset_class: string;
  avg_entry_price: string;
  /** Negative for a short. */
  qty: string;
  qty_available: string;
  side: 'long' | 'short';
  market_value: string;
  cost_basis: string;
  unrealized_pl: string;
  current_price: string;
  lastday_price: string;
  change_today: string;
}

export interface AlpacaAccount {
  id: string;
  account_number: string;
  status: string;
  currency: string;
  cash: string;
  equity: string;
  portfolio_value: string;
  buying_power: string;
  created_at: string;
}

/** `GET /v2/stocks/{symbol}/trades/latest` on the data host; `p` is a JSON number there. */
export interface AlpacaLatestTrade {
  symbol: string;
  trade: { t: string; x: string; p: number; s: number; c: string[]; i: number; z: string };
}

/** One page of `GET /v2/stocks/{symbol}/bars` on the data host. */
export interface AlpacaBarsPage {
  symbol: string;
  /** `t` is the bar's start: midnight in New York as an RFC 3339 instant; prices and volume are JSON numbers. */
  bars: { t: string; o: number; h: number; l: number; c: number; v: number; n?: number; vw?: number }[] | null;
  next_page_token: string | null;
}

/** The body of every Alpaca error answer. */
export interface AlpacaErrorBody {
  code: number;
  message: string;
}

export const ALPACA_TRADE_EVENTS = [
  'new',
  'accepted',
  'pending_new',
  'fill',
  'partial_fill',
  'canceled',
  'expired',
  'done_for_day',
  'replaced',
  'rejected',
  'pending_cancel',
  'pending_replace',
  'stopped',
  'suspended',
  'calculated',
  'order_replace_rejected',
  'order_cancel_rejected',
] as const;
export type TAlpacaTradeEvent = (typeof ALPACA_TRADE_EVENTS)[number];

/** The `data` of a `trade_updates` message. price and qty are the execution's, on fills. */
export interface AlpacaTradeUpdate {
  event: TAlpacaTradeEvent;
  execution_id?: string;
  order: AlpacaOrder;
  timestamp?: string;
  price?: string;
  qty?: string;
  position_qty?: string;
}

/** What the stream sends: authorization and listening acknowledgements, then trade updates. */
export type AlpacaStreamMessage =
  | { stream: 'authorization'; data: { action: string; status: 'authorized' | 'unauthorized'; message?: string } }
  | { stream: 'listening'; data: { streams: string[]; error?: string } }
  | { stream: 'trade_updates'; data: AlpacaTradeUpdate };

/**
 * One trade on the market data stream (`wss://stream.data.alpaca.markets/v2/iex`): symbol `S`,
 * trade id `i`, exchange `x`, price `p` and size `s` as JSON numbers, conditions `c`, tape `z`,
 * and `t` an RFC 3339 instant with up to nanoseconds.
 */
export interface AlpacaDataTrade {
  T: 't';
  S: string;
  i: number;
  x: string;
  p: number;
  s: number;
  c?: string[];
  z: string;
  t: string;
}

/** The symbols a data stream connection is subscribed to, per channel, after each (un)subscribe. */
export interface AlpacaDataSubscription {
  T: 'subscription';
  trades: string[];
  quotes: string[];
  bars: string[];
  updatedBars?: string[];
  dailyBars?: string[];
  statuses?: string[];
  lulds?: string[];
  /** Alpaca subscribes a symbol's trade corrections and cancels with its trades. */
  corrections?: string[];
  cancelErrors?: string[];
}

/**
 * What the market data stream sends, always as a JSON array of these, several a frame at times:
 * `success` (`connected` on arrival, `authenticated` after auth), `error` (Alpaca's codes: 400
 * invalid syntax, 401 not authenticated, 402 auth failed, 403 already authenticated, 404 auth
 * timeout, 405 symbol limit exceeded, 406 connection limit exceeded, 407 slow client, 409
 * insufficient subscription, 410 invalid subscribe action for this feed, 500 internal error),
 * `subscription`, and the data: trades `t` (the only data this adapter subscribes to); quotes
 * `q`, bars `b`, trade corrections `c`, cancel errors `x` and the rest on other channels.
 */
export type AlpacaDataMessage = { T: 'success'; msg: string } | { T: 'error'; code: number; msg: string } | AlpacaDataSubscription | AlpacaDataTrade;
