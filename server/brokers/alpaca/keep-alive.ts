// One WebSocket to Alpaca kept alive for the protocol spoken over it (the trade_updates stream, the
// market data stream): a watchdog pings and reconnects when nothing (not even a pong) arrives in
// time, reconnections back off exponentially with jitter, and every connection that gets as far as
// ready (the first one included) calls `onListening`. What the protocol reads comes out as an
// async iterator, until the signal aborts or the protocol meets a refusal that retrying would not
// cure.
import { WebSocket, type RawData } from 'ws';
import { systemClock, wakeAt, type Clock } from '../../clock.ts';
import type { Logger } from '../../observability/logger.ts';
import { reconnectSchedule, type ReconnectBackoff, type ReconnectRetry } from '../stream-keepalive.ts';

/** Every broker stream's reconnect schedule (stream-keepalive.ts), by the names Alpaca's streams gave it first. */
export type StreamBackoff = ReconnectBackoff;
export type StreamRetry = ReconnectRetry;

/** How a stream is watched and retried: the same for every Alpaca stream. */
export interface KeepAliveOptions {
  /** The stream's ws(s) URL (Alpaca's, or the fake's). */
  url: string;
  /** Reconnect when nothing, not even a pong, has arrived for this many seconds. */
  silenceSeconds: number;
  backoff: StreamBackoff;
  /**
   * Called each time a connection is ready, the first one included: what the server sent before
   * (while no connection listened) it never sends again, so the caller looks for it then.
   */
  onListening?: () => void | Promise<void>;
  /** Told each scheduled reconnection, before its wait. */
  onRetry?: (retry: StreamRetry) => void;
  /** The jitter's source, [0, 1). */
  random?: () => number;
  logger?: Pick<Logger, 'warn'>;
  /**
   * What paces the watchdog's rounds and measures the silences: the event loop's timers and the
   * wall by default; a test passes a clock it moves, and each move across a round's instant runs it.
   */
  watchdogClock?: Clock;
  /** Told each pong, once it counts as heard (a test moving the watchdog's clock waits on it). */
  onPong?: () => void;
}

/** What one connection offers the protocol spoken on it. */
export interface StreamConnection<T> {
  /** Sends one JSON message. */
  send(message: unknown): void;
  /** The stream is set up (authorized, and listening or subscribed): the backoff starts over. */
  ready(): void;
  /** Hands one item to the iterator's reader. */
  deliver(item: T): void;
  /** Ends this connection; the next is tried after the backoff. */
  drop(): void;
  /** Ends the whole stream with this error: a refusal retrying would not cure (a bad key). */
  fail(error: Error): void;
}

export interface StreamProtocol<M, T> {
  /** Names the stream in retries and logs. */
  name: string;
  /** One frame's messages; throws on a frame that is not the protocol's. */
  parse(text: string): M[];
  /** The socket is open (where the client speaks first, it authenticates here). */
  opened?(connection: StreamConnection<T>): void;
  handle(message: M, connection: StreamConnection<T>): void;
}

/** Alpaca sends binary frames on the paper host and text frames elsewhere: both carry JSON text. */
const textOf = (data: RawData): string => {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
};

/** Keeps one ready connection until stopped; items go to `onItem`, an incurable refusal to `onFatal`. */
const keepConnected = <M, T>(options: KeepAliveOptions, protocol: StreamProtocol<M, T>, onItem: (item: T) => void, onFatal: (error: Error) => void) => {
  const silenceMs = options.silenceSeconds * 1_000;
  const random = options.random ?? Math.random;
  const clock = options.watchdogClock ?? systemClock();
  const nowMs = () => clock.now().getTime();
  const roundMs = Math.max(10, Math.floor(silenceMs / 4));
  let stopped = false;
  const schedule = reconnectSchedule(options.backoff, random);
  let socket: WebSocket | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Connections that got as far as ready. */
  const ready = new WeakSet<WebSocket>();

  const retry = (reason: string) => {
    if (stopped) return;
    const next = schedule.next(reason);
    options.onRetry?.(next);
    retryTimer = setTimeout(connect, next.delayMs);
  };

  const connectionOf = (ws: WebSocket): StreamConnection<T> => ({
    send: (message) => ws.send(JSON.stringify(message)),
    ready: () => {
      if (ready.has(ws)) return;
      schedule.reset();
      ready.add(ws);
      // Off the delivery path: the hook's work (a reconciliation) never holds the items back.
      if (options.onListening) {
        void Promise.resolve()
          .then(options.onListening)
          .catch((error: unknown) => options.logger?.warn({ err: error }, `alpaca: the ${protocol.name} listening hook failed`));
      }
    },
    deliver: onItem,
    drop: () => ws.terminate(),
    fail: (error) => {
      // A refused key stays refused: retrying would only hammer Alpaca.
      stopped = true;
      ws.close();
      onFatal(error);
    },
  });

  function connect() {
    retryTimer = undefined;
    if (stopped) return;
    const ws = new WebSocket(options.url, { handshakeTimeout: silenceMs });
    const connection = connectionOf(ws);
    socket = ws;
    let lastHeardAt = nowMs();
    const heard = () => (lastHeardAt = nowMs());
    const openedAt = nowMs();
    // Alpaca sends no heartbeat of its own: pings several times per silence window keep a quiet
    // healthy stream talking (its pongs), so only a dead or stuck one falls silent. Pongs alone
    // do not make a stream, though: one not ready within the window (its auth, listen or
    // subscription unanswered) is ended and tried again, or it would stay open and deaf.
    let stopWatchdog = () => {};
    const nextRound = () => {
      stopWatchdog = wakeAt(clock, new Date(nowMs() + roundMs), () => {
        if (nowMs() - lastHeardAt > silenceMs || (!ready.has(ws) && nowMs() - openedAt > silenceMs)) {
          ws.terminate();
          return;
        }
        if (ws.readyState === WebSocket.OPEN) ws.ping();
        nextRound();
      });
    };
    nextRound();
    ws.on('open', () => {
      heard();
      protocol.opened?.(connection);
    });
    ws.on('pong', () => {
      heard();
      options.onPong?.();
    });
    ws.on('message', (data) => {
      heard();
      let messages: M[];
      try {
        messages = protocol.parse(textOf(data));
      } catch {
        options.logger?.warn(`alpaca: a ${protocol.name} frame was not its JSON; dropped`);
        return;
      }
      for (const message of messages) {
        if (stopped) return;
        protocol.handle(message, connection);
      }
    });
    // 'close' follows every error; the reconnection is decided there.
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      stopWatchdog();
      if (socket === ws) socket = undefined;
      retry(nowMs() - lastHeardAt > silenceMs ? 'silent' : ready.has(ws) ? `closed (${code})` : 'not listening');
    });
  }

  connect();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(retryTimer);
      socket?.terminate();
    },
  };
};

/** The protocol's items from now on, until the signal aborts; throws only what the protocol fails with. */
export async function* keepStreaming<M, T>(options: KeepAliveOptions, protocol: StreamProtocol<M, T>, signal: AbortSignal): AsyncGenerator<T> {
  const queue: T[] = [];
  let fatal: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  if (signal.aborted) return;
  const connection = keepConnected(
    options,
    protocol,
    (item) => {
      queue.push(item);
      notify();
    },
    (error) => {
      fatal = error;
      notify();
    },
  );
  signal.addEventListener('abort', notify, { once: true });
  try {
    while (!signal.aborted) {
      // An item read before the refusal is still the reader's; queue.length, as an item may be falsy.
      if (queue.length > 0) yield queue.shift()!;
      else if (fatal) throw fatal;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', notify);
    connection.stop();
  }
}
