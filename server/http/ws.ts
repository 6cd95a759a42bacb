// The WebSocket endpoints on the HTTP server: /trpc for typed clients (./ws-trpc.ts) and the two
// channels, /ws/equity/orders and /ws/live (./ws-channels.ts), both under the rules of
// ./ws-connections.ts and fed by one set of per-user feeds. Here the upgrade is routed, and each
// socket gets its error listener where it is born: no frame (too large, invalid, early) and no
// socket fault may end the process; ws closes the socket with the frame's code (1009, 1007,
// 1002) and the listener only keeps the error from being thrown.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_CLOSE, WS_PATHS } from '../../contracts/events.ts';
import { createFeeds } from '../events/feeds.ts';
import type { AppRouter } from '../routers/index.ts';
import type { Clock } from '../clock.ts';
import type { Services } from '../services.ts';
import { createChannels, type TChannel } from './ws-channels.ts';
import { createConnections, ignoreSocketError } from './ws-connections.ts';
import { createTrpcSockets, TRPC_WS_PATH } from './ws-trpc.ts';

export { TRPC_WS_PATH };

const CHANNEL_OF_PATH = new Map<string, TChannel>(Object.entries(WS_PATHS).map(([channel, path]) => [path, channel as TChannel]));

/** Client frames on the channels are only keep-alives: anything larger is refused by ws (1009). */
const MAX_CHANNEL_FRAME_BYTES = 4_096;

export interface WebSocketChannels {
  /** Authenticated WebSocket connections open in this process (channels and /trpc). */
  count(): number;
  /** Authenticated WebSocket connections of one user open in this process (channels and /trpc). */
  connectionsOf(userId: number): number;
  /** Closes every connection (1001, going away). */
  close(): Promise<void>;
}

/** `heartbeatClock`: what paces the heartbeat's rounds (./ws-connections.ts); the event loop's timers by default. */
export const attachWebSocketChannels = (server: Server, router: AppRouter, services: Services, heartbeatClock?: Clock): WebSocketChannels => {
  const { config, logger } = services;
  const log = logger.child({ area: 'ws' });
  const connections = createConnections(services, heartbeatClock);
  const feeds = createFeeds({ events: services.events, keys: services.keys, orders: services.orders, bots: services.bots });
  const channels = createChannels({ services, connections, feeds });
  const channelWss = new WebSocketServer({ noServer: true, maxPayload: MAX_CHANNEL_FRAME_BYTES, perMessageDeflate: false });
  // /trpc's socket takes what its HTTP transport takes.
  const trpcWss = new WebSocketServer({ noServer: true, maxPayload: config.BODY_LIMIT_BYTES, perMessageDeflate: false });
  const trpc = createTrpcSockets({ router, services, connections, feeds, wss: trpcWss });

  /** A frame ws refused (it closes the socket with the frame's code) or a socket fault: noted, never thrown. */
  const socketError = (error: Error & { code?: string }) => log.debug({ code: error.code, message: error.message }, 'WebSocket error');

  /** Runs the first steps of a new socket; a failure there closes it (1011), never the process. */
  const born = (ws: WebSocket, start: () => void | Promise<void>) => {
    ws.on('error', socketError);
    const failed = (error: unknown) => {
      log.error({ err: error }, 'WebSocket connect failed');
      if (ws.readyState === ws.OPEN) ws.close(WS_CLOSE.internal, 'Internal error');
    };
    try {
      start()?.catch(failed);
    } catch (error) {
      failed(error);
    }
  };

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
      trpcWss.handleUpgrade(request, socket, head, (ws) => born(ws, () => trpc.accept(ws, request)));
      return;
    }
    const channel = CHANNEL_OF_PATH.get(url.pathname);
    if (!channel) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    channelWss.handleUpgrade(request, socket, head, (ws) => born(ws, () => channels.accept(ws, channel, url.searchParams)));
  };
  server.on('upgrade', upgrade);

  return {
    count: () => connections.count(),
    connectionsOf: (userId) => connections.connectionsOf(userId),
    close: async () => {
      server.off('upgrade', upgrade);
      const closing = connections.close();
      // Sockets never admitted (a /trpc socket still without a valid token, a channel mid-check) go too.
      for (const ws of [...channelWss.clients, ...trpcWss.clients]) if (ws.readyState === ws.OPEN) ws.close(1001, 'Server shutting down');
      await Promise.all([new Promise<void>((resolve) => channelWss.close(() => resolve())), new Promise<void>((resolve) => trpcWss.close(() => resolve()))]);
      for (const ws of closing) ws.terminate();
    },
  };
};
