// The fake Binance's WebSocket API (`/ws-api/v3`), the part ccxt's pro `binance` class uses for
// a spot account's order updates (watchOrders): `userDataStream.subscribe.signature` (the key,
// the timestamp within the recvWindow and the HMAC-SHA256 of the sorted parameters checked as
// the REST side checks a signed call), then an `executionReport` event for every change of the
// account's orders in the books (new, trade, canceled, expired), wrapped as Binance wraps user
// data on the WebSocket API (`{subscriptionId, event}`); `ping` requests and ping frames answered.
// Faults (binance-sockets.ts): drop the sockets (and refuse the next connections), or make the
// open ones go silent (no events, no answers, no pongs) as a stuck connection would.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { FakeBinanceRefusal, type FakeBinanceBooks, type FakeBinanceOrderChange } from './binance-books.ts';
import { binanceDecimal as q8, createFakeBinanceSockets, type FakeBinanceSocket } from './binance-sockets.ts';

export const FAKE_BINANCE_WS_API_PATH = '/ws-api/v3';

/** Binance's default and largest recvWindow (ms). */
const RECV_WINDOW = { default: 5_000, max: 60_000 };

/** A socket and the API keys it subscribed the user data of, by subscription id. */
type Session = FakeBinanceSocket<Map<number, string>>;

interface WsRequest {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

const RATE_LIMITS = [{ rateLimitType: 'REQUEST_WEIGHT', interval: 'MINUTE', intervalNum: 1, limit: 6000, count: 2 }];

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
    w: order.type !== 'MARKET' && order.isWorking && (order.status === 'NEW' || order.status === 'PARTIALLY_FILLED'),
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

/** The WebSocket API, served on the upgrades of FAKE_BINANCE_WS_API_PATH handed to its `upgrade`. */
export const createFakeBinanceWsApi = (books: FakeBinanceBooks, onStreamSend?: (change: FakeBinanceOrderChange) => void) => {
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

  const sockets = createFakeBinanceSockets<Map<number, string>>({
    stateOf: () => new Map(),
    onRequest: (session, request) => answer(session, request as WsRequest),
    malformed: { id: null, status: 400, error: { code: -1000, msg: 'Malformed request.' } },
  });
  const { send } = sockets;

  const answer = (session: Session, request: WsRequest) => {
    const id = request.id ?? null;
    try {
      if (request.method === 'ping') return send(session, { id, status: 200, result: {}, rateLimits: RATE_LIMITS });
      if (request.method === 'time') return send(session, { id, status: 200, result: { serverTime: Date.now() }, rateLimits: RATE_LIMITS });
      if (request.method === 'userDataStream.subscribe.signature') {
        const apiKey = authenticate(request.params ?? {});
        const subscriptionId = nextSubscriptionId++;
        session.state.set(subscriptionId, apiKey);
        return send(session, { id, status: 200, result: { subscriptionId }, rateLimits: RATE_LIMITS });
      }
      if (request.method === 'userDataStream.unsubscribe') {
        const wanted = request.params?.subscriptionId;
        if (wanted === undefined) session.state.clear();
        else session.state.delete(Number(wanted));
        return send(session, { id, status: 200, result: {}, rateLimits: RATE_LIMITS });
      }
      throw new FakeBinanceRefusal(-1100, `The fake has no method ${String(request.method)}`);
    } catch (error) {
      const refusal = error instanceof FakeBinanceRefusal ? error : new FakeBinanceRefusal(-1000, error instanceof Error ? error.message : 'An unknown error occurred while processing the request.', 500);
      send(session, { id, status: refusal.status, error: { code: refusal.code, msg: refusal.message }, rateLimits: RATE_LIMITS });
    }
  };

  const unsubscribe = books.onOrderChange((change) => {
    const eventTime = Date.now();
    for (const session of sockets.sessions()) {
      for (const [subscriptionId, apiKey] of session.state) {
        if (apiKey === change.apiKey) send(session, { subscriptionId, event: executionReportOf(change, eventTime) });
      }
    }
    onStreamSend?.(change);
  });

  const listening = (session: Session, apiKey?: string) => !session.silent && [...session.state.values()].some((key) => apiKey === undefined || key === apiKey);

  return {
    upgrade: sockets.upgrade,
    /** WebSocket API connections attempted so far (refused ones included). */
    get userStreamConnections() {
      return sockets.connections;
    },
    /** Sockets subscribed to the key's user data now and not silenced (every key's without one). */
    userStreamSubscribers: (apiKey?: string) => sockets.sessions().filter((session) => listening(session, apiKey)).length,
    /** Ends every WebSocket API socket and refuses the next `refuse` connections (503 on the upgrade). */
    dropUserStreams: sockets.drop,
    /** The sockets open now go silent for good: no events, no answers, no pongs. New connections are served. */
    silenceUserStreams: sockets.silence,
    close: () => {
      unsubscribe();
      sockets.close();
    },
  };
};

export type FakeBinanceWsApi = ReturnType<typeof createFakeBinanceWsApi>;
