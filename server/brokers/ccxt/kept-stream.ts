// A stream over ccxt's pro (WebSocket) classes kept alive: the order stream (stream.ts) and the
// trade price stream (quotes.ts) both run here. Each connection is a fresh pro instance that its
// stream serves until it drops; a watchdog drops it when nothing (no message, no pong) arrived
// within the silence window, reconnections back off exponentially with jitter, and a refusal
// (the exchange refuses the key, a symbol it does not list) ends the stream with that error.
// What the stream yields reaches its consumer in order through an emitter (buffered by `on`).
import type { Exchange } from 'ccxt';
import { EventEmitter, on } from 'node:events';
import { systemClock, wakeAt, type Clock } from '../../clock.ts';
import type { Logger } from '../../observability/logger.ts';
import { reconnectSchedule, type ReconnectBackoff as StreamBackoff, type ReconnectRetry as StreamRetry } from '../stream-keepalive.ts';
import { pause } from '../pause.ts';
import { BrokerRejectedError } from '../types.ts';

/** What every kept stream is told: its watchdog, backoff and hooks. */
export interface CcxtKeptStreamSettings {
  /** Reconnect when nothing, not even a pong, has arrived for this many seconds. */
  silenceSeconds: number;
  backoff: StreamBackoff;
  /**
   * Called each time a connection is subscribed, the first one included: what the exchange sent
   * before (while no connection was subscribed) it never sends again, so the caller looks for it then.
   */
  onListening?: () => void | Promise<void>;
  /** Told each scheduled reconnection, before its wait. */
  onRetry?: (retry: StreamRetry) => void;
  /** The jitter's source, [0, 1). */
  random?: () => number;
  /** Takes the secret out of a message. */
  scrub: (text: string) => string;
  logger?: Pick<Logger, 'warn'>;
  /**
   * What paces the watchdog's rounds and measures the silences: the event loop's timers and the
   * wall by default; a test passes a clock it moves, and each move across a round's instant runs it.
   */
  watchdogClock?: Clock;
}

/** One connection as its stream serves it. */
export interface CcxtStreamSession {
  /** The promise, or the connection's drop if it comes first (the promise's own failure then goes unheard). */
  until: <R>(promise: Promise<R>) => Promise<R>;
  /** The subscription is on: the backoff starts over, and the listening hook is called. */
  subscribed: () => void;
  /** Something arrived: the watchdog's silence starts over. */
  heard: () => void;
}

export interface CcxtKeptStreamOptions<C extends { exchange: Exchange }, T> extends CcxtKeptStreamSettings {
  /** Names the stream in logs and in a refusal's message ("order stream"). */
  name: string;
  /** A fresh pro instance for each connection; it connects on its first watch. */
  open: () => Promise<C>;
  /**
   * Serves one connection once it is open: subscribes, then reads until a wait fails. Made once
   * per stream, with the emit that hands items to the consumer in order (work that outlives a
   * connection emits through it too).
   */
  serving: (emit: (items: T[]) => void) => (connection: C, session: CcxtStreamSession) => Promise<never>;
}

/** ccxt's errors that say the key itself is refused: retrying would only hammer the exchange. */
const KEY_REFUSALS = new Set(['AuthenticationError', 'PermissionDenied', 'AccountSuspended', 'AccountNotEnabled']);

class Dropped extends Error {
  override readonly name = 'Dropped';
}

/** What ccxt's WebSocket clients expose that the watchdog reads (its own types leave them out). */
type WsClients = Record<string, { lastPong?: number; connection?: { terminate?: () => void }; futures?: Record<string, Promise<unknown>> } | undefined>;
const clientsOf = (exchange: Exchange) => (exchange as unknown as { clients?: WsClients }).clients ?? {};
const lastPongOf = (exchange: Exchange) => Math.max(0, ...Object.values(clientsOf(exchange)).map((client) => client?.lastPong ?? 0));
/**
 * ccxt makes futures nobody awaits (Binance's subscription makes one ahead of its request for
 * concurrent callers) and rejects them all when a socket fails: they are marked handled here, as
 * the failure reaches the stream through what it awaits.
 */
const quiet = (exchange: Exchange) => {
  for (const client of Object.values(clientsOf(exchange))) for (const future of Object.values(client?.futures ?? {})) future.catch(() => undefined);
};
/** Ends the sockets at once (a close handshake would wait on a stuck peer); ccxt rejects what waited on them. */
const terminate = (exchange: Exchange) => {
  for (const client of Object.values(clientsOf(exchange))) client?.connection?.terminate?.();
};

/** What the stream yields, from now on, until the signal aborts; throws only a refusal. */
export async function* keepCcxtStream<C extends { exchange: Exchange }, T>(options: CcxtKeptStreamOptions<C, T>, signal: AbortSignal): AsyncGenerator<T> {
  if (signal.aborted) return;
  const silenceMs = options.silenceSeconds * 1_000;
  const random = options.random ?? Math.random;
  const clock = options.watchdogClock ?? systemClock();
  const nowMs = () => clock.now().getTime();
  const roundMs = Math.max(10, Math.floor(silenceMs / 4));
  const stopper = new AbortController();
  const stop = () => stopper.abort();
  signal.addEventListener('abort', stop, { once: true });
  // Batches of items, and the refusal that ends the stream, as the consumer reads them.
  const channel = new EventEmitter();
  const serve = options.serving((items) => {
    if (items.length > 0) channel.emit('items', items);
  });

  const refusalOf = (error: unknown): Error | undefined => {
    if (error instanceof BrokerRejectedError) return error;
    if (error instanceof Error && KEY_REFUSALS.has(error.name)) return new BrokerRejectedError(options.scrub(`the exchange refused the key on its ${options.name}: ${error.message}`).slice(0, 400));
    return undefined;
  };

  const schedule = reconnectSchedule(options.backoff, random);
  /** One connection, until it drops: the reason it dropped. */
  const session = async (): Promise<string> => {
    let connection: C | undefined;
    let lastHeardAt = nowMs();
    let dropped: (reason: string) => void = () => undefined;
    const drop = new Promise<never>((_, reject) => (dropped = (reason) => reject(new Dropped(reason))));
    drop.catch(() => undefined);
    const onStop = () => dropped('stopped');
    stopper.signal.addEventListener('abort', onStop, { once: true });
    if (stopper.signal.aborted) onStop();
    // ccxt stamps its pongs with the wall's time: a round that sees a new one counts it as heard
    // that long before the round (the very instant, on the wall's clock).
    let pongSeen = 0;
    let pongHeardAt = 0;
    let stopWatchdog = () => {};
    const nextRound = () => {
      stopWatchdog = wakeAt(clock, new Date(nowMs() + roundMs), () => {
        const pong = connection ? lastPongOf(connection.exchange) : 0;
        if (pong > pongSeen) {
          pongSeen = pong;
          pongHeardAt = nowMs() - Math.max(0, Date.now() - pong);
        }
        if (nowMs() - Math.max(lastHeardAt, pongHeardAt) > silenceMs) dropped('silent');
        else nextRound();
      });
    };
    nextRound();
    const until = <R>(promise: Promise<R>) => {
      promise.catch(() => undefined);
      if (connection) quiet(connection.exchange);
      return Promise.race([promise, drop]);
    };
    const heard = () => void (lastHeardAt = nowMs());
    const subscribed = () => {
      heard();
      schedule.reset();
      // Off the delivery path: the hook's work (a reconciliation) never holds the items back.
      if (options.onListening) {
        void Promise.resolve()
          .then(options.onListening)
          .catch((error: unknown) => options.logger?.warn({ err: error }, `ccxt stream: the ${options.name}'s listening hook failed`));
      }
    };
    try {
      connection = await until(options.open());
      return await serve(connection, { until, subscribed, heard });
    } catch (error) {
      if (error instanceof Dropped) return error.message;
      const refusal = refusalOf(error);
      if (refusal) throw refusal;
      return options.scrub(error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 400);
    } finally {
      stopWatchdog();
      stopper.signal.removeEventListener('abort', onStop);
      if (connection) terminate(connection.exchange);
    }
  };

  const running = (async () => {
    try {
      while (!stopper.signal.aborted) {
        const reason = await session();
        if (stopper.signal.aborted) break;
        const next = schedule.next(reason);
        options.onRetry?.(next);
        options.logger?.warn({ reason, attempt: next.attempt, delayMs: next.delayMs }, `ccxt stream: the ${options.name} dropped; reconnecting`);
        await pause(next.delayMs, stopper.signal);
      }
    } catch (error) {
      // Read by the consumer's `on` (none listens once it has stopped).
      if (channel.listenerCount('error') > 0) channel.emit('error', error instanceof Error ? error : new BrokerRejectedError(String(error)));
    }
  })();

  try {
    for await (const [items] of on(channel, 'items', { signal: stopper.signal }) as AsyncIterableIterator<[T[]]>) yield* items;
  } catch (error) {
    // Stopping ends the reading with an AbortError; anything else is the refusal.
    if (!stopper.signal.aborted) throw error;
  } finally {
    signal.removeEventListener('abort', stop);
    stopper.abort();
    await running;
  }
}
