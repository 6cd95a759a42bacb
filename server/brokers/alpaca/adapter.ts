// One Alpaca account (one key) seen through the Broker interface: REST calls through the key's
// client and limiter, events from its trade_updates stream with duplicates dropped, and trade
// prices from the market data stream.
import { randomBytes } from 'node:crypto';
import { ALL_ORDER_CLASSES, TRAILING_ORDER_TYPES, BrokerRejectedError, type Broker, type BrokerOrder, type TBrokerEvent } from '../types.ts';
import { AlpacaRefusedError, createAlpacaHttp, type AlpacaRequest } from './http.ts';
import { sharedLimiters, type RequestLimiter } from './limiter.ts';
import { eventFromTradeUpdate, flattenAlpacaOrder, fromAlpacaAccount, fromAlpacaOrder, fromAlpacaPosition, isWorking, toAlpacaOrderRequest, toAlpacaReplaceRequest, ALPACA_BROKER_NAME, type AlpacaAccountKey } from './mapping.ts';
import type { KeepAliveOptions, StreamBackoff, StreamRetry } from './keep-alive.ts';
import { streamQuotes } from './quotes.ts';
import { streamTradeUpdates } from './stream.ts';
import type { AlpacaAccount, AlpacaBarsPage, AlpacaLatestTrade, AlpacaOrder, AlpacaPosition } from './wire.ts';
import type { Clock } from '../../clock.ts';
import type { TBar } from '../../marketdata/bars.ts';
import type { Logger } from '../../observability/logger.ts';

export const ALPACA_PAPER_URL = 'https://paper-api.alpaca.markets';
export const ALPACA_LIVE_URL = 'https://api.alpaca.markets';
export const ALPACA_DATA_URL = 'https://data.alpaca.markets';

export interface AlpacaBrokerOptions extends AlpacaAccountKey {
  keyId: string;
  secretKey: string;
  /** The trading origin; the documented paper (or live) origin when left out. */
  baseUrl?: string;
  /** The market data origin (quotes). */
  dataUrl?: string;
  /** The trade_updates URL; the trading origin's `/stream` (ws or wss) when left out. */
  streamUrl?: string;
  /**
   * The market data stream's URL (`quotes`): `…/v2/iex` or `…/v2/sip`; when left out, the IEX feed
   * on the data origin's stream host (`wss://stream.data.alpaca.markets/v2/iex` for Alpaca's).
   */
  dataStreamUrl?: string;
  /** Per REST call. Default 10 s. */
  timeoutMs?: number;
  /** The key's limiter: pass the service's shared one; by default the process-wide one for this key id. */
  limiter?: RequestLimiter;
  /** 429 retries before a call is unavailable (default 2), and the longest Retry-After waited (default 10 s). */
  maxRateLimitRetries?: number;
  maxRetryAfterSeconds?: number;
  /** The streams' watchdog (default 30 s) and reconnect backoff (default 0.5 s doubling to 30 s); onRetry and the test hooks below serve both streams. */
  silenceSeconds?: number;
  backoff?: StreamBackoff;
  /** Each time the trade_updates stream listens, the first time included (where the service reconciles orders); the quote stream has none. */
  onListening?: () => void | Promise<void>;
  onRetry?: (retry: StreamRetry) => void;
  /** The streams' watchdog clock (timers by default), and a word of each pong: for tests, see KeepAliveOptions. */
  watchdogClock?: Clock;
  onPong?: () => void;
  random?: () => number;
  logger?: Pick<Logger, 'warn'>;
  now?: () => Date;
}

/** Daily bars a page (Alpaca serves up to 10,000), and at most this many pages. */
const BARS_PER_PAGE = 1_000;
const MAX_BAR_PAGES = 20;

/** How many execution ids are remembered for dropping duplicates: far more than can arrive twice. */
const SEEN_EXECUTIONS = 10_000;

/** The WebSocket URL of a path on an http(s) origin: wss for https, ws for http. */
const webSocketUrlOf = (path: string, origin: string) => {
  const url = new URL(path, origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url;
};

/**
 * The IEX feed of the data origin's stream: Alpaca serves it on `stream.` + its data host
 * (`data.alpaca.markets`, `data.sandbox.alpaca.markets`); any other origin (the fake, a proxy)
 * serves it itself.
 */
export const dataStreamUrlOf = (dataUrl: string) => {
  const url = webSocketUrlOf('/v2/iex', dataUrl);
  if (url.hostname.startsWith('data.') && url.hostname.endsWith('.alpaca.markets')) url.hostname = `stream.${url.hostname}`;
  return url.toString();
};

/** What both streams are watched and retried with (onListening is the events' alone: it reconciles orders). */
const keepAliveOf = (options: AlpacaBrokerOptions, url: string): KeepAliveOptions => ({
  url,
  silenceSeconds: options.silenceSeconds ?? 30,
  backoff: options.backoff ?? { initialMs: 500, maxMs: 30_000 },
  ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  ...(options.watchdogClock ? { watchdogClock: options.watchdogClock } : {}),
  ...(options.onPong ? { onPong: options.onPong } : {}),
  ...(options.random ? { random: options.random } : {}),
  ...(options.logger ? { logger: options.logger } : {}),
});

export const createAlpacaBroker = (options: AlpacaBrokerOptions): Broker => {
  const key: AlpacaAccountKey = { userId: options.userId, mode: options.mode };
  const baseUrl = options.baseUrl ?? (options.mode === 'live' ? ALPACA_LIVE_URL : ALPACA_PAPER_URL);
  const dataUrl = options.dataUrl ?? ALPACA_DATA_URL;
  const now = options.now ?? (() => new Date());
  const http = createAlpacaHttp({
    keyId: options.keyId,
    secretKey: options.secretKey,
    limiter: options.limiter ?? sharedLimiters.forKey(options.keyId),
    timeoutMs: options.timeoutMs ?? 10_000,
    maxRateLimitRetries: options.maxRateLimitRetries ?? 2,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 10,
  });

  const call = <T>(method: AlpacaRequest['method'], path: string, { body, query, origin = baseUrl }: { body?: unknown; query?: Record<string, string>; origin?: string } = {}) => {
    const url = new URL(path, origin);
    for (const [name, value] of Object.entries(query ?? {})) url.searchParams.set(name, value);
    return http.request<T>({ method, url, body });
  };

  /** Undefined where Alpaca answers 404 (an unknown order); every other failure throws. */
  const unlessNotFound = async <T>(request: Promise<T>): Promise<T | undefined> => {
    try {
      return await request;
    } catch (error) {
      if (error instanceof AlpacaRefusedError && error.status === 404) return undefined;
      throw error;
    }
  };

  const orderById = (brokerOrderId: string) => call<AlpacaOrder>('GET', `/v2/orders/${encodeURIComponent(brokerOrderId)}`);

  const listOpenOrders = async (): Promise<BrokerOrder[]> => {
    // nested: a bracket's legs come under their entry, which is how a leg learns its parent.
    const orders = await call<AlpacaOrder[]>('GET', '/v2/orders', { query: { status: 'open', nested: 'true', limit: '500' } });
    return orders.flatMap((order) => flattenAlpacaOrder(order, key)).filter((order) => isWorking(order.status));
  };
  const positions = async () => (await call<AlpacaPosition[]>('GET', '/v2/positions')).map(fromAlpacaPosition);
  const account = async () => fromAlpacaAccount(await call<AlpacaAccount>('GET', '/v2/account'), key.mode, now());

  return {
    name: ALPACA_BROKER_NAME,
    assetClass: 'us_equity',
    mode: key.mode,
    // Alpaca's own trailing stop, stop-limit (a stop with its limit kept), bracket, oto and oco;
    // not a trailing stop inside a bracket (DESIGN, advanced orders).
    nativeOrderTypes: TRAILING_ORDER_TYPES,
    nativeOrderClasses: ALL_ORDER_CLASSES,
    nativeTrailingLegs: false,
    // Alpaca's books cannot join our transaction: the order service commits the intent before this call (its remote submission).
    placeOrder: async (request) => {
      if (!TRAILING_ORDER_TYPES.has(request.orderType)) throw new BrokerRejectedError(`Alpaca ${request.orderType} orders are not supported by this adapter yet`);
      const order = await call<AlpacaOrder>('POST', '/v2/orders', { body: toAlpacaOrderRequest(request) });
      return fromAlpacaOrder(order, key, null, request.metadata);
    },
    cancelOrder: async ({ brokerOrderId }) => {
      await call<undefined>('DELETE', `/v2/orders/${encodeURIComponent(brokerOrderId)}`);
      // Alpaca answers a cancel with no body: the order as it stands now is read back.
      return fromAlpacaOrder(await orderById(brokerOrderId), key);
    },
    replaceOrder: async (request) => {
      const order = await call<AlpacaOrder>('PATCH', `/v2/orders/${encodeURIComponent(request.brokerOrderId)}`, { body: toAlpacaReplaceRequest(request, randomBytes(4).toString('hex')) });
      return fromAlpacaOrder(order, key);
    },
    getOrder: async (lookup) => {
      const order = await unlessNotFound(
        'brokerOrderId' in lookup ? orderById(lookup.brokerOrderId) : call<AlpacaOrder>('GET', '/v2/orders:by_client_order_id', { query: { client_order_id: lookup.clientOrderId } }),
      );
      return order && fromAlpacaOrder(order, key);
    },
    listOpenOrders,
    positions,
    account,
    // Alpaca has no combined read: three calls at once.
    snapshot: async () => {
      const [accountNow, positionsNow, openOrders] = await Promise.all([account(), positions(), listOpenOrders()]);
      return { account: accountNow, positions: positionsNow, openOrders };
    },
    dailyBars: async (symbol, from, to) => {
      const bars: TBar[] = [];
      let pageToken: string | null = null;
      for (let page = 0; page < MAX_BAR_PAGES; page += 1) {
        const query: Record<string, string> = { timeframe: '1Day', start: from, end: to, limit: String(BARS_PER_PAGE), adjustment: 'raw', feed: 'iex' };
        if (pageToken) query.page_token = pageToken;
        const answer: AlpacaBarsPage = await call<AlpacaBarsPage>('GET', `/v2/stocks/${encodeURIComponent(symbol)}/bars`, { origin: dataUrl, query });
        for (const bar of answer.bars ?? []) {
          // A daily bar starts at midnight in New York (04:00 or 05:00 UTC): its UTC date is New York's.
          const date = bar.t.slice(0, 10);
          // JSON numbers: their shortest decimal forms are the text they were sent as.
          if (date >= from && date <= to) bars.push({ date, open: String(bar.o), high: String(bar.h), low: String(bar.l), close: String(bar.c), volume: String(bar.v) });
        }
        pageToken = answer.next_page_token;
        if (!pageToken) break;
      }
      return bars.sort((a, b) => a.date.localeCompare(b.date));
    },
    quote: async (symbol) => {
      const latest = await call<AlpacaLatestTrade>('GET', `/v2/stocks/${encodeURIComponent(symbol)}/trades/latest`, { origin: dataUrl });
      // The data API sends the price as a JSON number; its shortest decimal form is the text it was sent as.
      return String(latest.trade.p);
    },
    events: (signal) => eventsOf(options, key, signal),
    quotes: (symbols, signal) => streamQuotes({ ...keepAliveOf(options, options.dataStreamUrl ?? dataStreamUrlOf(dataUrl)), keyId: options.keyId, secretKey: options.secretKey }, symbols, signal),
  };
};

/** The stream's updates as our events, each execution once however often Alpaca repeats it. */
async function* eventsOf(options: AlpacaBrokerOptions, key: AlpacaAccountKey, signal: AbortSignal): AsyncGenerator<TBrokerEvent> {
  const seen = new Set<string>();
  const url = options.streamUrl ?? webSocketUrlOf('/stream', options.baseUrl ?? (options.mode === 'live' ? ALPACA_LIVE_URL : ALPACA_PAPER_URL)).toString();
  const updates = streamTradeUpdates(
    { ...keepAliveOf(options, url), ...(options.onListening ? { onListening: options.onListening } : {}), keyId: options.keyId, secretKey: options.secretKey },
    signal,
  );
  for await (const update of updates) {
    if (update.execution_id) {
      if (seen.has(update.execution_id)) continue;
      seen.add(update.execution_id);
      // A Set iterates in insertion order: the first is the oldest.
      if (seen.size > SEEN_EXECUTIONS) seen.delete(seen.values().next().value!);
    }
    const event = eventFromTradeUpdate(update, key);
    if (event) yield event;
  }
}

