// What keeps a broker's WebSocket stream alive, whatever it speaks: a watchdog that ends a
// connection when nothing has been heard on it for a silence window (or when a round says it
// should end), the schedule of reconnections (doubling with jitter, the alerts' `retryDelayMs`),
// and the bridge from a connection's callbacks to the async iterator the Broker interface hands
// out. The KIS quote stream is built on it; the Alpaca and ccxt streams take its reconnect
// schedule (their watchdogs read pongs their own way: a ws pong, ccxt's lastPong).
import { retryDelayMs } from '../alerts/backoff.ts';
import { systemClock, wakeAt, type Clock } from '../clock.ts';

export interface ReconnectBackoff {
  /** The first retry's ceiling; each failed attempt doubles it. */
  initialMs: number;
  /** The ceiling never grows past this. */
  maxMs: number;
}

export interface ReconnectRetry {
  attempt: number;
  delayMs: number;
  reason: string;
}

/**
 * The waits between reconnections: `next` counts a failed attempt and answers its wait (doubling
 * from `initialMs`, capped at `maxMs`, jittered in its upper half); `reset` once a connection has
 * got as far as it should, so the next drop starts again from the shortest wait.
 */
export const reconnectSchedule = (backoff: ReconnectBackoff, random: () => number = Math.random) => {
  let attempt = 0;
  return {
    next: (reason: string): ReconnectRetry => {
      attempt += 1;
      return { attempt, delayMs: retryDelayMs(attempt, { baseMs: backoff.initialMs, maxMs: backoff.maxMs }, random()), reason };
    },
    reset: () => void (attempt = 0),
  };
};

export interface SilenceWatchOptions {
  /** The event loop's timers and the wall by default; a test passes a clock it moves. */
  clock?: Clock;
  silenceMs: number;
  /**
   * Run every round (a quarter of the silence) while the connection is not silent: a keepalive
   * (a ping) goes here. Answering a reason ends the watch with it (a connection that should have
   * got somewhere by now).
   */
  onRound: (openForMs: number) => string | undefined;
  /** Told once, with why, when the watch gives the connection up: `silent`, or a round's reason. */
  onGiveUp: (reason: string) => void;
}

/** Watches one connection from now on; `heard` on every sign of life, `stop` when it closes. */
export const watchSilence = (options: SilenceWatchOptions) => {
  const clock = options.clock ?? systemClock();
  const nowMs = () => clock.now().getTime();
  const roundMs = Math.max(10, Math.floor(options.silenceMs / 4));
  const openedAt = nowMs();
  let lastHeardAt = openedAt;
  let cancel = () => {};
  let stopped = false;
  const giveUp = (reason: string) => {
    stopped = true;
    options.onGiveUp(reason);
  };
  const nextRound = () => {
    cancel = wakeAt(clock, new Date(nowMs() + roundMs), () => {
      if (stopped) return;
      if (nowMs() - lastHeardAt > options.silenceMs) return giveUp('silent');
      const reason = options.onRound(nowMs() - openedAt);
      if (reason !== undefined) return giveUp(reason);
      nextRound();
    });
  };
  nextRound();
  return {
    heard: () => void (lastHeardAt = nowMs()),
    /** Whether nothing has been heard for longer than the silence (a close's reason). */
    isSilent: () => nowMs() - lastHeardAt > options.silenceMs,
    stop: () => {
      stopped = true;
      cancel();
    },
  };
};

/** What a running connection is told to hand its items and its one fatal error to. */
export interface StreamSink<T> {
  push(item: T): void;
  fail(error: Error): void;
}

/**
 * The items a connection pushes, as an async iterator, until the signal aborts (it then ends
 * quietly) or the connection fails (it then throws that error once the items before it are read).
 * `start` opens the connection and answers how to stop it; it is stopped however the iterator ends.
 */
export async function* pullFromStream<T>(start: (sink: StreamSink<T>) => () => void, signal: AbortSignal): AsyncGenerator<T> {
  if (signal.aborted) return;
  const queue: T[] = [];
  let fatal: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const stop = start({
    push: (item) => {
      queue.push(item);
      notify();
    },
    fail: (error) => {
      fatal ??= error;
      notify();
    },
  });
  signal.addEventListener('abort', notify, { once: true });
  try {
    while (!signal.aborted) {
      if (queue.length > 0) yield queue.shift() as T;
      else if (fatal) throw fatal;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', notify);
    stop();
  }
}
