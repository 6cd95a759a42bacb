// A fake Binance spot REST API (/api/v3) on 127.0.0.1, enough for ccxt's `binance` class with its
// URLs pointed here: exchangeInfo, time, ticker, klines, order (POST, GET, DELETE), orderList/oco
// (POST: a sell OCO, the implicit privatePostOrderListOco the ccxt adapter calls), openOrders,
// account and myTrades over the books of binance-books.ts. Signed calls are checked as Binance
// checks them: the X-MBX-APIKEY header names an account and the HMAC-SHA256 of the query (or
// form body) before `&signature=` matches with its secret (-1022 otherwise); a client order id
// must meet Binance's documented rule (-1100 otherwise, as Binance answers). Tests drive it
// through prices and fault switches (5xx, hangs, 429 with Retry-After and -1003). On the same
// port: the WebSocket API for order updates (binance-ws.ts) and the market streams for trades
// (binance-market-ws.ts), where every price set goes out as a trade.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { keepConnectionsLikeABroker } from './keep-alive.ts';
import { checkFakeBinanceClientOrderId, createFakeBinanceBooks, FakeBinanceRefusal, type FakeBinanceAccountSeed, type FakeBinanceMarket, type FakeBinanceOrder, type FakeBinanceOrderChange } from './binance-books.ts';
import { createFakeBinanceMarketStreams, isFakeBinanceMarketStreamPath } from './binance-market-ws.ts';
import { createFakeBinanceWsApi, FAKE_BINANCE_WS_API_PATH } from './binance-ws.ts';

export interface FakeBinanceOptions {
  accounts?: FakeBinanceAccountSeed[];
  /** The listed markets; by default BTCUSDT and ETHUSDT. */
  markets?: FakeBinanceMarket[];
  /** Prices by Binance symbol (BTCUSDT). */
  prices?: Record<string, string>;
  /** The port on 127.0.0.1; an ephemeral one by default. */
  port?: number;
  /** Told of each order change as it goes out on the user data streams (a benchmark times the way from here to our frame). */
  onStreamSend?: (change: FakeBinanceOrderChange) => void;
}

export interface FakeBinanceRequest {
  method: string;
  path: string;
  apiKey: string;
}

/** Which calls a fault waits for: by default the next one (exchangeInfo and time included). */
export interface FakeBinanceMatch {
  method?: string;
  path?: string;
}

type Fault = ({ kind: 'status'; status: number; text: string } | { kind: 'hang' } | { kind: 'rate_limit'; retryAfterSeconds: number }) & { match?: FakeBinanceMatch };

export const DEFAULT_FAKE_BINANCE_MARKETS: readonly FakeBinanceMarket[] = [
  { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', tickSize: '0.01', stepSize: '0.00001' },
  { symbol: 'ETHUSDT', base: 'ETH', quote: 'USDT', tickSize: '0.01', stepSize: '0.0001' },
];

const SIGNED = new Set(['/api/v3/order', '/api/v3/orderList/oco', '/api/v3/openOrders', '/api/v3/account', '/api/v3/myTrades']);

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers }).end(JSON.stringify(body));
};

const marketInfo = (market: FakeBinanceMarket) => ({
  symbol: market.symbol,
  status: 'TRADING',
  baseAsset: market.base,
  baseAssetPrecision: 8,
  quoteAsset: market.quote,
  quotePrecision: 8,
  quoteAssetPrecision: 8,
  baseCommissionPrecision: 8,
  quoteCommissionPrecision: 8,
  // No stop orders here: ccxt refuses a trigger price for a market whose orderTypes lack them.
  orderTypes: ['LIMIT', 'LIMIT_MAKER', 'MARKET'],
  icebergAllowed: true,
  ocoAllowed: true,
  quoteOrderQtyMarketAllowed: true,
  allowTrailingStop: false,
  cancelReplaceAllowed: false,
  isSpotTradingAllowed: true,
  isMarginTradingAllowed: false,
  filters: [
    { filterType: 'PRICE_FILTER', minPrice: market.tickSize, maxPrice: '1000000.00', tickSize: market.tickSize },
    { filterType: 'LOT_SIZE', minQty: market.stepSize, maxQty: '9000.00000000', stepSize: market.stepSize },
    { filterType: 'NOTIONAL', minNotional: '1.00', applyMinToMarket: true, maxNotional: '9000000.00', applyMaxToMarket: false, avgPriceMins: 5 },
  ],
  permissions: [],
  permissionSets: [['SPOT']],
  defaultSelfTradePreventionMode: 'EXPIRE_MAKER',
  allowedSelfTradePreventionModes: ['EXPIRE_TAKER', 'EXPIRE_MAKER', 'EXPIRE_BOTH'],
});

/** The FULL answer of a new order: the order and the fills it made on arrival. */
const orderAnswer = (order: FakeBinanceOrder, fills: { price: string; qty: string; commission: string; commissionAsset: string; id: number }[]) => ({
  symbol: order.symbol,
  orderId: order.orderId,
  orderListId: -1,
  clientOrderId: order.clientOrderId,
  transactTime: order.updateTime,
  price: order.price,
  origQty: order.origQty,
  executedQty: order.executedQty,
  cummulativeQuoteQty: order.cummulativeQuoteQty,
  status: order.status,
  timeInForce: order.timeInForce,
  type: order.type,
  side: order.side,
  workingTime: order.workingTime,
  selfTradePreventionMode: order.selfTradePreventionMode,
  fills: fills.map((fill) => ({ price: fill.price, qty: fill.qty, commission: fill.commission, commissionAsset: fill.commissionAsset, tradeId: fill.id })),
});

/** The answer of a new order list (FULL): the list, its orders' ids and their reports. */
const orderListAnswer = (list: { orderListId: number; listClientOrderId: string; transactionTime: number; orders: FakeBinanceOrder[] }) => ({
  orderListId: list.orderListId,
  contingencyType: 'OCO',
  listStatusType: 'EXEC_STARTED',
  listOrderStatus: 'EXECUTING',
  listClientOrderId: list.listClientOrderId,
  transactionTime: list.transactionTime,
  symbol: list.orders[0]!.symbol,
  orders: list.orders.map((order) => ({ symbol: order.symbol, orderId: order.orderId, clientOrderId: order.clientOrderId })),
  orderReports: list.orders.map((order) => ({
    symbol: order.symbol,
    orderId: order.orderId,
    orderListId: order.orderListId,
    clientOrderId: order.clientOrderId,
    transactTime: list.transactionTime,
    price: order.price,
    origQty: order.origQty,
    executedQty: order.executedQty,
    origQuoteOrderQty: order.origQuoteOrderQty,
    cummulativeQuoteQty: order.cummulativeQuoteQty,
    status: order.status,
    timeInForce: order.timeInForce,
    type: order.type,
    side: order.side,
    ...(order.stopPrice !== '0' ? { stopPrice: order.stopPrice } : {}),
    workingTime: order.workingTime,
    selfTradePreventionMode: order.selfTradePreventionMode,
  })),
});

export const startFakeBinance = async (options: FakeBinanceOptions = {}) => {
  const books = createFakeBinanceBooks();
  for (const market of options.markets ?? DEFAULT_FAKE_BINANCE_MARKETS) books.addMarket(market);
  for (const account of options.accounts ?? []) books.addAccount(account);
  for (const [symbol, price] of Object.entries(options.prices ?? {})) books.setPrice(symbol, price);
  const bars = new Map<string, unknown[][]>();
  const requests: FakeBinanceRequest[] = [];
  const faults: Fault[] = [];
  const hung = new Set<ServerResponse>();

  /** The API key of a signed call whose signature holds, or Binance's refusal. */
  const authenticate = (request: IncomingMessage, signedText: string): string => {
    const apiKey = String(request.headers['x-mbx-apikey'] ?? '');
    const secret = books.secretOf(apiKey);
    if (!apiKey || secret === undefined) throw new FakeBinanceRefusal(-2015, 'Invalid API-key, IP, or permissions for action.', 401);
    const at = signedText.lastIndexOf('signature=');
    const payload = at > 0 ? signedText.slice(0, at - 1) : '';
    const given = Buffer.from(at >= 0 ? signedText.slice(at + 'signature='.length) : '', 'utf8');
    const expected = Buffer.from(createHmac('sha256', secret).update(payload).digest('hex'), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new FakeBinanceRefusal(-1022, 'Signature for this request is not valid.');
    return apiKey;
  };

  const route = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const method = request.method ?? 'GET';
    const path = url.pathname;
    const body = method === 'POST' ? await readBody(request) : '';
    const params = method === 'POST' ? new URLSearchParams(body) : url.searchParams;
    const param = (name: string) => params.get(name) ?? undefined;
    const apiKey = SIGNED.has(path) ? authenticate(request, method === 'POST' ? body : url.search.slice(1)) : '';
    requests.push({ method, path, apiKey });
    const symbolOf = () => {
      const symbol = param('symbol');
      if (!symbol) throw new FakeBinanceRefusal(-1102, "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed.");
      return symbol;
    };
    const lookup = () => {
      checkFakeBinanceClientOrderId('origClientOrderId', param('origClientOrderId'));
      return { ...(param('orderId') ? { orderId: param('orderId')! } : {}), ...(param('origClientOrderId') ? { origClientOrderId: param('origClientOrderId')! } : {}) };
    };

    if (path === '/api/v3/ping') return sendJson(response, 200, {});
    if (path === '/api/v3/time') return sendJson(response, 200, { serverTime: Date.now() });
    if (path === '/api/v3/exchangeInfo') {
      return sendJson(response, 200, {
        timezone: 'UTC',
        serverTime: Date.now(),
        rateLimits: [{ rateLimitType: 'REQUEST_WEIGHT', interval: 'MINUTE', intervalNum: 1, limit: 6000 }],
        exchangeFilters: [],
        symbols: books.markets().map(marketInfo),
      });
    }
    if (path === '/api/v3/ticker/price') return sendJson(response, 200, { symbol: symbolOf(), price: books.priceOf(symbolOf()) });
    if (path === '/api/v3/ticker/24hr') {
      const symbol = symbolOf();
      const last = books.priceOf(symbol);
      const at = Date.now();
      return sendJson(response, 200, {
        symbol,
        priceChange: '0',
        priceChangePercent: '0',
        weightedAvgPrice: last,
        prevClosePrice: last,
        lastPrice: last,
        lastQty: '0',
        bidPrice: last,
        bidQty: '1',
        askPrice: last,
        askQty: '1',
        openPrice: last,
        highPrice: last,
        lowPrice: last,
        volume: '0',
        quoteVolume: '0',
        openTime: at - 86_400_000,
        closeTime: at,
        firstId: 0,
        lastId: 0,
        count: 0,
      });
    }
    if (path === '/api/v3/klines') {
      const symbol = symbolOf();
      books.priceOf(symbol);
      const start = Number(param('startTime') ?? '0');
      const limit = Number(param('limit') ?? '500');
      return sendJson(response, 200, (bars.get(symbol) ?? []).filter((row) => Number(row[0]) >= start).slice(0, limit));
    }
    if (path === '/api/v3/order' && method === 'POST') {
      const quantity = param('quantity');
      if (!quantity) throw new FakeBinanceRefusal(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
      checkFakeBinanceClientOrderId('newClientOrderId', param('newClientOrderId'));
      const { order, fills } = books.place(apiKey, {
        symbol: symbolOf(),
        side: param('side') ?? '',
        type: param('type') ?? '',
        quantity,
        ...(param('price') ? { price: param('price')! } : {}),
        ...(param('timeInForce') ? { timeInForce: param('timeInForce')! } : {}),
        ...(param('newClientOrderId') ? { newClientOrderId: param('newClientOrderId')! } : {}),
      });
      return sendJson(response, 200, orderAnswer(order, fills));
    }
    if (path === '/api/v3/orderList/oco' && method === 'POST') {
      const quantity = param('quantity');
      if (!quantity) throw new FakeBinanceRefusal(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
      const named = ['abovePrice', 'aboveClientOrderId', 'belowStopPrice', 'belowPrice', 'belowTimeInForce', 'belowClientOrderId', 'listClientOrderId'] as const;
      const list = books.placeOco(apiKey, {
        symbol: symbolOf(),
        side: param('side') ?? '',
        quantity,
        aboveType: param('aboveType') ?? '',
        belowType: param('belowType') ?? '',
        ...Object.fromEntries(named.flatMap((name) => (param(name) === undefined ? [] : [[name, param(name)!]]))),
      });
      return sendJson(response, 200, orderListAnswer(list));
    }
    if (path === '/api/v3/order' && method === 'GET') return sendJson(response, 200, books.find(apiKey, symbolOf(), lookup()));
    if (path === '/api/v3/order' && method === 'DELETE') {
      const order = books.cancel(apiKey, symbolOf(), lookup());
      return sendJson(response, 200, { ...order, origClientOrderId: order.clientOrderId, transactTime: order.updateTime });
    }
    if (path === '/api/v3/openOrders' && method === 'GET') return sendJson(response, 200, books.openOrders(apiKey, param('symbol')));
    if (path === '/api/v3/account') {
      return sendJson(response, 200, {
        makerCommission: 10,
        takerCommission: 10,
        canTrade: true,
        canWithdraw: false,
        canDeposit: false,
        updateTime: Date.now(),
        accountType: 'SPOT',
        balances: books.balances(apiKey),
        permissions: ['SPOT'],
      });
    }
    if (path === '/api/v3/myTrades') {
      const start = param('startTime');
      return sendJson(response, 200, books.trades(apiKey, symbolOf(), start === undefined ? undefined : Number(start)));
    }
    return sendJson(response, 404, { code: -1000, msg: `The fake has no ${method} ${path}` });
  };

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      try {
        const index = faults.findIndex((fault) => (fault.match?.method === undefined || fault.match.method === request.method) && (fault.match?.path === undefined || fault.match.path === url.pathname));
        const fault = index < 0 ? undefined : faults.splice(index, 1)[0];
        if (fault?.kind === 'hang') return void hung.add(response);
        if (fault?.kind === 'status') return void response.writeHead(fault.status, { 'content-type': 'text/html' }).end(fault.text);
        if (fault?.kind === 'rate_limit') {
          return sendJson(response, 429, { code: -1003, msg: 'Too much request weight used; current limit is 6000 request weight per 1 MINUTE.' }, { 'retry-after': String(fault.retryAfterSeconds) });
        }
        await route(request, response, url);
      } catch (error) {
        if (error instanceof FakeBinanceRefusal) sendJson(response, error.status, { code: error.code, msg: error.message });
        else sendJson(response, 500, { code: -1000, msg: error instanceof Error ? error.message : 'An unknown error occurred while processing the request.' });
      }
    })();
  });

  // The WebSocket API (order updates for ccxt's watchOrders) and the market streams (trades for its watchTrades) on the same port.
  const wsApi = createFakeBinanceWsApi(books, options.onStreamSend);
  const marketStreams = createFakeBinanceMarketStreams(books);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    if (path === FAKE_BINANCE_WS_API_PATH) return wsApi.upgrade(request, socket, head);
    if (isFakeBinanceMarketStreamPath(path)) return marketStreams.upgrade(request, socket, head);
    socket.destroy();
  });

  keepConnectionsLikeABroker(server);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    wsApiUrl: `ws://127.0.0.1:${port}${FAKE_BINANCE_WS_API_PATH}`,
    /** The raw market streams' base (ccxt's `urls.api.ws.spot`, rebased). */
    marketStreamUrl: `ws://127.0.0.1:${port}/ws`,
    books,
    requests,
    addAccount: books.addAccount,
    /** Sets the symbol's price: a market trade at it (at `time`, ms, now by default) that the market streams send. */
    setPrice: books.setPrice,
    /** Binance kline rows of a symbol: [openTime, open, high, low, close, volume, closeTime, ...]. */
    setBars: (symbol: string, rows: unknown[][]) => void bars.set(symbol, rows),
    /** The next matching call answers this status with a body that is not Binance's. */
    failNext: (status = 503, text = '<html>Service Unavailable</html>', match?: FakeBinanceMatch) => void faults.push({ kind: 'status', status, text, ...(match ? { match } : {}) }),
    /** The next matching call is never answered. */
    hangNext: (match?: FakeBinanceMatch) => void faults.push({ kind: 'hang', ...(match ? { match } : {}) }),
    /** The next `times` matching calls answer 429 with Retry-After and -1003, as Binance does. */
    rateLimitNext: (times = 1, retryAfterSeconds = 1, match?: FakeBinanceMatch) => {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'rate_limit', retryAfterSeconds, ...(match ? { match } : {}) });
    },
    get userStreamConnections() {
      return wsApi.userStreamConnections;
    },
    userStreamSubscribers: wsApi.userStreamSubscribers,
    dropUserStreams: wsApi.dropUserStreams,
    silenceUserStreams: wsApi.silenceUserStreams,
    /** Market stream connections attempted so far (refused ones included). */
    get marketStreamConnections() {
      return marketStreams.connections;
    },
    marketStreamSubscribers: marketStreams.subscribers,
    /** The trades the market streams sent to a listening socket, oldest first. */
    marketTradesSent: marketStreams.sent,
    dropMarketStreams: marketStreams.drop,
    silenceMarketStreams: marketStreams.silence,
    close: async () => {
      wsApi.close();
      marketStreams.close();
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeBinance = Awaited<ReturnType<typeof startFakeBinance>>;
