// The fake Binance's WebSocket API (`/ws-api/v3`), the part ccxt's pro `binance` class uses for
// a spot account's order updates (watchOrders): `userDataStream.subscribe.signature` (the key,
// the timestamp within the recvWindow and the HMAC-SHA256 of the sorted parameters checked as
// the REST side checks a signed call), then an `executionReport` event for every change of the
// account's orders in the books (new, trade, canceled, expired), wrapped as Binance wraps user
// data on the WebSocket API (`{subscriptionId, event}`); `ping` requests and ping frames answered.
// Faults: drop the sockets (and refuse the next connections), or make the open ones go silent
// (no events, no answers, no pongs) as a stuck connection would.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ExactDecimal } from '../decimal.ts';
import { FakeBinanceRefusal, type FakeBinanceBooks, type FakeBinanceOrderChange } from './binance-books.ts';

export const FAKE_BINANCE_WS_API_PATH = '/ws-api/v3';

/** Binance's default and largest recvWindow (ms). */
const RECV_WINDOW = { default: 5_000, max: 60_000 };

interface Session {
  socket: WebSocket;
  /** The API keys this socket subscribed the user data of, by subscription id. */
  subscriptions: Map<number, string>;
  silent: boolean;
}

interface WsRequest {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

const RATE_LIMITS = [{ rateLimitType: 'REQUEST_WEIGHT', interval: 'MINUTE', intervalNum: 1, limit: 6000, count: 2 }];

/** Binance's wire decimals: 8 places. */
const q8 = (text: string) => new ExactDecimal(text).toFixed(8);

/** The executionReport of one change, with Binance's field names. */
export const executionReportOf = ({ execution, order, trade }: FakeBinanceOrderChange, eventTime: number) => {
  const canceled = execution === 'CANCELED';
  return {
    e: 'executionReport',
    E: eventTime,
    s: order.symbol,
    // A cancel carries the cancel request's own client id in `c`, the order's in `C`.
    c: canceled ? `cancel-${order.orderId}` : order.clientOrderId,
    S: order.side,
    o: order.type,
    f: order.timeInForce,
    q: q8(order.origQty),
    p: q8(order.price),
    P: q8(order.stopPrice),
    F: q8('0'),
    g: order.orderListId,
    C: canceled ? order.clientOrderId : '',
    x: execution,
    X: order.status,
    r: 'NONE',
    i: order.orderId,
    l: q8(trade?.qty ?? '0'),
    z: q8(order.executedQty),
    L: q8(trade?.price ?? '0'),
    n: q8(trade?.commission ?? '0'),
    N: trade?.commissionAsset ?? null,
    T: trade?.time ?? order.updateTime,
    t: trade?.id ?? -1,
    I: eventTime,
    w: order.type === 'LIMIT' && (order.status === 'NEW' || order.status === 'PARTIALLY_FILLED'),
    m: trade?.isMaker ?? false,
    M: false,
    O: order.time,
    Z: q8(order.cummulativeQuoteQty),
    Y: q8(trade?.quoteQty ?? '0'),
    Q: q8(order.origQuoteOrderQty),
    W: order.workingTime,
    V: order.selfTradePreventionMode,
  };
};

/** Serves the WebSocket API on `server`'s upgrades of FAKE_BINANCE_WS_API_PATH. */
export const attachFakeBinanceWsApi = (server: Server, books: FakeBinanceBooks, onStreamSend?: (change: FakeBinanceOrderChange) => void) => {
  // Pongs are the fake's to answer, so a silenced socket falls quiet as a stuck one would.
  const wss = new WebSocketServer({ noServer: true, autoPong: false });
  const sessions = new Set<Session>();
  let connections = 0;
  let refuseNext = 0;
  let nextSubscriptionId = 0;

  /** The API key of a signed request whose timestamp and signature hold, or Binance's refusal. */
  const authenticate = (params: Record<string, unknown>): string => {
    const apiKey = typeof params.apiKey === 'string' ? params.apiKey : '';
    const secret = books.secretOf(apiKey);
    if (!apiKey || secret === undefined) throw new FakeBinanceRefusal(-2015, 'Invalid API-key, IP, or permissions for action.', 401);
    const timestamp = Number(params.timestamp);
    const recvWindow = params.recvWindow === undefined ? RECV_WINDOW.default : Number(params.recvWindow);
    if (!Number.isFinite(recvWindow) || recvWindow <= 0 || recvWindow > RECV_WINDOW.max) throw new FakeBinanceRefusal(-1131, 'recvWindow must be less than 60000');
    const now = Date.now();
    if (!Number.isFinite(timestamp) || timestamp > now + 1_000 || now - timestamp > recvWindow) throw new FakeBinanceRefusal(-1021, 'Timestamp for this request is outside of the recvWindow.');
    // The payload is every parameter but the signature, sorted by name, as `name=value&...`.
    const payload = Object.keys(params)
      .filter((name) => name !== 'signature')
      .sort()
      .map((name) => `${name}=${String(params[name])}`)
      .join('&');
    const given = Buffer.from(typeof params.signature === 'string' ? params.signature : '', 'utf8');
    const expected = Buffer.from(createHmac('sha256', secret).update(payload).digest('hex'), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new FakeBinanceRefusal(-1022, 'Signature for this request is not valid.');
    return apiKey;
  };

  const send = (session: Session, message: unknown) => {
    if (!session.silent && session.socket.readyState === session.socket.OPEN) session.socket.send(JSON.stringify(message));
  };

  const answer = (session: Session, request: WsRequest) => {
    const id = request.id ?? null;
    try {
      if (request.method === 'ping') return send(session, { id, status: 200, result: {}, rateLimits: RATE_LIMITS });
      if (request.method === 'time') return send(session, { id, status: 200, result: { serverTime: Date.now() }, rateLimits: RATE_LIMITS });
      if (request.method === 'userDataStream.subscribe.signature') {
        const apiKey = authenticate(request.params ?? {});
        const subscriptionId = nextSubscriptionId++;
        session.subscriptions.set(subscriptionId, apiKey);
        return send(session, { id, status: 200, result: { subscriptionId }, rateLimits: RATE_LIMITS });
      }
      if (request.method === 'userDataStream.unsubscribe') {
        const wanted = request.params?.subscriptionId;
        if (wanted === undefined) session.subscriptions.clear();
        else session.subscriptions.delete(Number(wanted));
        return send(session, { id, status: 200, result: {}, rateLimits: RATE_LIMITS });
      }
      throw new FakeBinanceRefusal(-1100, `The fake has no method ${String(request.method)}`);
    } catch (error) {
      const refusal = error instanceof FakeBinanceRefusal ? error : new FakeBinanceRefusal(-1000, error instanceof Error ? error.message : 'An unknown error occurred while processing the request.', 500);
      send(session, { id, status: refusal.status, error: { code: refusal.code, msg: refusal.message }, rateLimits: RATE_LIMITS });
    }
  };

  wss.on('connection', (socket) => {
    const session: Session = { socket, subscriptions: new Map(), silent: false };
    sessions.add(session);
    socket.on('close', () => sessions.delete(session));
    socket.on('ping', (data) => {
      if (!session.silent) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (session.silent) return;
      let request: WsRequest;
      try {
        request = JSON.parse((data as Buffer).toString('utf8')) as WsRequest;
      } catch {
        return send(session, { id: null, status: 400, error: { code: -1000, msg: 'Malformed request.' } });
      }
      answer(session, request);
    });
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://fake').pathname !== FAKE_BINANCE_WS_API_PATH) return void socket.destroy();
    connections += 1;
    if (refuseNext > 0) {
      refuseNext -= 1;
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  };
  server.on('upgrade', onUpgrade);

  const unsubscribe = books.onOrderChange((change) => {
    const eventTime = Date.now();
    for (const session of sessions) {
      for (const [subscriptionId, apiKey] of session.subscriptions) {
        if (apiKey === change.apiKey) send(session, { subscriptionId, event: executionReportOf(change, eventTime) });
      }
    }
    onStreamSend?.(change);
  });

  const listening = (session: Session, apiKey?: string) => !session.silent && [...session.subscriptions.values()].some((key) => apiKey === undefined || key === apiKey);

  return {
    /** WebSocket API connections attempted so far (refused ones included). */
    get userStreamConnections() {
      return connections;
    },
    /** Sockets subscribed to the key's user data now and not silenced (every key's without one). */
    userStreamSubscribers: (apiKey?: string) => [...sessions].filter((session) => listening(session, apiKey)).length,
    /** Ends every WebSocket API socket and refuses the next `refuseNext` connections (503 on the upgrade). */
    dropUserStreams: (refuse = 0) => {
      refuseNext = refuse;
      for (const session of sessions) session.socket.terminate();
    },
    /** The sockets open now go silent for good: no events, no answers, no pongs. New connections are served. */
    silenceUserStreams: () => {
      for (const session of sessions) session.silent = true;
    },
    close: () => {
      unsubscribe();
      server.off('upgrade', onUpgrade);
      for (const session of sessions) session.socket.terminate();
      wss.close();
    },
  };
};

export type FakeBinanceWsApi = ReturnType<typeof attachFakeBinanceWsApi>;
