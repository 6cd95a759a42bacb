// The fake Alpaca's real-time stock data stream v2 (`/v2/iex`, `/v2/sip`) as Alpaca speaks it:
// `connected` on arrival, auth by message with an account's key, trade subscriptions per socket,
// one connection per key and feed (a second one's auth is 406), and a trade printed to the
// symbol's subscribers whenever its price is set, in JSON-array text frames (the trades of one
// moment share a frame). Tests drive it through its drop, auth-failure and silence switches.
import { WebSocketServer, type WebSocket } from 'ws';
import type { AlpacaDataMessage, AlpacaDataSubscription, AlpacaDataTrade } from '../brokers/alpaca/wire.ts';

/** The feeds served; both print the same trades here. */
export const FAKE_DATA_FEEDS = new Set(['/v2/iex', '/v2/sip']);

interface DataSocket {
  socket: WebSocket;
  feed: string;
  /** Set once authenticated. */
  keyId: string | undefined;
  trades: Set<string>;
  /** Trades printed this moment, sent together in one frame. */
  pending: AlpacaDataTrade[];
}

/** What a client asked of the data stream, for tests to count (re-)authentications and subscriptions. */
export interface FakeDataAction {
  action: 'auth' | 'subscribe' | 'unsubscribe';
  keyId: string | undefined;
  /** auth: whether it was accepted; (un)subscribe: the trade symbols asked for. */
  accepted?: boolean;
  symbols?: string[];
}

const error = (code: number, msg: string): AlpacaDataMessage => ({ T: 'error', code, msg });

/** RFC 3339 with nanoseconds, as Alpaca stamps its trades: the milliseconds, then the trade's sub-millisecond part. */
const nanosecondStamp = (at: Date, tradeId: number) => `${at.toISOString().slice(0, 23)}${String(tradeId % 1_000_000).padStart(6, '0')}Z`;

export const createFakeAlpacaData = ({ secretOf, isSilent }: { secretOf: (keyId: string) => string | undefined; isSilent: () => boolean }) => {
  const sockets = new Set<DataSocket>();
  const actions: FakeDataAction[] = [];
  const printed: AlpacaDataTrade[] = [];
  /** How many trades each frame of trades carried. */
  const frameSizes: number[] = [];
  const authFaults: Array<{ code: number; msg: string }> = [];
  let refuseConnections = 0;
  let connections = 0;
  let tradeId = 0;

  const send = (socket: WebSocket, messages: AlpacaDataMessage[]) => socket.send(JSON.stringify(messages));

  const subscriptionOf = (entry: DataSocket): AlpacaDataSubscription => {
    const trades = [...entry.trades];
    return { T: 'subscription', trades, quotes: [], bars: [], updatedBars: [], dailyBars: [], statuses: [], lulds: [], corrections: trades, cancelErrors: trades };
  };

  const authenticate = (entry: DataSocket, key: unknown, secret: unknown) => {
    if (entry.keyId) return send(entry.socket, [error(403, 'already authenticated')]);
    const keyId = typeof key === 'string' ? key : undefined;
    const refusal =
      authFaults.shift() ??
      (keyId === undefined || secretOf(keyId) !== secret
        ? { code: 402, msg: 'auth failed' }
        : [...sockets].some((other) => other.keyId === keyId && other.feed === entry.feed)
          ? { code: 406, msg: 'connection limit exceeded' }
          : undefined);
    actions.push({ action: 'auth', keyId, accepted: !refusal });
    if (refusal) {
      send(entry.socket, [error(refusal.code, refusal.msg)]);
      // A second connection of a key is closed; a refused key's is left to the client to close.
      if (refusal.code === 406) entry.socket.close();
      return;
    }
    entry.keyId = keyId;
    send(entry.socket, [{ T: 'success', msg: 'authenticated' }]);
  };

  const server = new WebSocketServer({ noServer: true, autoPong: false });
  server.on('connection', (socket, request) => {
    const feed = new URL(request.url ?? '/', 'http://fake').pathname;
    connections += 1;
    if (refuseConnections > 0) {
      refuseConnections -= 1;
      socket.terminate();
      return;
    }
    const entry: DataSocket = { socket, feed, keyId: undefined, trades: new Set(), pending: [] };
    sockets.add(entry);
    socket.on('close', () => sockets.delete(entry));
    // Pongs are the fake's to answer, so a silenced stream falls quiet as a stuck one would.
    socket.on('ping', (data) => {
      if (!isSilent()) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (isSilent()) return;
      let message: { action?: unknown; key?: unknown; secret?: unknown; trades?: unknown };
      try {
        message = JSON.parse((data as Buffer).toString('utf8')) as typeof message;
      } catch {
        return send(socket, [error(400, 'invalid syntax')]);
      }
      if (message.action === 'auth') return authenticate(entry, message.key, message.secret);
      if (message.action !== 'subscribe' && message.action !== 'unsubscribe') return send(socket, [error(400, 'invalid syntax')]);
      if (!entry.keyId) return send(socket, [error(401, 'not authenticated')]);
      const symbols = Array.isArray(message.trades) ? message.trades.filter((symbol): symbol is string => typeof symbol === 'string') : [];
      actions.push({ action: message.action, keyId: entry.keyId, symbols });
      for (const symbol of symbols) {
        if (message.action === 'subscribe') entry.trades.add(symbol);
        else entry.trades.delete(symbol);
      }
      send(socket, [subscriptionOf(entry)]);
    });
    // A stuck server takes the connection and says nothing.
    if (!isSilent()) send(socket, [{ T: 'success', msg: 'connected' }]);
  });

  const flush = (entry: DataSocket) => {
    const trades = entry.pending.splice(0);
    if (trades.length === 0 || entry.socket.readyState !== entry.socket.OPEN) return;
    frameSizes.push(trades.length);
    send(entry.socket, trades);
  };

  return {
    server,
    /** A trade of 100 at the price, to every authenticated subscriber of the symbol (none while silent). */
    print: (symbol: string, price: number) => {
      tradeId += 1;
      const trade: AlpacaDataTrade = { T: 't', S: symbol, i: tradeId, x: 'V', p: price, s: 100, c: ['@'], z: 'C', t: nanosecondStamp(new Date(), tradeId) };
      printed.push(trade);
      if (isSilent()) return;
      for (const entry of sockets) {
        if (!entry.keyId || !(entry.trades.has(symbol) || entry.trades.has('*'))) continue;
        entry.pending.push(trade);
        // The trades printed in one turn of the event loop go out in one frame, as Alpaca batches them.
        if (entry.pending.length === 1) setImmediate(() => flush(entry));
      }
    },
    /** Every trade printed, sent or silenced. */
    printed,
    frameSizes,
    actions,
    get connections() {
      return connections;
    },
    /** Open data stream sockets of the key (authenticated ones), or every open one without a key. */
    socketCount: (keyId?: string) => [...sockets].filter((entry) => keyId === undefined || entry.keyId === keyId).length,
    /** The trade symbols of each of the key's sockets. */
    subscriptionsOf: (keyId: string) => [...sockets].filter((entry) => entry.keyId === keyId).map((entry) => [...entry.trades].sort()),
    /** Drops every data socket; the next `refuseNext` connections are dropped on arrival. */
    drop: (refuseNext = 0) => {
      refuseConnections = refuseNext;
      for (const entry of sockets) entry.socket.terminate();
    },
    /** The next `times` auth messages answer this error, whatever key they carry. */
    failAuthNext: (code = 402, msg = 'auth failed', times = 1) => {
      for (let index = 0; index < times; index += 1) authFaults.push({ code, msg });
    },
    close: () => {
      for (const entry of sockets) entry.socket.terminate();
      server.close();
    },
  };
};
