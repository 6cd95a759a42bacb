// A fake Alpaca on 127.0.0.1 speaking Trading API v2 (REST and the trade_updates stream) and the
// market data's latest trade, bars and real-time trade stream (alpaca-data.ts), over the in-memory
// books of alpaca-books.ts. Tests drive it through its price and fault switches; a user can run it
// to try real mode on one machine.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AlpacaOrderRequest, AlpacaReplaceRequest, AlpacaTradeUpdate } from '../brokers/alpaca/wire.ts';
import { keepConnectionsLikeABroker } from './keep-alive.ts';
import { createFakeAlpacaBooks, FakeAlpacaRefusal, type FakeAccountSeed } from './alpaca-books.ts';
import { createFakeAlpacaData, FAKE_DATA_FEEDS } from './alpaca-data.ts';

export interface FakeAlpacaRequest {
  method: string;
  /** The path and query as sent. */
  url: string;
  /** The key id the request carried ('' without one). */
  keyId: string;
}

export interface FakeAlpacaOptions {
  accounts?: FakeAccountSeed[];
  /** Symbol → price, decimal strings. */
  prices?: Record<string, string>;
  /** Send trade updates as text frames; by default binary, as Alpaca's paper host does. */
  textFrames?: boolean;
  /** The port on 127.0.0.1; an ephemeral one by default. */
  port?: number;
  /** Told of each trade update as it goes out on the stream (a benchmark times the way from here to our frame). */
  onStreamSend?: (keyId: string, update: AlpacaTradeUpdate) => void;
}

/** Which requests a fault waits for: by default the next one, whatever it is. */
export interface FakeRequestMatch {
  method?: string;
  /** The path, without the query. */
  path?: string;
}

type RestFault = (
  | { kind: 'status'; status: number; message: string }
  | { kind: 'hang' }
  | { kind: 'rate_limit'; retryAfterSeconds: number }
  // The request is carried out, and then its answer is this failure (a gateway that failed after the order was taken).
  | { kind: 'taken_then_status'; status: number; message: string }
) & { match?: FakeRequestMatch };

const matches = (fault: { match?: FakeRequestMatch }, method: string, path: string) =>
  (fault.match?.method === undefined || fault.match.method === method) && (fault.match?.path === undefined || fault.match.path === path);

interface Listener {
  socket: WebSocket;
  keyId: string | undefined;
  listening: boolean;
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body === undefined ? undefined : JSON.stringify(body));
};

const ORDER_PATH = /^\/v2\/orders\/([^/]+)$/;
const LATEST_TRADE_PATH = /^\/v2\/stocks\/([^/]+)\/trades\/latest$/;
const BARS_PATH = /^\/v2\/stocks\/([^/]+)\/bars$/;

/**
 * The data host's daily bars of a symbol: one per weekday from `start` to `end` (no holidays
 * here), made up around its price so each day differs, `limit` a page with Alpaca's page token.
 */
const dailyBarsPage = (price: { toNumber(): number }, url: URL) => {
  const start = url.searchParams.get('start') ?? '';
  const end = url.searchParams.get('end') ?? '';
  if (url.searchParams.get('timeframe') !== '1Day' || !/^\d{4}-\d{2}-\d{2}$/.test(start) || !/^\d{4}-\d{2}-\d{2}$/.test(end)) throw new FakeAlpacaRefusal(422, 42210000, 'invalid timeframe, start or end');
  const limit = Math.min(10_000, Math.max(1, Number(url.searchParams.get('limit') ?? 1_000) || 1_000));
  const token = url.searchParams.get('page_token');
  const bars: { t: string; o: number; h: number; l: number; c: number; v: number; n: number; vw: number }[] = [];
  let day = new Date(`${token ? Buffer.from(token, 'base64url').toString('utf8') : start}T00:00:00Z`);
  const last = new Date(`${end}T00:00:00Z`);
  for (; day <= last && bars.length < limit; day = new Date(day.getTime() + 86_400_000)) {
    if (day.getUTCDay() === 0 || day.getUTCDay() === 6) continue;
    const base = price.toNumber() * (1 + ((day.getUTCDate() % 7) - 3) / 1_000);
    const close = Math.round(base * 100) / 100;
    bars.push({ t: `${day.toISOString().slice(0, 10)}T04:00:00Z`, o: Math.round(base * 99.8) / 100, h: Math.round(base * 100.5) / 100, l: Math.round(base * 99.4) / 100, c: close, v: 1_000_000 + day.getUTCDate() * 1_000, n: 5_000, vw: close });
  }
  while (day <= last && (day.getUTCDay() === 0 || day.getUTCDay() === 6)) day = new Date(day.getTime() + 86_400_000);
  const more = day <= last;
  return { bars, next_page_token: more ? Buffer.from(day.toISOString().slice(0, 10), 'utf8').toString('base64url') : null };
};

export const startFakeAlpaca = async (options: FakeAlpacaOptions = {}) => {
  const listeners = new Set<Listener>();
  const requests: FakeAlpacaRequest[] = [];
  const sentUpdates = new Map<string, AlpacaTradeUpdate[]>();
  const faults: RestFault[] = [];
  let silent = false;
  let refuseStreamConnections = 0;
  let streamConnections = 0;
  /** Client messages (an auth, a listen) dropped unanswered while silent. */
  let ignoredWhileSilent = 0;
  const hung = new Set<ServerResponse>();

  const sendFrame = (socket: WebSocket, message: unknown) => socket.send(Buffer.from(JSON.stringify(message)), { binary: !options.textFrames });

  const publish = (keyId: string, update: AlpacaTradeUpdate) => {
    sentUpdates.set(keyId, [...(sentUpdates.get(keyId) ?? []), update]);
    if (silent) return;
    for (const listener of listeners) if (listener.keyId === keyId && listener.listening) sendFrame(listener.socket, { stream: 'trade_updates', data: update });
    options.onStreamSend?.(keyId, update);
  };

  // Every price set is a trade on the data stream.
  const data = createFakeAlpacaData({ secretOf: (keyId) => books.secretOf(keyId), isSilent: () => silent });
  const books = createFakeAlpacaBooks(publish, (symbol, price) => data.print(symbol, price.toNumber()));
  for (const account of options.accounts ?? []) books.addAccount(account);
  for (const [symbol, price] of Object.entries(options.prices ?? {})) books.setPrice(symbol, price);

  /** The key of an authenticated request, or the 401/403 Alpaca would answer. */
  const authenticate = (request: IncomingMessage): string => {
    const keyId = request.headers['apca-api-key-id'];
    const secret = request.headers['apca-api-secret-key'];
    if (typeof keyId !== 'string' || typeof secret !== 'string') throw new FakeAlpacaRefusal(401, 40110000, 'request is not authorized');
    if (books.secretOf(keyId) !== secret) throw new FakeAlpacaRefusal(403, 40310000, 'forbidden.');
    return keyId;
  };

  const route = async (request: IncomingMessage, keyId: string): Promise<{ status: number; body?: unknown }> => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    const path = url.pathname;
    const json = async <T>() => JSON.parse((await readBody(request)) || '{}') as T;
    if (path === '/v2/account' && method === 'GET') return { status: 200, body: books.account(keyId) };
    if (path === '/v2/positions' && method === 'GET') return { status: 200, body: books.positions(keyId) };
    if (path === '/v2/orders' && method === 'POST') return { status: 200, body: books.place(keyId, await json<AlpacaOrderRequest>()) };
    if (path === '/v2/orders' && method === 'GET') {
      const status = url.searchParams.get('status') ?? 'open';
      if (status !== 'open' && status !== 'closed' && status !== 'all') throw new FakeAlpacaRefusal(422, 42210000, `invalid status ${status}`);
      return { status: 200, body: books.listOrders(keyId, { status, nested: url.searchParams.get('nested') === 'true' }) };
    }
    // Literal before parameter: `orders:by_client_order_id` would otherwise read as an order id.
    if (path === '/v2/orders:by_client_order_id' && method === 'GET') return { status: 200, body: books.getByClientOrderId(keyId, url.searchParams.get('client_order_id') ?? '') };
    const orderId = ORDER_PATH.exec(path)?.[1];
    if (orderId && method === 'GET') return { status: 200, body: books.getOrder(keyId, decodeURIComponent(orderId)) };
    if (orderId && method === 'DELETE') {
      books.cancel(keyId, decodeURIComponent(orderId));
      return { status: 204 };
    }
    if (orderId && method === 'PATCH') return { status: 200, body: books.replace(keyId, decodeURIComponent(orderId), await json<AlpacaReplaceRequest>()) };
    const barsOf = BARS_PATH.exec(path)?.[1];
    if (barsOf && method === 'GET') {
      const price = books.priceOf(decodeURIComponent(barsOf));
      if (!price) throw new FakeAlpacaRefusal(404, 40410000, 'symbol not found');
      return { status: 200, body: { symbol: decodeURIComponent(barsOf), ...dailyBarsPage(price, url) } };
    }
    const symbol = LATEST_TRADE_PATH.exec(path)?.[1];
    if (symbol && method === 'GET') {
      const price = books.priceOf(decodeURIComponent(symbol));
      if (!price) throw new FakeAlpacaRefusal(404, 40410000, 'symbol not found');
      return { status: 200, body: { symbol: decodeURIComponent(symbol), trade: { t: new Date().toISOString(), x: 'V', p: price.toNumber(), s: 100, c: ['@'], i: 1, z: 'C' } } };
    }
    throw new FakeAlpacaRefusal(404, 40400000, 'endpoint not found');
  };

  const server = createServer((request, response) => {
    const header = request.headers['apca-api-key-id'];
    requests.push({ method: request.method ?? '', url: request.url ?? '', keyId: typeof header === 'string' ? header : '' });
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const index = faults.findIndex((candidate) => matches(candidate, request.method ?? '', path));
    const fault = index < 0 ? undefined : faults.splice(index, 1)[0];
    if (fault?.kind === 'hang') {
      hung.add(response);
      return;
    }
    if (fault?.kind === 'status') return sendJson(response, fault.status, { code: fault.status * 100_000, message: fault.message });
    if (fault?.kind === 'rate_limit') return sendJson(response, 429, { code: 42910000, message: 'rate limit exceeded' }, { 'retry-after': String(fault.retryAfterSeconds) });
    void (async () => {
      try {
        const answer = await route(request, authenticate(request));
        if (fault?.kind === 'taken_then_status') return sendJson(response, fault.status, { code: fault.status * 100_000, message: fault.message });
        sendJson(response, answer.status, answer.body);
      } catch (error) {
        if (error instanceof FakeAlpacaRefusal) sendJson(response, error.status, { code: error.code, message: error.message });
        else sendJson(response, 500, { code: 50000000, message: error instanceof Error ? error.message : 'internal error' });
      }
    })();
  });

  // Pongs are the fake's to answer, so a silenced stream can fall quiet as a stuck one would.
  const streams = new WebSocketServer({ noServer: true, autoPong: false });
  // Two WebSocket servers on one HTTP server: each upgrade goes to its path's.
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const target = path === '/stream' ? streams : FAKE_DATA_FEEDS.has(path) ? data.server : undefined;
    if (!target) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    target.handleUpgrade(request, socket, head, (ws) => target.emit('connection', ws, request));
  });
  streams.on('connection', (socket) => {
    streamConnections += 1;
    if (refuseStreamConnections > 0) {
      refuseStreamConnections -= 1;
      socket.terminate();
      return;
    }
    const listener: Listener = { socket, keyId: undefined, listening: false };
    listeners.add(listener);
    socket.on('close', () => listeners.delete(listener));
    socket.on('ping', (data) => {
      if (!silent) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (silent) {
        ignoredWhileSilent += 1;
        return;
      }
      let message: { action?: string; key?: string; secret?: string; data?: { key_id?: string; secret_key?: string; streams?: string[] } };
      try {
        message = JSON.parse((data as Buffer).toString('utf8')) as typeof message;
      } catch {
        return sendFrame(socket, { stream: 'error', data: { error_message: 'invalid json' } });
      }
      if (message.action === 'auth' || message.action === 'authenticate') {
        // Both the current form and the older `data.key_id` form Alpaca still accepts.
        const keyId = message.key ?? message.data?.key_id;
        const secret = message.secret ?? message.data?.secret_key;
        const authorized = keyId !== undefined && books.secretOf(keyId) === secret;
        if (authorized) listener.keyId = keyId;
        sendFrame(socket, { stream: 'authorization', data: { action: 'authenticate', status: authorized ? 'authorized' : 'unauthorized' } });
        if (!authorized) socket.close();
      } else if (message.action === 'listen' && listener.keyId) {
        const streamsWanted = message.data?.streams ?? [];
        listener.listening = streamsWanted.includes('trade_updates');
        sendFrame(socket, { stream: 'listening', data: { streams: streamsWanted.filter((name) => name === 'trade_updates') } });
      }
    });
  });

  keepConnectionsLikeABroker(server);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    /** The trading origin, which also answers the data host's latest trade. */
    url: origin,
    streamUrl: `ws://127.0.0.1:${port}/stream`,
    /** The market data stream's IEX feed (`/v2/sip` is served too). */
    dataStreamUrl: `ws://127.0.0.1:${port}/v2/iex`,
    /** The data stream's switches and what it saw: `printed` trades, `actions` (auth, subscribe), `frameSizes`, `socketCount`, `subscriptionsOf`, `drop`, `failAuthNext`. */
    data,
    requests,
    books,
    addAccount: books.addAccount,
    setPrice: books.setPrice,
    /** Every trade update published for a key, sent or silenced. */
    tradeUpdatesOf: (keyId: string) => sentUpdates.get(keyId) ?? [],
    /** Stream connections opened so far (refused ones included). */
    get ignoredWhileSilent() {
      return ignoredWhileSilent;
    },
    get streamConnections() {
      return streamConnections;
    },
    /** The key's authenticated listeners now connected (every key's without one). */
    listenerCount: (keyId?: string) => [...listeners].filter((listener) => listener.listening && (keyId === undefined || listener.keyId === keyId)).length,
    /** The next REST request (any key; of that method and path with `match`) answers this status with Alpaca's error body carrying `message`. */
    failNext: (status = 500, message = 'internal server error', match?: FakeRequestMatch) => void faults.push({ kind: 'status', status, message, ...(match ? { match } : {}) }),
    /** The next REST request is never answered. */
    hangNext: () => void faults.push({ kind: 'hang' }),
    /** The next matching request is carried out (an order taken), and then answered with this failure. */
    takeThenFailNext: (status = 502, message = 'bad gateway', match?: FakeRequestMatch) => void faults.push({ kind: 'taken_then_status', status, message, ...(match ? { match } : {}) }),
    /** The next `times` REST requests answer 429 with this Retry-After. */
    rateLimitNext: (retryAfterSeconds: number, times = 1) => {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'rate_limit', retryAfterSeconds });
    },
    /** Drops every stream connection; the next `refuseNext` connections are dropped on arrival. */
    dropStreams: (refuseNext = 0) => {
      refuseStreamConnections = refuseNext;
      for (const listener of listeners) listener.socket.terminate();
    },
    /** While silent, both streams send nothing: no updates or trades, no acknowledgements, no pongs. */
    setSilent: (on: boolean) => {
      silent = on;
    },
    /** Sends again every update already sent to the key's listeners (a duplicate delivery). */
    redeliver: (keyId: string) => {
      for (const update of sentUpdates.get(keyId) ?? []) for (const listener of listeners) if (listener.keyId === keyId && listener.listening) sendFrame(listener.socket, { stream: 'trade_updates', data: update });
    },
    close: async () => {
      for (const response of hung) response.destroy();
      for (const listener of listeners) listener.socket.terminate();
      streams.close();
      data.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FakeAlpaca = Awaited<ReturnType<typeof startFakeAlpaca>>;
