// The two channels, /ws/equity/orders and /ws/live: each connection is one user's, proven by
// `?token=` at connect, and sends that user's event feed (server/events/feeds.ts) as plain JSON
// frames, under the rules of every authenticated socket (./ws-connections.ts).
import type { WebSocket } from 'ws';
import { WS_CLOSE, ZEventId } from '../../contracts/events.ts';
import type { Feeds } from '../events/feeds.ts';
import type { Services } from '../services.ts';
import { verifyChannelToken, type Connection, type Connections, type VerifiedToken } from './ws-connections.ts';

export type TChannel = 'orders' | 'live';

export interface Channels {
  /** Checks a new channel socket (its error listener already attached), then feeds it. */
  accept(ws: WebSocket, channel: TChannel, query: URLSearchParams): Promise<void>;
}

export const createChannels = ({ services, connections, feeds }: { services: Services; connections: Connections; feeds: Feeds }): Channels => {
  const { logger, halt } = services;
  const log = logger.child({ area: 'ws' });

  /** Starts the user's feed, sending each frame straight to the socket. Holds only the connection. */
  const startFeed = async (connection: Connection, channel: TChannel, afterId: number | undefined) => {
    const options = { user: { id: connection.userId }, afterId, send: (frame: unknown) => connection.send(JSON.stringify(frame)) };
    try {
      const stop = channel === 'orders' ? await feeds.orders(options) : await feeds.live(options);
      // Ended while the feed was starting: then the hook runs at once, and nothing stays subscribed.
      connection.onEnd(stop);
    } catch (error) {
      if (connection.ended) return;
      log.error({ err: error, userId: connection.userId, channel }, 'WebSocket channel failed');
      connection.end(WS_CLOSE.internal, 'Internal error');
    }
  };

  /** The checks of a new connection; the feed then runs on without this frame (or the request) held. */
  const accept = async (ws: WebSocket, channel: TChannel, query: URLSearchParams): Promise<void> => {
    const refuse = (code: number, reason: string) => {
      connections.refused(channel, code);
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
    let verified: VerifiedToken;
    try {
      verified = await verifyChannelToken(services, token);
    } catch {
      if (ws.readyState !== ws.OPEN) return undefined;
      return refuse(WS_CLOSE.unauthorized, 'Invalid token');
    }
    // The client left (or sent a frame that closed it) while the token was checked.
    if (ws.readyState !== ws.OPEN) return undefined;
    const connection = connections.admit(ws, channel, verified);
    if (!connection) return refuse(WS_CLOSE.policy, 'Too many connections');
    // Client text is a keep-alive: ws reads it, and with no 'message' listener it is dropped.
    log.debug({ userId: connection.userId, channel }, 'WebSocket connected');
    void startFeed(connection, channel, afterId);
    return undefined;
  };

  return { accept };
};
