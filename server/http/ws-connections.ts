// The rules every authenticated WebSocket lives by, whatever it speaks (a channel or tRPC's
// protocol on /trpc): the per-user cap, one heartbeat timer for all (pings, and the token's
// expiry), the bound on what waits to be sent, and an end with its right to exist: the user
// deactivated or its tokens ended (4001), a halt (1013).
import type { WebSocket } from 'ws';
import { WS_CLOSE } from '../../contracts/events.ts';
import { systemClock, wakeAt, type Clock } from '../clock.ts';
import type { Services } from '../services.ts';
import { isApiKey } from '../auth/api-keys.ts';

/** What a socket speaks: one of the two channels, or tRPC's protocol. Also its metrics label. */
export type TSocketKind = 'orders' | 'live' | 'trpc';

/** Pings a client may leave unanswered; at the next round it is dropped. */
const MISSED_PINGS_ALLOWED = 2;

/** A socket error closes the socket (its 'close' cleans up); the listener only keeps ws from throwing. */
export const ignoreSocketError = () => undefined;

export interface Connection {
  readonly kind: TSocketKind;
  readonly userId: number;
  readonly ws: WebSocket;
  /** Sends text unless the reader is so far behind that its buffer would pass the bound: then it is ended as too slow. */
  send(text: string): void;
  /** Ends a reader that fell too far behind (1013 with `reason`), logged once at warn with what it fell behind by. */
  tooSlow(reason: string, detail: Record<string, number | string>): void;
  /** Closes with a code (once); the onEnd hooks run first. */
  end(code: number, reason: string): void;
  /** Runs once when the connection ends, however it ends (by either side, or dropped). */
  onEnd(hook: () => void): void;
  readonly ended: boolean;
}

export interface VerifiedToken {
  user: { id: number; tokenVersion: number };
  expiresAt: Date;
  /** The personal API key the channel was opened with, checked again with its user. */
  keyId?: string | undefined;
}

/** A channel's credential checked: an access token, or a personal API key with the read scope. */
export const verifyChannelToken = (services: Pick<Services, 'auth' | 'apiKeys'>, token: string): Promise<VerifiedToken> =>
  isApiKey(token) ? services.apiKeys.channelCaller(token) : services.auth.authenticateToken(token);

export interface Connections {
  /** Admits a socket whose token was just checked; undefined past the user's cap (the caller refuses it, 1008). */
  admit(ws: WebSocket, kind: TSocketKind, verified: VerifiedToken): Connection | undefined;
  /** Counts a socket closed before it was admitted (a refusal), under its kind and code. */
  refused(kind: TSocketKind, code: number): void;
  /** Connections open in this process. */
  count(): number;
  /** Connections of one user open in this process. */
  connectionsOf(userId: number): number;
  /** Ends every connection (1001, going away), stops the timer and the listeners; returns what was ended. */
  close(): WebSocket[];
}

interface Entry extends Connection {
  tokenVersion: number;
  keyId: string | undefined;
  expiresAt: number;
  missedPings: number;
  hooks: (() => void)[];
  ended: boolean;
}

/**
 * `heartbeatClock` paces the heartbeat's rounds, WS_HEARTBEAT_INTERVAL_SEC apart: the event
 * loop's timers by default; a test passes a clock it moves, and each move across a round's
 * instant runs that round (the token's expiry is still judged by the service's clock).
 */
export const createConnections = (services: Services, heartbeatClock: Clock = systemClock()): Connections => {
  const { config, logger, metrics, halt, changes } = services;
  const log = logger.child({ area: 'ws' });
  const byUser = new Map<number, Set<Entry>>();
  let open = 0;

  /** Runs the hooks once; the socket itself is closed (or was) by the caller. */
  const finish = (entry: Entry) => {
    if (entry.ended) return false;
    entry.ended = true;
    for (const hook of entry.hooks.splice(0)) {
      try {
        hook();
      } catch (error) {
        log.error({ err: error, userId: entry.userId, kind: entry.kind }, 'ending a WebSocket failed');
      }
    }
    return true;
  };

  const forget = (entry: Entry) => {
    const set = byUser.get(entry.userId);
    if (!set?.delete(entry)) return;
    if (set.size === 0) byUser.delete(entry.userId);
    open -= 1;
    metrics.wsConnections.labels({ channel: entry.kind }).dec();
  };

  const admit: Connections['admit'] = (ws, kind, verified) => {
    const userId = verified.user.id;
    let set = byUser.get(userId);
    if ((set?.size ?? 0) >= config.WS_MAX_CONNECTIONS_PER_USER) return undefined;
    if (!set) byUser.set(userId, (set = new Set()));
    const entry: Entry = {
      kind,
      userId,
      ws,
      tokenVersion: verified.user.tokenVersion,
      keyId: verified.keyId,
      expiresAt: verified.expiresAt.getTime(),
      missedPings: 0,
      hooks: [],
      ended: false,
      send: (text) => {
        if (entry.ended) return;
        if (ws.bufferedAmount + Buffer.byteLength(text) > config.WS_SEND_BUFFER_BYTES) {
          entry.tooSlow('Send buffer full', { buffered: ws.bufferedAmount });
          return;
        }
        ws.send(text);
      },
      tooSlow: (reason, detail) => {
        if (entry.ended) return;
        log.warn({ userId, kind, reason, ...detail }, 'closing a WebSocket that reads too slowly');
        entry.end(WS_CLOSE.tryAgainLater, reason);
      },
      end: (code, reason) => {
        if (!finish(entry)) return;
        metrics.wsClosed.labels({ channel: kind, code: String(code) }).inc();
        ws.close(code, reason);
      },
      onEnd: (hook) => {
        if (entry.ended) hook();
        else entry.hooks.push(hook);
      },
    };
    set.add(entry);
    open += 1;
    metrics.wsConnections.labels({ channel: kind }).inc();
    ws.on('pong', () => {
      entry.missedPings = 0;
    });
    ws.once('close', () => {
      finish(entry);
      forget(entry);
    });
    return entry;
  };

  // One timer for every connection: pings (a client that left MISSED_PINGS_ALLOWED unanswered is
  // dropped) and the tokens' expiry.
  const round = () => {
    const now = services.clock.now().getTime();
    for (const set of byUser.values()) {
      for (const entry of [...set]) {
        try {
          // A connection lives no longer than its token (checked at this round's pace).
          if (entry.expiresAt <= now) {
            entry.end(WS_CLOSE.unauthorized, 'Invalid token');
            continue;
          }
          if (entry.missedPings >= MISSED_PINGS_ALLOWED) {
            log.info({ userId: entry.userId, kind: entry.kind }, 'dropping a WebSocket that stopped answering pings');
            if (finish(entry)) metrics.wsClosed.labels({ channel: entry.kind, code: 'heartbeat' }).inc();
            entry.ws.terminate();
            continue;
          }
          entry.missedPings += 1;
          entry.ws.ping();
        } catch (error) {
          // One socket's failure must not stop the round (nor, thrown from a timer, the process).
          log.warn({ err: error, userId: entry.userId, kind: entry.kind }, 'heartbeat failed for a WebSocket');
          entry.ws.terminate();
        }
      }
    }
  };
  // Each round is asked for when the last one ran (a wake-up never keeps the process running).
  let stopHeartbeat: () => void = () => undefined;
  const nextRound = () => {
    stopHeartbeat = wakeAt(heartbeatClock, new Date(heartbeatClock.now().getTime() + config.WS_HEARTBEAT_INTERVAL_SEC * 1000), () => {
      round();
      nextRound();
    });
  };
  nextRound();

  /** Checks the users of these connections again: a deactivated user, a raised token version or a revoked key ends them (4001). */
  const recheck = (entries: Iterable<Entry>) => {
    for (const entry of entries) {
      Promise.all([services.users.get(entry.userId), entry.keyId === undefined ? true : services.apiKeys.stillValid(entry.keyId)]).then(
        ([user, keyValid]) => {
          if (!user?.isActive || user.tokenVersion !== entry.tokenVersion || !keyValid) entry.end(WS_CLOSE.unauthorized, 'Invalid token');
        },
        (error: unknown) => log.warn({ err: error, userId: entry.userId }, 'could not check a WebSocket user again'),
      );
    }
  };
  const all = () => [...byUser.values()].flatMap((set) => [...set]);
  const stopChanges = changes.subscribe((change) => {
    if (change.kind === 'user') recheck([...(byUser.get(change.id) ?? [])]);
    else if (change.kind === 'resync') recheck(all());
  });
  const stopHalt = halt.onChange((halted) => {
    if (!halted) return;
    for (const entry of all()) entry.end(WS_CLOSE.tryAgainLater, 'Service halted');
  });

  return {
    admit,
    refused: (kind, code) => metrics.wsClosed.labels({ channel: kind, code: String(code) }).inc(),
    count: () => open,
    connectionsOf: (userId) => byUser.get(userId)?.size ?? 0,
    close: () => {
      stopHeartbeat();
      stopChanges();
      stopHalt();
      const closing = all();
      for (const entry of closing) entry.end(1001, 'Server shutting down');
      return closing.map((entry) => entry.ws);
    },
  };
};
