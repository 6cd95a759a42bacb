// One crypto exchange account (API key + secret) seen through the Broker interface, over a ccxt
// exchange instance: orders through createOrder (an oco as the exchange's own order list where
// it has one: oco-orders.ts), reads through fetchOrder, fetchOpenOrders and fetchBalance, prices
// through fetchTicker, events from ccxt's watchOrders where the exchange has
// it (stream.ts, pro.ts), else by polling (poller.ts), trade prices (`quotes`) from its
// watchTradesForSymbols or watchTrades where it has one (quotes.ts). ccxt is loaded on the
// first call (it is large; a service without crypto keys never pays for it). Every call draws
// from the key's limiter, then ccxt's own rate limit; a 429 is retried after Retry-After a
// bounded number of times; failures become BrokerRejectedError or BrokerUnavailableError with the
// secret kept out.
import type { Exchange, Market, Order, Trade } from 'ccxt';
import type { Clock } from '../../clock.ts';
import type { TBar } from '../../marketdata/bars.ts';
import type { Logger } from '../../observability/logger.ts';
import type { RequestLimiter } from '../alpaca/limiter.ts';
import type { ReconnectBackoff as StreamBackoff } from '../stream-keepalive.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BASIC_ORDER_TYPES, BrokerRejectedError, BrokerUnavailableError, type Broker, type BrokerAccount, type BrokerOrder, type BrokerPosition, type BrokerQuote, type TTradingMode } from '../types.ts';
import { brokerErrorOf, ccxtBrokerOrderId, decimalText, fromCcxtOrder, marketsOf, nativeStopsOfMarket, orderListIdOf, parseCcxtBrokerOrderId, toCcxtOrder, unifiedSymbol, type CcxtAccountKey, type CcxtErrorClasses, type CcxtMarketView } from './mapping.ts';
import type { HostPacing } from './host-pacing.ts';
import { clientOrderIdRuleOf, createMemoryClientIdStore, isDigestClientOrderId, toExchangeClientOrderId, type CcxtClientIdStore } from './client-ids.ts';
import { isCcxtExchangeId, loadCcxt, loadedCcxt, type CcxtModule } from './load.ts';
import { createPlacedOrders, pollCcxtEvents, type CcxtPlacedOrders, type PolledTrade } from './poller.ts';
import { openCcxtProExchange, proHas, wsOriginOf } from './pro.ts';
import { streamCcxtQuotes } from './quotes.ts';
import { streamCcxtOrders } from './stream.ts';
import { ccxtNativeOrderClassesOf } from './oco.ts';
import { createCcxtOcoOrders, withOcoParents } from './oco-orders.ts';

/** Daily bars asked for a page at a time (Binance serves up to 1,000), and at most this many pages (about 27 years). */
const BARS_PER_PAGE = 500;
const MAX_BAR_PAGES = 20;

/** The quote currency accounts are valued in. */
export const CCXT_QUOTE = 'USDT';

export interface CcxtBrokerOptions {
  userId: number;
  mode: TTradingMode;
  /** A ccxt exchange id (binance, kraken, ...). */
  exchangeId: string;
  apiKey: string;
  secret: string;
  /** An origin that replaces the origin of every API URL of the exchange (the fake, a proxy). */
  baseUrl?: string;
  /** Per REST call. Default 10 s. */
  timeoutMs?: number;
  /** The key's limiter (shared by every adapter of the key in this process). */
  limiter: RequestLimiter;
  /** ccxt's pacing by request weight, shared by every instance on the exchange's host (else this instance's own). */
  hostPacing?: HostPacing;
  /** 429 retries (default 3) and the longest Retry-After honoured (default 10 s). */
  maxRateLimitRetries?: number;
  maxRetryAfterSeconds?: number;
  /** Backoff when a 429 names no Retry-After: base doubling to max. Default 250 ms to 2 s. */
  rateLimitBackoff?: { baseMs: number; maxMs: number };
  /** How often events() reads the account. Default 2 s. */
  pollIntervalMs?: number;
  /** Readings between two sweeps of the whole account (default 15); see poller.ts. */
  pollSweepEvery?: number;
  /** How far back events() looks for trades on its first reading. Default 1 hour. */
  replayMs?: number;
  /** The account's watched symbols, shared by its request and events adapters. */
  watched?: Set<string>;
  /** Orders placed and not yet seen by the poller, shared by the account's request and events adapters (this adapter's own by default). */
  placed?: CcxtPlacedOrders;
  /** Our client order ids behind the digest forms the exchange was sent (client-ids.ts); this adapter's placements by default. */
  clientIds?: CcxtClientIdStore;
  onPoll?: () => void | Promise<void>;
  /** `auto` (default): events from watchOrders where ccxt's pro class of the exchange has it, else polling. `poll`: polling. */
  stream?: 'auto' | 'poll';
  /** The order and trade price streams' watchdog (default 30 s) and reconnect backoff (default 0.5 s doubling to 30 s). */
  silenceSeconds?: number;
  streamBackoff?: StreamBackoff;
  /** Called each time the order stream is subscribed, the first time included (where the service reconciles); polling never calls it. */
  onListening?: () => void | Promise<void>;
  /** The streams' watchdog clock: timers by default; a test moves its own (see CcxtKeptStreamSettings). */
  watchdogClock?: Clock;
  logger?: Pick<Logger, 'warn'>;
}

/** What the ccxt adapter offers beyond the Broker interface. */
export interface CcxtBroker extends Broker {
  /** Daily bars (UTC days) from `from` to `to` (YYYY-MM-DD, both included), oldest first, prices and volume as decimal strings. */
  dailyBars(symbol: string, from: string, to: string): Promise<TBar[]>;
}

/** ccxt's TICK_SIZE precision mode (base/functions/number: DECIMAL_PLACES 2, SIGNIFICANT_DIGITS 3, TICK_SIZE 4). */
const CCXT_TICK_SIZE = 4;


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A ccxt exchange's API URLs with their origin replaced, paths kept (`https://api.binance.com/api/v3` → `<origin>/api/v3`). */
const withOrigin = (urls: unknown, origin: string): unknown => {
  if (typeof urls === 'string') {
    try {
      const url = new URL(urls);
      return `${origin}${url.pathname === '/' ? '' : url.pathname}`;
    } catch {
      return urls;
    }
  }
  if (urls && typeof urls === 'object') return Object.fromEntries(Object.entries(urls).map(([name, value]) => [name, withOrigin(value, origin)]));
  return urls;
};

export const createCcxtBroker = (options: CcxtBrokerOptions): CcxtBroker => {
  const key: CcxtAccountKey = { userId: options.userId, mode: options.mode, exchangeId: options.exchangeId };
  const watched = options.watched ?? new Set<string>();
  const idRule = clientOrderIdRuleOf(options.exchangeId);
  const clientIds = options.clientIds ?? createMemoryClientIdStore();
  const placed = options.placed ?? createPlacedOrders();
  const maxRetries = options.maxRateLimitRetries ?? 3;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 10;
  const backoff = options.rateLimitBackoff ?? { baseMs: 250, maxMs: 2_000 };
  const scrub = (text: string) => (options.secret ? text.split(options.secret).join('[redacted]') : text);

  let ready: Promise<{ exchange: Exchange; classes: CcxtErrorClasses; ccxt: CcxtModule }> | undefined;
  /** The exchange instance with its markets; a failed start is tried again by the next call. */
  const start = () =>
    (ready ??= (async () => {
      const ccxt = await loadCcxt();
      // ccxt's classes are reached by id at run time; its types name each class separately, not as an index.
      const Class = (ccxt as unknown as Record<string, (new (config: object) => Exchange) | undefined>)[options.exchangeId];
      if (!isCcxtExchangeId(ccxt, options.exchangeId) || !Class) throw new BrokerRejectedError(`ccxt has no exchange "${options.exchangeId}"`);
      const exchange = new Class({
        apiKey: options.apiKey,
        secret: options.secret,
        enableRateLimit: true,
        timeout: options.timeoutMs ?? 10_000,
        options: {
          // Spot only; no margin pairs and no wallet (sapi) currencies: they need more than a trading key.
          defaultType: 'spot',
          fetchMarkets: { types: ['spot'] },
          fetchMargins: false,
          fetchCurrencies: false,
          warnOnFetchOpenOrdersWithoutSymbol: false,
          fetchOpenOrders: { warnWithoutSymbol: false },
        },
      });
      if (options.mode === 'paper') {
        if (!exchange.urls.test) throw new BrokerRejectedError(`${options.exchangeId} has no sandbox in ccxt: a paper key cannot trade on it (use an exchange with a testnet, or a live key)`);
        exchange.setSandboxMode(true);
      }
      // Checked against the allow-list when the key was registered: the fake, or the documented origin.
      if (options.baseUrl) exchange.urls.api = withOrigin(exchange.urls.api, new URL(options.baseUrl).origin) as Exchange['urls']['api'];
      options.hostPacing?.share(options.exchangeId, exchange);
      const classes: CcxtErrorClasses = { BaseError: ccxt.BaseError, NetworkError: ccxt.NetworkError, ExchangeError: ccxt.ExchangeError, NotSupported: ccxt.NotSupported };
      try {
        await call('load the markets', async () => (options.hostPacing ? options.hostPacing.loadMarkets(options.exchangeId, exchange) : exchange.loadMarkets()), { exchange, classes });
      } catch (error) {
        ready = undefined;
        throw error;
      }
      return { exchange, classes, ccxt };
    })().catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));

  /** One exchange call: the key's limiter, ccxt's rate limit, bounded 429 retries, broker errors. */
  const call = async <T>(what: string, run: () => Promise<T>, parts: { exchange: Exchange; classes: CcxtErrorClasses; ccxt?: CcxtModule }): Promise<T> => {
    for (let retries = 0; ; retries += 1) {
      await options.limiter.take();
      try {
        return await run();
      } catch (error) {
        const rateLimited = error instanceof Error && (error.name === 'DDoSProtection' || error.name === 'RateLimitExceeded');
        if (rateLimited) {
          const headers = (parts.exchange.last_response_headers ?? {}) as Record<string, string | undefined>;
          const retryAfter = Number(headers['retry-after'] ?? headers['Retry-After'] ?? Number.NaN);
          const waitMs = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1_000 : Math.min(backoff.maxMs, backoff.baseMs * 2 ** retries);
          // Every caller of the key, on every instance, holds off as long (the budget is shared).
          options.limiter.pause(waitMs);
          if (retries >= maxRetries) throw new BrokerUnavailableError(scrub(`the exchange kept rate-limiting us while trying to ${what}`), { notTaken: true });
          if (Number.isFinite(retryAfter) && retryAfter > maxRetryAfter) throw new BrokerUnavailableError(`the exchange rate-limited us for ${retryAfter} s while trying to ${what}`, { notTaken: true });
          await sleep(waitMs);
          continue;
        }
        throw brokerErrorOf(error, parts.classes, scrub, what);
      }
    }
  };

  const use = async <T>(what: string, run: (exchange: Exchange) => Promise<T>): Promise<T> => {
    const parts = await start();
    return call(what, () => run(parts.exchange), parts);
  };

  const marketView = (market: NonNullable<Market>): CcxtMarketView => ({
    id: market.id ?? '',
    symbol: market.symbol ?? '',
    base: market.base ?? '',
    quote: market.quote ?? '',
    precision: { amount: market.precision?.amount, price: market.precision?.price },
  });
  const marketViewOf = (exchange: Exchange, symbol: string) => {
    const market = marketsOf(exchange)[symbol];
    return market ? marketView(market) : undefined;
  };
  const marketOf = async (symbol: string): Promise<CcxtMarketView> => {
    const { exchange } = await start();
    const market = marketsOf(exchange)[unifiedSymbol(symbol)];
    if (!market || market.spot !== true) throw new BrokerRejectedError(`${options.exchangeId} lists no spot market ${symbol}`);
    return marketView(market);
  };
  const marketById = async (marketId: string): Promise<CcxtMarketView | undefined> => {
    const { exchange } = await start();
    const market = Object.values(marketsOf(exchange)).find((candidate) => candidate?.id === marketId);
    return market === undefined ? undefined : marketView(market);
  };
  const tickSizeMode = async () => {
    const { exchange } = await start();
    return exchange.precisionMode === CCXT_TICK_SIZE;
  };

  /**
   * An exchange order as ours, with `ours` false when its client id is a digest form whose id of
   * ours is not known (yet): it then carries the exchange's id. `known` is our id when the caller
   * has it (a placement, a lookup by our id).
   */
  const readBack = async (order: Order, market: CcxtMarketView, known?: string): Promise<{ order: BrokerOrder; ours: boolean }> => {
    const sent = order.clientOrderId ?? '';
    let clientOrderId: string | undefined;
    if (known !== undefined && (sent === '' || toExchangeClientOrderId(known, idRule) === sent)) clientOrderId = known;
    else if (!isDigestClientOrderId(sent, idRule)) clientOrderId = sent;
    else clientOrderId = await clientIds.find(sent, ccxtBrokerOrderId(market.id, order.id ?? ''));
    return { order: fromCcxtOrder(order, market, key, clientOrderId ?? sent), ours: clientOrderId !== undefined };
  };
  const toOrder = async (order: Order, market: CcxtMarketView, known?: string) => (await readBack(order, market, known)).order;
  const { placeOco, ocoParentOf } = createCcxtOcoOrders({ use, start, marketOf, tickSizeMode, toOrder, idRule, clientIds, watched, placed });

  const readByBrokerOrderId = async (brokerOrderId: string): Promise<{ order: BrokerOrder; ours: boolean } | undefined> => {
    const id = parseCcxtBrokerOrderId(brokerOrderId);
    const market = id && (await marketById(id.marketId));
    if (!id || !market) return undefined;
    try {
      const exchangeOrder = await use('read the order', (exchange) => exchange.fetchOrder(id.orderId, market.symbol));
      const read = await readBack(exchangeOrder, market);
      return read.ours ? { ...read, order: { ...read.order, parentId: await ocoParentOf(exchangeOrder, read.order, market) } } : read;
    } catch (error) {
      if (error instanceof BrokerRejectedError && /OrderNotFound|does not exist|-2013/.test(error.message)) return undefined;
      throw error;
    }
  };
  const getByBrokerOrderId = async (brokerOrderId: string): Promise<BrokerOrder | undefined> => (await readByBrokerOrderId(brokerOrderId))?.order;

  /** The open orders of one symbol, or of every symbol (a much heavier read). */
  const listOpenOrders = async (symbol?: string): Promise<BrokerOrder[]> => {
    const orders = await use(symbol ? `list the open orders of ${symbol}` : 'list the open orders', (exchange) => exchange.fetchOpenOrders(symbol));
    const read: { order: BrokerOrder; list: string | undefined }[] = [];
    for (const order of orders) {
      const market = await marketOf(order.symbol ?? '');
      read.push({ order: await toOrder(order, market), list: orderListIdOf(order) });
    }
    return withOcoParents(read);
  };

  /** Holdings (non-zero totals), free quote cash and each holding's last price. */
  const holdings = async () => {
    const balance = await use('read the balance', (exchange) => exchange.fetchBalance());
    const totals = (balance.total ?? {}) as unknown as Record<string, number | undefined>;
    const free = (balance.free ?? {}) as unknown as Record<string, number | undefined>;
    const { exchange } = await start();
    const held: { symbol: string; qty: string; price: string }[] = [];
    for (const [asset, total] of Object.entries(totals)) {
      const qty = decimalText(total);
      if (asset === CCXT_QUOTE || new ExactDecimal(qty).isZero()) continue;
      const symbol = `${asset}/${CCXT_QUOTE}`;
      // A coin without a USDT market cannot be valued here; it is left out of positions and equity.
      if (!marketsOf(exchange)[symbol]) continue;
      held.push({ symbol, qty, price: await quote(symbol) });
    }
    return { held, cash: decimalText(free[CCXT_QUOTE]), quoteTotal: decimalText(totals[CCXT_QUOTE]) };
  };

  const positionsOf = (held: { symbol: string; qty: string; price: string }[]): BrokerPosition[] =>
    // The exchange keeps no entry price: the service's own fills carry it; the last price stands in here.
    held.map(({ symbol, qty, price }) => ({ symbol, qty, avgEntryPrice: price, currentPrice: price, realizedPnl: '0', currency: CCXT_QUOTE }));

  const accountOf = ({ held, cash, quoteTotal }: Awaited<ReturnType<typeof holdings>>): BrokerAccount => {
    const equity = held.reduce((sum, position) => sum.plus(new ExactDecimal(position.qty).times(position.price)), new ExactDecimal(quoteTotal));
    return { broker: options.exchangeId, paper: options.mode === 'paper', currency: CCXT_QUOTE, cash, equity: equity.toFixed(), buyingPower: cash, asOf: new Date() };
  };

  const quote = async (symbol: string): Promise<string> => {
    const market = await marketOf(symbol);
    const ticker = await use(`read the price of ${market.symbol}`, (exchange) => exchange.fetchTicker(market.symbol));
    const last = ticker.last ?? ticker.close;
    if (!last) throw new BrokerRejectedError(`${options.exchangeId} has no price for ${market.symbol}`);
    return decimalText(last);
  };

  const tradeOf = (trade: Trade, symbol: string): PolledTrade => ({
    id: String(trade.id ?? ''),
    orderId: String(trade.order ?? ''),
    symbol,
    qty: decimalText(trade.amount),
    price: decimalText(trade.price),
    // The fee in the quote currency; a fee in another coin is not the service's to convert here.
    fee: trade.fee?.currency === CCXT_QUOTE ? decimalText(trade.fee.cost) : '0',
    at: trade.timestamp ?? Date.now(),
  });

  const tradesSince = async (symbol: string, since: number) =>
    (await use(`read the trades of ${symbol}`, (exchange) => exchange.fetchMyTrades(symbol, since))).map((trade) => tradeOf(trade, symbol));

  const polling: CcxtBroker = {
    name: options.exchangeId,
    assetClass: 'crypto',
    mode: options.mode,
    nativeOrderTypes: BASIC_ORDER_TYPES,
    nativeOrderClasses: ccxtNativeOrderClassesOf(options.exchangeId),
    nativeTrailingLegs: false,
    sellsOnlyHeld: true,
    nativeStopsOf: async (symbol) => {
      const { exchange } = await start();
      const market = marketsOf(exchange)[unifiedSymbol(symbol)];
      if (!market || market.spot !== true) throw new BrokerRejectedError(`${options.exchangeId} lists no spot market ${symbol}`);
      return nativeStopsOfMarket(market.info, exchange.has);
    },
    placeOrder: async (request) => {
      // Emulated for a real broker (DESIGN: advanced orders), never sent to it.
      if (request.orderType === 'trailing_stop') throw new BrokerRejectedError('crypto exchange trailing_stop orders are not supported by this adapter');
      if (request.orderClass === 'oco' && polling.nativeOrderClasses.has('oco')) return placeOco(request);
      const market = await marketOf(request.symbol);
      const exchangeClientOrderId = toExchangeClientOrderId(request.clientOrderId, idRule);
      const args = toCcxtOrder(request, market, await tickSizeMode(), exchangeClientOrderId);
      watched.add(market.symbol);
      // Before the call: the poller may read the order's trades before the placement returns.
      if (exchangeClientOrderId !== request.clientOrderId) clientIds.put(exchangeClientOrderId, request.clientOrderId);
      const answer = await use('place the order', (exchange) =>
        exchange.createOrder(args.symbol, args.type, args.side, Number(args.amount), args.price === undefined ? undefined : Number(args.price), args.params),
      );
      const order = await toOrder(answer, market, request.clientOrderId);
      placed.add(order);
      // The order is reported as accepted: its fills come through events(), as every adapter's do.
      return { ...order, clientOrderId: request.clientOrderId, status: 'accepted', filledQty: '0', avgFillPrice: null, orderType: request.orderType, timeInForce: request.timeInForce, metadata: { ...request.metadata, ...order.metadata } };
    },
    cancelOrder: async ({ brokerOrderId }) => {
      const id = parseCcxtBrokerOrderId(brokerOrderId);
      const market = id && (await marketById(id.marketId));
      if (!id || !market) throw new BrokerRejectedError(`${options.exchangeId} has no order ${brokerOrderId}`);
      await use('cancel the order', (exchange) => exchange.cancelOrder(id.orderId, market.symbol));
      return (await getByBrokerOrderId(brokerOrderId)) ?? Promise.reject(new BrokerRejectedError(`${options.exchangeId} has no order ${brokerOrderId}`));
    },
    replaceOrder: () => Promise.reject(new BrokerRejectedError('replacing a crypto exchange order is not supported by this adapter: cancel and place again')),
    getOrder: async (lookup) => {
      if ('brokerOrderId' in lookup) return getByBrokerOrderId(lookup.brokerOrderId);
      // ccxt finds a client order id only within a symbol: the watched ones (what this account traded).
      for (const symbol of [...watched]) {
        const market = await marketOf(symbol);
        try {
          const order = await use('read the order', (exchange) => exchange.fetchOrder('', market.symbol, { clientOrderId: toExchangeClientOrderId(lookup.clientOrderId, idRule) }));
          return await toOrder(order, market, lookup.clientOrderId);
        } catch (error) {
          if (!(error instanceof BrokerRejectedError)) throw error;
        }
      }
      return undefined;
    },
    listOpenOrders: () => listOpenOrders(),
    positions: async () => positionsOf((await holdings()).held),
    account: async () => accountOf(await holdings()),
    // With a focus, the open orders of that symbol only: on Binance a read of every symbol's weighs 80, one symbol's 6.
    snapshot: async (focus) => {
      const read = await holdings();
      return { account: accountOf(read), positions: positionsOf(read.held), openOrders: await listOpenOrders(focus?.symbol) };
    },
    quote,
    events: (signal) =>
      pollCcxtEvents(
        {
          key,
          intervalMs: options.pollIntervalMs ?? 2_000,
          ...(options.pollSweepEvery ? { sweepEvery: options.pollSweepEvery } : {}),
          watched,
          heldSymbols: async () => (await holdings()).held.map((position) => position.symbol),
          openOrders: listOpenOrders,
          trades: tradesSince,
          // An order whose id of ours is not known yet is left for a later reading (its events must carry our id).
          order: async (symbol, exchangeOrderId) => {
            const market = await marketOf(symbol);
            const read = await readByBrokerOrderId(ccxtBrokerOrderId(market.id, exchangeOrderId));
            return read?.ours ? read.order : undefined;
          },
          replayMs: options.replayMs ?? 3_600_000,
          placed,
          now: () => Date.now(),
          ...(options.onPoll ? { onPoll: options.onPoll } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        },
        signal,
      ),
    dailyBars: async (symbol, from, to) => {
      const market = await marketOf(symbol);
      const bars = new Map<string, TBar>();
      // Pages of at most 500 days from `from` on, each starting the day after the last one read.
      for (let since = Date.parse(`${from}T00:00:00Z`), page = 0; page < MAX_BAR_PAGES; page += 1) {
        const rows = await use(`read the daily bars of ${market.symbol}`, (exchange) => exchange.fetchOHLCV(market.symbol, '1d', since, BARS_PER_PAGE));
        for (const [time, open, high, low, close, volume] of rows) {
          const date = new Date(time ?? 0).toISOString().slice(0, 10);
          if (date >= from && date <= to) bars.set(date, { date, open: decimalText(open), high: decimalText(high), low: decimalText(low), close: decimalText(close), volume: decimalText(volume) });
        }
        const last = rows.at(-1)?.[0];
        if (rows.length < BARS_PER_PAGE || last === undefined || new Date(last).toISOString().slice(0, 10) >= to) break;
        since = last + 86_400_000;
      }
      return [...bars.values()].sort((a, b) => a.date.localeCompare(b.date));
    },
  };

  const silenceSeconds = options.silenceSeconds ?? 30;
  const streamBackoff = options.streamBackoff ?? { initialMs: 500, maxMs: 30_000 };
  /** What both streams are kept alive with. */
  const kept = {
    silenceSeconds,
    backoff: streamBackoff,
    ...(options.watchdogClock ? { watchdogClock: options.watchdogClock } : {}),
    scrub,
    ...(options.logger ? { logger: options.logger } : {}),
  };
  /** A fresh pro instance beside the REST one (its markets, key and origin), for one connection of a stream. */
  const openPro = async () => {
    const { exchange, ccxt } = await start();
    const wsOrigin = options.baseUrl ? wsOriginOf(options.baseUrl) : undefined;
    const pro = await openCcxtProExchange(ccxt, exchange, {
      exchangeId: options.exchangeId,
      sandbox: options.mode === 'paper',
      keepAliveMs: Math.max(10, Math.floor((silenceSeconds * 1_000) / 4)),
      ...(wsOrigin ? { rebaseWs: (urls: unknown) => withOrigin(urls, wsOrigin) } : {}),
    });
    return { exchange, pro };
  };
  const streaming = async function* (signal: AbortSignal) {
    // The choice needs ccxt only, not the exchange: a failing exchange is the stream's to retry.
    const useStream = options.stream !== 'poll' && proHas(await loadCcxt(), options.exchangeId, 'watchOrders');
    yield* useStream
      ? streamCcxtOrders(
          {
            ...kept,
            key,
            open: async () => {
              const { exchange, pro } = await openPro();
              return { exchange: pro, market: (symbol) => marketViewOf(exchange, symbol) };
            },
            tradeOf,
            trades: tradesSince,
            watch: (symbol) => void watched.add(symbol),
            // A long id of ours went to the exchange as its digest form: its updates carry ours again.
            ourClientOrderId: (order) => (isDigestClientOrderId(order.clientOrderId, idRule) ? clientIds.find(order.clientOrderId, order.brokerOrderId) : undefined),
            ...(options.onListening ? { onListening: options.onListening } : {}),
          },
          signal,
        )
      : polling.events(signal);
  };

  const quotes = (symbols: readonly string[], signal: AbortSignal): AsyncIterable<BrokerQuote> => {
    // Ours are ccxt's unified symbols already (BTC/USDT); each is reported as the caller named it.
    const ours = new Map<string, string>();
    for (const symbol of symbols) if (!ours.has(unifiedSymbol(symbol))) ours.set(unifiedSymbol(symbol), symbol);
    if (ours.size === 0) return (async function* () {})();
    return streamCcxtQuotes(
      {
        ...kept,
        symbols: ours,
        // A symbol the exchange does not list (or not as spot) is a refusal: the stream ends with it.
        open: async () => {
          for (const symbol of ours.keys()) await marketOf(symbol);
          return { exchange: (await openPro()).pro };
        },
      },
      signal,
    );
  };
  /** Whether ccxt's pro class of the exchange streams trades: known once ccxt has loaded (real mode loads it at start-up). */
  let streamsTrades: boolean | undefined;
  const tradesStreamed = () => {
    const ccxt = loadedCcxt();
    if (!ccxt) return false;
    return (streamsTrades ??= proHas(ccxt, options.exchangeId, 'watchTradesForSymbols') || proHas(ccxt, options.exchangeId, 'watchTrades'));
  };

  return {
    ...polling,
    events: streaming,
    // Absent (undefined) where the exchange's pro class watches no trades.
    get quotes() {
      return tradesStreamed() ? quotes : undefined;
    },
  };
};
