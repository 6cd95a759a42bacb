// The WebSocket endpoints: /trpc for typed clients (tRPC's own protocol; the access token in the
// connection params), and the two channels, /ws/equity/orders and /ws/live: each connection is one user's,
// proven by `?token=` at connect, and sends that user's event feed (server/events/feeds.ts, the
// source the tRPC subscriptions events.orders and events.live run too) as plain JSON frames. Around it the rules of both: close codes, the per-user cap,
// server pings, a bounded send buffer, and a connection that ends with its right to exist (the
// token expiring, the user deactivated or its tokens ended, a halt).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_CLOSE, WS_PATHS, ZEventId } from '../../contracts/events.ts';
import { startLiveFeed, startOrderFeed, type StopFeed } from '../events/feeds.ts';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { createInnerContext } from '../trpc/context.ts';
import { clientAddressOf } from './proxy.ts';

type TChannel = keyof typeof WS_PATHS;

/** Where typed clients open tRPC's WebSocket protocol. */
export const TRPC_WS_PATH = '/trpc';

const CHANNEL_OF_PATH = new Map<string, TChannel>(Object.entries(WS_PATHS).map(([channel, path]) => [path, channel as TChannel]));

/** Client frames are only keep-alives: anything larger is refused by ws (1009). */
const MAX_CLIENT_FRAME_BYTES = 4_096;
/** Pings a client may leave unanswered; at the next round it is dropped. */
const MISSED_PINGS_ALLOWED = 2;

/** A socket error closes the socket (its 'close' cleans up); the listener only keeps node from throwing. */
const ignoreSocketError = () => undefined;

interface Connection {
  ws: WebSocket;
  channel: TChannel;
  userId: number;
  /** The user's token version when the token was checked: a raised version ends the connection. */
  tokenVersion: number;
  missedPings: number;
  /** Ends the feed, once it has started. */
  stopFeed: StopFeed | undefined;
  /** When the token expires: the heartbeat round after it closes the connection (4001). */
  expiresAt: number;
  closed: boolean;
}

export interface WebSocketChannels {
  /** Connections open in this process. */
  count(): number;
  /** Connections of one user open in this process. */
  connectionsOf(userId: number): number;
  /** Closes every connection (1001, going away) and stops the timers. */
  close(): Promise<void>;
}

export const attachWebSocketChannels = (server: Server, router: AppRouter, services: Services): WebSocketChannels => {
  const { config, logger, metrics, auth, halt, changes } = services;
  const log = logger.child({ area: 'ws' });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES, perMessageDeflate: false });
  const byUser = new Map<number, Set<Connection>>();
  let open = 0;

  const end = (connection: Connection, code: number, reason: string) => {
    if (connection.closed) return;
    connection.closed = true;
    connection.stopFeed?.();
    connection.stopFeed = undefined;
    metrics.wsClosed.labels({ channel: connection.channel, code: String(code) }).inc();
    connection.ws.close(code, reason);
  };

  const forget = (connection: Connection) => {
    const set = byUser.get(connection.userId);
    if (!set?.delete(connection)) return;
    if (set.size === 0) byUser.delete(connection.userId);
    open -= 1;
    metrics.wsConnections.labels({ channel: connection.channel }).dec();
  };

  /** Sends a frame unless the client is so far behind that its buffer would pass the bound. */
  const send = (connection: Connection, frame: unknown) => {
    if (connection.closed) return;
    const text = JSON.stringify(frame);
    if (connection.ws.bufferedAmount + Buffer.byteLength(text) > config.WS_SEND_BUFFER_BYTES) {
      log.warn({ userId: connection.userId, channel: connection.channel, buffered: connection.ws.bufferedAmount }, 'closing a WebSocket that reads too slowly');
      end(connection, WS_CLOSE.tryAgainLater, 'Send buffer full');
      return;
    }
    connection.ws.send(text);
  };

  /** Starts the user's feed, sending each frame straight to the socket. Holds only the connection. */
  const startFeed = async (connection: Connection, afterId: number | undefined) => {
    const deliver = (frame: unknown) => send(connection, frame);
    const options = { events: services.events, user: { id: connection.userId }, afterId, send: deliver };
    try {
      const stop = connection.channel === 'orders' ? await startOrderFeed({ ...options, keys: services.keys }) : await startLiveFeed({ ...options, orders: services.orders, bots: services.bots });
      // Closed while the feed was starting: nothing may stay subscribed for it.
      if (connection.closed) stop();
      else connection.stopFeed = stop;
    } catch (error) {
      if (connection.closed) return;
      log.error({ err: error, userId: connection.userId, channel: connection.channel }, 'WebSocket channel failed');
      end(connection, WS_CLOSE.internal, 'Internal error');
    }
  };

  /** The checks of a new connection; the feed then runs on without this frame (or the request) held. */
  const accept = async (ws: WebSocket, channel: TChannel, query: URLSearchParams): Promise<void> => {
    const refuse = (code: number, reason: string) => {
      metrics.wsClosed.labels({ channel, code: String(code) }).inc();
      ws.close(code, reason);
    };
    if (halt.isHalted()) return refuse(WS_CLOSE.tryAgainLater, 'Service halted');
    const token = query.get('token');
    if (!token) return refuse(WS_CLOSE.unauthorized, 'Missing token');
    let afterId: number | undefined;
    const resumeFrom = query.get('last_event_id');
    if (resumeFrom !== null) {
      const parsed = ZEventId.safeParse(resumeFrom);
      if (!parsed.success) return refuse(WS_CLOSE.policy, 'Invalid last_event_id');
      afterId = Number(parsed.data);
    }
    let verified: Awaited<ReturnType<typeof auth.authenticateToken>>;
    try {
      verified = await auth.authenticateToken(token);
    } catch {
      if (ws.readyState !== ws.OPEN) return undefined;
      return refuse(WS_CLOSE.unauthorized, 'Invalid token');
    }
    // The client left (or sent a frame that closed the socket) while the token was checked.
    if (ws.readyState !== ws.OPEN) return undefined;
    const userId = verified.user.id;
    let connections = byUser.get(userId);
    if ((connections?.size ?? 0) >= config.WS_MAX_CONNECTIONS_PER_USER) return refuse(WS_CLOSE.policy, 'Too many connections');
    if (!connections) byUser.set(userId, (connections = new Set()));
    const connection: Connection = { ws, channel, userId, tokenVersion: verified.user.tokenVersion, missedPings: 0, stopFeed: undefined, expiresAt: verified.expiresAt.getTime(), closed: false };
    connections.add(connection);
    open += 1;
    metrics.wsConnections.labels({ channel }).inc();
    ws.on('pong', () => {
      connection.missedPings = 0;
    });
    // Client text is a keep-alive: ws reads it, and with no 'message' listener it is dropped.
    ws.on('close', () => {
      connection.closed = true;
      connection.stopFeed?.();
      connection.stopFeed = undefined;
      forget(connection);
    });
    log.debug({ userId, channel }, 'WebSocket connected');
    void startFeed(connection, afterId);
    return undefined;
  };

  /** A frame ws refused (it closes the socket with the frame's code) or a socket fault: noted, never thrown. */
  const socketError = (error: Error & { code?: string }) => log.debug({ code: error.code, message: error.message }, 'WebSocket error');

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until ws takes the socket over, no one else listens for its errors (node's own left with the upgrade).
    socket.on('error', ignoreSocketError);
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://localhost');
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (url.pathname === TRPC_WS_PATH) {
      trpcWss.handleUpgrade(request, socket, head, (ws) => {
        ws.on('error', socketError);
        trpcWss.emit('connection', ws, request);
      });
      return;
    }
    const channel = CHANNEL_OF_PATH.get(url.pathname);
    if (!channel) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      // Before anything is awaited: a frame may already be on its way (even with the upgrade
      // request), and an error event without a listener would end the process.
      ws.on('error', socketError);
      accept(ws, channel, url.searchParams).catch((error: unknown) => {
        log.error({ err: error, channel }, 'WebSocket connect failed');
        if (ws.readyState === ws.OPEN) ws.close(WS_CLOSE.internal, 'Internal error');
      });
    });
  };
  // tRPC's WebSocket protocol for typed clients: every call passes the same guard as over HTTP,
  // with the token the client put in its connection params. It takes what its HTTP transport takes.
  const trpcWss = new WebSocketServer({ noServer: true, maxPayload: config.BODY_LIMIT_BYTES, perMessageDeflate: false });
  const trpcHandler = applyWSSHandler({
    wss: trpcWss,
    router,
    keepAlive: { enabled: true, pingMs: config.WS_HEARTBEAT_INTERVAL_SEC * 1000, pongWaitMs: config.WS_HEARTBEAT_INTERVAL_SEC * 1000 },
    createContext: ({ req, info }) => {
      const token = info.connectionParams?.token;
      return createInnerContext(services, {
        origin: { requestId: `trpc-ws-${Date.now().toString(36)}`, address: clientAddressOf(req, config.TRUST_PROXY) },
        authorization: token ? `Bearer ${token}` : undefined,
      });
    },
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error({ err: error, procedure: path }, 'tRPC WebSocket call failed');
    },
  });

  server.on('upgrade', upgrade);

  // One timer for every connection: pings (a client that left MISSED_PINGS_ALLOWED unanswered is
// dropped) and the tokens' expiry.
  const heartbeat = setInterval(() => {
    const now = services.clock.now().getTime();
    for (const connections of byUser.values()) {
      for (const connection of connections) {
        // A connection lives no longer than its token (checked at this round's pace).
        if (connection.expiresAt <= now) {
          end(connection, WS_CLOSE.unauthorized, 'Invalid token');
          continue;
        }
        if (connection.missedPings >= MISSED_PINGS_ALLOWED) {
          log.info({ userId: connection.userId, channel: connection.channel }, 'dropping a WebSocket that stopped answering pings');
          connection.closed = true;
          connection.stopFeed?.();
          connection.stopFeed = undefined;
          metrics.wsClosed.labels({ channel: connection.channel, code: 'heartbeat' }).inc();
          connection.ws.terminate();
          continue;
        }
        connection.missedPings += 1;
        connection.ws.ping();
      }
    }
  }, config.WS_HEARTBEAT_INTERVAL_SEC * 1000);
  heartbeat.unref();

  /** Checks the users of these connections again: a deactivated user or a raised token version ends them (4001). */
  const recheck = (connections: Iterable<Connection>) => {
    for (const connection of connections) {
      services.users.get(connection.userId).then(
        (user) => {
          if (!user?.isActive || user.tokenVersion !== connection.tokenVersion) end(connection, WS_CLOSE.unauthorized, 'Invalid token');
        },
        (error: unknown) => log.warn({ err: error, userId: connection.userId }, 'could not check a WebSocket user again'),
      );
    }
  };
  const stopChanges = changes.subscribe((change) => {
    if (change.kind === 'user') recheck([...(byUser.get(change.id) ?? [])]);
    else if (change.kind === 'resync') recheck([...byUser.values()].flatMap((set) => [...set]));
  });
  const stopHalt = halt.onChange((halted) => {
    if (!halted) return;
    for (const connections of byUser.values()) for (const connection of [...connections]) end(connection, WS_CLOSE.tryAgainLater, 'Service halted');
  });

  return {
    count: () => open,
    connectionsOf: (userId) => byUser.get(userId)?.size ?? 0,
    close: async () => {
      clearInterval(heartbeat);
      stopChanges();
      stopHalt();
      server.off('upgrade', upgrade);
      const closing = [...byUser.values()].flatMap((set) => [...set]);
      for (const connection of closing) end(connection, 1001, 'Server shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      for (const connection of closing) connection.ws.terminate();
      trpcHandler.broadcastReconnectNotification();
      for (const client of trpcWss.clients) client.terminate();
      await new Promise<void>((resolve) => trpcWss.close(() => resolve()));
    },
  };
};
