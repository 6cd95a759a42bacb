// The `trade_updates` WebSocket of one Alpaca key: authenticates, listens, and keeps the
// connection alive: a watchdog pings and reconnects when nothing (not even a pong) arrives in
// time, reconnections back off exponentially with jitter, and every reconnection after the first
// connection calls `onReconnect` (where the service reconciles what it may have missed).
import { WebSocket, type RawData } from 'ws';
import { retryDelayMs } from '../../alerts/backoff.ts';
import { systemClock, wakeAt, type Clock } from '../../clock.ts';
import type { Logger } from '../../observability/logger.ts';
import { BrokerRejectedError } from '../types.ts';
import type { AlpacaStreamMessage, AlpacaTradeUpdate } from './wire.ts';

export interface StreamBackoff {
  /** The first retry's ceiling; each failed attempt doubles it. */
  initialMs: number;
  /** The ceiling never grows past this. */
  maxMs: number;
}

export interface StreamRetry {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface TradeUpdatesStreamOptions {
  /** `wss://paper-api.alpaca.markets/stream`, or the fake's ws:// URL. */
  url: string;
  keyId: string;
  secretKey: string;
  /** Reconnect when nothing, not even a pong, has arrived for this many seconds. */
  silenceSeconds: number;
  backoff: StreamBackoff;
  /** Called once the stream listens again after a reconnection (not on the first connection). */
  onReconnect?: () => void | Promise<void>;
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

/** Alpaca sends binary frames on the paper host and text frames elsewhere: both carry JSON text. */
const textOf = (data: RawData): string => {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
};

const messagesOf = (data: RawData): AlpacaStreamMessage[] => {
  const parsed = JSON.parse(textOf(data)) as AlpacaStreamMessage | AlpacaStreamMessage[];
  return Array.isArray(parsed) ? parsed : [parsed];
};

/** Keeps one authenticated, listening connection until stopped; updates go to `onUpdate`. */
const keepConnected = (options: TradeUpdatesStreamOptions, onUpdate: (update: AlpacaTradeUpdate) => void, onFatal: (error: Error) => void) => {
  const silenceMs = options.silenceSeconds * 1_000;
  const random = options.random ?? Math.random;
  const clock = options.watchdogClock ?? systemClock();
  const nowMs = () => clock.now().getTime();
  const roundMs = Math.max(10, Math.floor(silenceMs / 4));
  let stopped = false;
  let attempt = 0;
  let listenedBefore = false;
  let socket: WebSocket | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Connections that got as far as listening to trade_updates. */
  const listening = new WeakSet<WebSocket>();

  const retry = (reason: string) => {
    if (stopped) return;
    attempt += 1;
    // The alerts' schedule: doubling from initialMs, capped at maxMs, jittered in its upper half.
    const delayMs = retryDelayMs(attempt, { baseMs: options.backoff.initialMs, maxMs: options.backoff.maxMs }, random());
    options.onRetry?.({ attempt, delayMs, reason });
    retryTimer = setTimeout(connect, delayMs);
  };

  const handle = (ws: WebSocket, message: AlpacaStreamMessage) => {
    if (message.stream === 'authorization') {
      if (message.data.status === 'authorized') {
        ws.send(JSON.stringify({ action: 'listen', data: { streams: ['trade_updates'] } }));
        return;
      }
      // A refused key stays refused: retrying would only hammer Alpaca.
      stopped = true;
      ws.close();
      onFatal(new BrokerRejectedError('Alpaca refused the key on the trade_updates stream'));
    } else if (message.stream === 'listening') {
      if (!message.data.streams.includes('trade_updates')) {
        ws.terminate();
        return;
      }
      attempt = 0;
      listening.add(ws);
      if (listenedBefore && options.onReconnect) {
        void Promise.resolve()
          .then(options.onReconnect)
          .catch((error: unknown) => options.logger?.warn({ err: error }, 'alpaca: the reconnect hook failed'));
      }
      listenedBefore = true;
    } else if (message.stream === 'trade_updates') {
      onUpdate(message.data);
    }
  };

  function connect() {
    retryTimer = undefined;
    if (stopped) return;
    const ws = new WebSocket(options.url, { handshakeTimeout: silenceMs });
    socket = ws;
    let lastHeardAt = nowMs();
    const heard = () => (lastHeardAt = nowMs());
    const openedAt = nowMs();
    // Alpaca sends no heartbeat of its own: pings several times per silence window keep a quiet
    // healthy stream talking (its pongs), so only a dead or stuck one falls silent. Pongs alone
    // do not make a stream, though: one not listening within the window (its auth or listen
    // unanswered) is ended and tried again, or it would stay open and deaf.
    let stopWatchdog = () => {};
    const nextRound = () => {
      stopWatchdog = wakeAt(clock, new Date(nowMs() + roundMs), () => {
        if (nowMs() - lastHeardAt > silenceMs || (!listening.has(ws) && nowMs() - openedAt > silenceMs)) {
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
      ws.send(JSON.stringify({ action: 'auth', key: options.keyId, secret: options.secretKey }));
    });
    ws.on('pong', () => {
      heard();
      options.onPong?.();
    });
    ws.on('message', (data) => {
      heard();
      let messages: AlpacaStreamMessage[];
      try {
        messages = messagesOf(data);
      } catch {
        options.logger?.warn('alpaca: a trade_updates frame was not JSON; dropped');
        return;
      }
      for (const message of messages) handle(ws, message);
    });
    // 'close' follows every error; the reconnection is decided there.
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      stopWatchdog();
      if (socket === ws) socket = undefined;
      retry(nowMs() - lastHeardAt > silenceMs ? 'silent' : listening.has(ws) ? `closed (${code})` : 'not listening');
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

/** The key's trade updates from now on, until the signal aborts; throws only for a refused key. */
export async function* streamTradeUpdates(options: TradeUpdatesStreamOptions, signal: AbortSignal): AsyncGenerator<AlpacaTradeUpdate> {
  const queue: AlpacaTradeUpdate[] = [];
  let fatal: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  if (signal.aborted) return;
  const connection = keepConnected(
    options,
    (update) => {
      queue.push(update);
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
      const next = queue.shift();
      if (next) yield next;
      else if (fatal) throw fatal;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', notify);
    connection.stop();
  }
}
