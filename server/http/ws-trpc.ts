// /trpc's WebSocket: tRPC's own protocol for typed clients, the access token in the connection
// params, under the rules of the channels. A socket whose token checks out is admitted like a
// channel connection (./ws-connections.ts: the per-user cap, heartbeat, token expiry,
// revocation, deactivation, halt, send bound); a socket that has not shown a valid token within
// WS_AUTH_TIMEOUT_SEC is closed (4001), its calls meanwhile answered UNAUTHORIZED by the guard.
// Each socket holds at most WS_MAX_SUBSCRIPTIONS_PER_SOCKET subscriptions, each at most
// WS_MAX_QUEUED_FRAMES behind its reader (beyond, the socket is closed as by a full send buffer,
// 1013), and takes batches of at most TRPC_MAX_BATCH_SIZE calls.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { getWSConnectionHandler } from '@trpc/server/adapters/ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { WS_CLOSE } from '../../contracts/events.ts';
import { wakeAt } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Feeds } from '../events/feeds.ts';
import type { AppRouter } from '../routers/index.ts';
import type { Services } from '../services.ts';
import { createInnerContext, type Context, type SocketScope } from '../trpc/context.ts';
import { toTRPCError } from '../trpc/errors.ts';
import { clientAddressOf } from './proxy.ts';
import { verifyChannelToken, type Connection, type Connections, type VerifiedToken } from './ws-connections.ts';

/** Where typed clients open tRPC's WebSocket protocol. */
export const TRPC_WS_PATH = '/trpc';

/** The close reason of a socket one of whose subscriptions fell more than WS_MAX_QUEUED_FRAMES behind. */
const SUBSCRIPTION_BEHIND = 'Subscription queue full';

interface Close {
  code: number;
  reason: string;
}

/**
 * The socket as tRPC's connection handler sees it: what it sends passes the send bound, and the
 * one close it asks for by itself (after its context could not be made) carries our code.
 */
class TrpcSocket extends EventEmitter {
  /** Set once the token checked out. */
  connection: Connection | undefined;
  /** Why tRPC's context was refused, for the close tRPC asks for after answering. */
  refusal: Close | undefined;
  tokenSeen = false;
  subscriptions = 0;
  readonly ws: WebSocket;
  private readonly sendBufferBytes: number;
  /** Counts a close of a socket never admitted. */
  private readonly closed: (code: number) => void;

  constructor(ws: WebSocket, sendBufferBytes: number, closed: (code: number) => void) {
    super();
    this.ws = ws;
    this.sendBufferBytes = sendBufferBytes;
    this.closed = closed;
    ws.on('message', (data, isBinary) => this.emit('message', data, isBinary));
    ws.once('close', (code, reason) => this.emit('close', code, reason));
  }

  get readyState(): number {
    return this.ws.readyState;
  }

  send(text: string): void {
    if (this.connection) {
      this.connection.send(text);
      return;
    }
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount + Buffer.byteLength(text) > this.sendBufferBytes) this.close(WS_CLOSE.tryAgainLater, 'Send buffer full');
    else this.ws.send(text);
  }

  /** tRPC calls it without a code only when its context failed: a refusal of ours, or connection params it could not read. */
  close(code?: number, reason?: string): void {
    const close = code === undefined ? (this.refusal ?? { code: WS_CLOSE.policy, reason: 'Invalid connection params' }) : { code, reason: reason ?? '' };
    if (this.connection) {
      this.connection.end(close.code, close.reason);
      return;
    }
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.closed(close.code);
    this.ws.close(close.code, close.reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}

export interface TrpcSockets {
  /** Serves a new /trpc socket (its error listener already attached). */
  accept(ws: WebSocket, req: IncomingMessage): void;
}

export interface TrpcSocketsOptions {
  router: AppRouter;
  services: Services;
  connections: Connections;
  feeds: Feeds;
  /** The server the sockets were upgraded by (tRPC's handler options name it; it is not listened to). */
  wss: WebSocketServer;
}

export const createTrpcSockets = ({ router, services, connections, feeds, wss }: TrpcSocketsOptions): TrpcSockets => {
  const { config, logger } = services;
  const log = logger.child({ area: 'ws' });

  const scopeOf = (socket: TrpcSocket): SocketScope => ({
    feeds,
    maxQueuedFrames: config.WS_MAX_QUEUED_FRAMES,
    tooSlow: () => {
      // Subscriptions are authenticated, so their socket was admitted; the close is the same either way.
      if (socket.connection) socket.connection.tooSlow(SUBSCRIPTION_BEHIND, { maxQueuedFrames: config.WS_MAX_QUEUED_FRAMES });
      else socket.close(WS_CLOSE.tryAgainLater, SUBSCRIPTION_BEHIND);
    },
    holdSubscription: (signal) => {
      if (socket.subscriptions >= config.WS_MAX_SUBSCRIPTIONS_PER_SOCKET) {
        throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${config.WS_MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per socket`);
      }
      socket.subscriptions += 1;
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        socket.subscriptions -= 1;
        signal?.removeEventListener('abort', release);
      };
      if (signal?.aborted) release();
      else signal?.addEventListener('abort', release, { once: true });
      return release;
    },
  });

  /** Made once per socket, when its connection params arrive (or at once when none are announced). */
  const contextOf = async (socket: TrpcSocket, req: IncomingMessage, params: Record<string, string | undefined> | null): Promise<Context> => {
    const token = params?.token || undefined;
    const ctx: Context = {
      ...createInnerContext(services, {
        origin: { requestId: `trpc-ws-${randomUUID()}`, address: clientAddressOf(req, config.TRUST_PROXY) },
        authorization: token ? `Bearer ${token}` : undefined,
      }),
      socket: scopeOf(socket),
    };
    if (!token) return ctx;
    socket.tokenSeen = true;
    let verified: VerifiedToken;
    try {
      verified = await verifyChannelToken(services, token);
    } catch (error) {
      // A token that does not check out: every call says so (401) until the socket's time is up.
      if (error instanceof AppError) return ctx;
      socket.refusal = { code: WS_CLOSE.internal, reason: 'Internal error' };
      throw error;
    }
    if (socket.readyState !== socket.ws.OPEN) return ctx;
    const connection = connections.admit(socket.ws, 'trpc', verified);
    if (!connection) {
      socket.refusal = { code: WS_CLOSE.policy, reason: 'Too many connections' };
      // tRPC answers this to the client (a connection error it backs off from), then closes.
      throw toTRPCError(new AppError('RATE_LIMIT_EXCEEDED', 'Too many connections'));
    }
    socket.connection = connection;
    return ctx;
  };

  const handle = getWSConnectionHandler<AppRouter>({
    wss,
    router,
    maxBatchSize: config.TRPC_MAX_BATCH_SIZE,
    createContext: ({ req, res, info }) => contextOf(res as unknown as TrpcSocket, req, info.connectionParams),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error({ err: error, procedure: path }, 'tRPC WebSocket call failed');
    },
  });

  return {
    accept: (ws, req) => {
      const socket = new TrpcSocket(ws, config.WS_SEND_BUFFER_BYTES, (code) => connections.refused('trpc', code));
      // A socket that has not shown a valid token in time goes; its calls were answered 401 meanwhile.
      // The time is the service's clock's, so a test moves past it rather than racing it.
      const { clock } = services;
      const cancelDeadline = wakeAt(clock, new Date(clock.now().getTime() + config.WS_AUTH_TIMEOUT_SEC * 1000), () => {
        if (!socket.connection) socket.close(WS_CLOSE.unauthorized, socket.tokenSeen ? 'Invalid token' : 'Missing token');
      });
      ws.once('close', cancelDeadline);
      handle(socket as unknown as WebSocket, req);
    },
  };
};
