// Events from ccxt's watchOrders (a WebSocket of the account's order updates), for exchanges
// whose pro class has it; the poller (poller.ts) serves the others. Each update is one order as
// ccxt parsed it, with the trades ccxt attached to it: a trade becomes one fill event named as
// the poller names it (`<exchange>:<symbol>:<trade id>`, so the service drops a fill that both
// paths report), an order that ends canceled, expired or rejected its event. Where an order's
// filled quantity runs ahead of the trades seen (its trades came before this connection, or
// ccxt did not attach one), the missing trades are read by REST (fetchMyTrades) before its next
// events. The connection is kept: a watchdog ends it when nothing (no update, no pong) arrives
// within the silence window, reconnections back off exponentially with jitter, and every
// reconnection calls `onReconnect` (where the service reconciles what the gap may have hidden).
import type { Exchange, Order, Trade } from 'ccxt';
import { EventEmitter, on } from 'node:events';
import type { Decimal } from 'decimal.js';
import { retryDelayMs } from '../../alerts/backoff.ts';
import { systemClock, wakeAt, type Clock } from '../../clock.ts';
import type { Logger } from '../../observability/logger.ts';
import type { StreamBackoff, StreamRetry } from '../alpaca/stream.ts';
import { ExactDecimal } from '../../decimal.ts';
import { pause } from '../pause.ts';
import { BrokerRejectedError, type BrokerOrder, type TBrokerEvent } from '../types.ts';
import { fromCcxtOrder, isWorking, ZERO, type CcxtAccountKey, type CcxtMarketView } from './mapping.ts';
import { eventOf, type PolledTrade } from './poller.ts';

/** One connection's exchange (a pro instance) and the markets it reports in. */
export interface CcxtStreamConnection {
  exchange: Exchange;
  market: (symbol: string) => CcxtMarketView | undefined;
}

export interface CcxtStreamOptions {
  key: CcxtAccountKey;
  /** A fresh pro instance for each connection; it connects on its first watch. */
  open: () => Promise<CcxtStreamConnection>;
  /** A ccxt trade as the poller's trade (decimal strings, the fee in the quote currency). */
  tradeOf: (trade: Trade, symbol: string) => PolledTrade;
  /** The account's trades of a symbol at or after `since` (ms), by REST. */
  trades: (symbol: string, since: number) => Promise<PolledTrade[]>;
  /**
   * Our client order id for an exchange order whose client id is not ours as sent (a digest form
   * of a long id of ours); undefined when it is not known (the order then keeps the exchange's).
   */
  ourClientOrderId?: (order: BrokerOrder) => string | undefined | Promise<string | undefined>;
  /** Told the symbol of every order update (the account's watched symbols, where a client order id is looked up). */
  watch?: (symbol: string) => void;
  /** Reconnect when nothing, not even a pong, has arrived for this many seconds. */
  silenceSeconds: number;
  backoff: StreamBackoff;
  /** Called once the stream is subscribed again after a drop (not on the first connection). */
  onReconnect?: () => void | Promise<void>;
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

/** Orders remembered as finished, so that an update seen twice does not end an order twice. */
const FINISHED_KEPT = 10_000;

interface OrderState {
  /** Trade ids already reported, and their sums. */
  trades: Set<string>;
  filled: Decimal;
  quote: Decimal;
}

/**
 * Turns order updates into events, in order per order: fills from new trades (filled quantity
 * and average price summed from them), then the end of an order that did not fill.
 */
const createOrderEvents = (options: Pick<CcxtStreamOptions, 'key' | 'trades' | 'logger'>, emit: (events: TBrokerEvent[]) => void) => {
  const { key } = options;
  const states = new Map<string, OrderState>();
  const finished = new Set<string>();
  /** Per order, the work still running (a REST catch-up) that its later updates wait behind. */
  const pending = new Map<string, Promise<void>>();

  const eventsOf = (order: BrokerOrder, trades: PolledTrade[], state: OrderState): TBrokerEvent[] => {
    const events: TBrokerEvent[] = [];
    const sorted = [...trades].sort((a, b) => a.at - b.at || a.id.localeCompare(b.id, undefined, { numeric: true }));
    for (const trade of sorted) {
      if (state.trades.has(trade.id)) continue;
      state.trades.add(trade.id);
      state.filled = state.filled.plus(trade.qty);
      state.quote = state.quote.plus(new ExactDecimal(trade.qty).times(trade.price));
      const status = state.filled.gte(order.qty) ? 'filled' : 'partially_filled';
      events.push(
        eventOf(order, key, status === 'filled' ? 'fill' : 'partial_fill', trade.at, {
          status,
          filled_qty: state.filled.toFixed(),
          avg_fill_price: state.quote.dividedBy(state.filled).toDecimalPlaces(12).toFixed(),
          fill: { execution_id: `${key.exchangeId}:${trade.symbol}:${trade.id}`, qty: trade.qty, price: trade.price, fee: trade.fee },
        }),
      );
    }
    if (!isWorking(order.status)) {
      if (order.status !== 'filled') events.push(eventOf(order, key, order.status, order.updatedAt.getTime()));
      else if (state.filled.lt(order.filledQty)) options.logger?.warn({ brokerOrderId: order.brokerOrderId }, 'ccxt stream: a filled order’s trades were not all found; reconciliation settles it');
      states.delete(order.brokerOrderId);
      finished.add(order.brokerOrderId);
      if (finished.size > FINISHED_KEPT) finished.delete(finished.values().next().value!);
    } else states.set(order.brokerOrderId, state);
    return events;
  };

  /** The order's events now, or after reading its missing trades when its filled quantity is ahead of them. */
  const step = (order: BrokerOrder, trades: PolledTrade[]): TBrokerEvent[] | Promise<TBrokerEvent[]> => {
    if (finished.has(order.brokerOrderId)) return [];
    const state = states.get(order.brokerOrderId) ?? { trades: new Set(), filled: ZERO, quote: ZERO };
    const known = trades.filter((trade) => !state.trades.has(trade.id)).reduce((sum, trade) => sum.plus(trade.qty), state.filled);
    if (!new ExactDecimal(order.filledQty).gt(known)) return eventsOf(order, trades, state);
    const exchangeOrderId = order.metadata.exchange_order_id;
    // From a little before the order was made (the exchange's clock and ours may differ slightly).
    return options.trades(order.symbol, order.submittedAt.getTime() - 1_000).then(
      (read) => eventsOf(order, [...trades, ...read.filter((trade) => trade.orderId === exchangeOrderId)], state),
      (error: unknown) => {
        options.logger?.warn({ err: error, brokerOrderId: order.brokerOrderId }, 'ccxt stream: reading an order’s missing trades failed; reconciliation settles it');
        return eventsOf(order, trades, state);
      },
    );
  };

  return (order: BrokerOrder, trades: PolledTrade[]) => {
    const id = order.brokerOrderId;
    const before = pending.get(id);
    const now = before ? undefined : step(order, trades);
    if (Array.isArray(now)) return emit(now);
    const running = (before ? before.then(() => step(order, trades)) : now!).then(emit, (error: unknown) => options.logger?.warn({ err: error, brokerOrderId: id }, 'ccxt stream: an order update could not be read'));
    const settled = running.finally(() => {
      if (pending.get(id) === settled) pending.delete(id);
    });
    pending.set(id, settled);
  };
};

/** The account's order events from now on, until the signal aborts; throws only when the exchange refuses the key. */
export async function* streamCcxtOrders(options: CcxtStreamOptions, signal: AbortSignal): AsyncGenerator<TBrokerEvent> {
  if (signal.aborted) return;
  const silenceMs = options.silenceSeconds * 1_000;
  const random = options.random ?? Math.random;
  const clock = options.watchdogClock ?? systemClock();
  const nowMs = () => clock.now().getTime();
  const roundMs = Math.max(10, Math.floor(silenceMs / 4));
  const stopper = new AbortController();
  const stop = () => stopper.abort();
  signal.addEventListener('abort', stop, { once: true });
  // Batches of events, and the refusal that ends the stream, as the consumer reads them (buffered by `on`).
  const channel = new EventEmitter();
  const accept = createOrderEvents(options, (events) => {
    if (events.length > 0) channel.emit('events', events);
  });

  const refusalOf = (error: unknown): Error | undefined => {
    if (error instanceof BrokerRejectedError) return error;
    if (error instanceof Error && KEY_REFUSALS.has(error.name)) return new BrokerRejectedError(options.scrub(`the exchange refused the key on its order stream: ${error.message}`).slice(0, 400));
    return undefined;
  };

  /** Updates whose client order id is being looked up: later ones wait behind them, so each order's events keep their order. */
  let lookups: Promise<void> = Promise.resolve();
  const asOurs = async (order: BrokerOrder): Promise<BrokerOrder> => {
    const ours = await options.ourClientOrderId?.(order);
    if (ours === undefined || ours === order.clientOrderId) return order;
    return { ...order, clientOrderId: ours, metadata: { ...order.metadata, exchange_client_order_id: order.clientOrderId } };
  };
  const handle = (connection: CcxtStreamConnection, orders: Order[]) => {
    for (const order of orders) {
      const market = connection.market(order.symbol ?? '');
      if (!market) continue;
      options.watch?.(market.symbol);
      // ccxt updates its cached order in place: what this update says is read now.
      const update = fromCcxtOrder(order, market, options.key);
      const trades = (order.trades ?? []).map((trade) => options.tradeOf(trade, market.symbol));
      lookups = lookups.then(async () => {
        let ours = update;
        try {
          ours = await asOurs(update);
        } catch (error) {
          options.logger?.warn({ err: error, brokerOrderId: update.brokerOrderId }, 'ccxt stream: our id of an order could not be read; its update goes with the exchange’s id');
        }
        accept(ours, trades);
      });
    }
  };

  let attempt = 0;
  let subscribedBefore = false;
  /** One connection, until it drops: the reason it dropped. */
  const session = async (): Promise<string> => {
    let connection: CcxtStreamConnection | undefined;
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
    /** The promise, or the drop if it comes first (the promise's own failure then goes unheard). */
    const until = <T>(promise: Promise<T>) => {
      promise.catch(() => undefined);
      if (connection) quiet(connection.exchange);
      return Promise.race([promise, drop]);
    };
    try {
      connection = await until(options.open());
      const { exchange } = connection;
      // Binance (and most pro classes) subscribe the user data here and answer once it is on.
      const authenticate = (exchange as unknown as { authenticate?: (params?: object) => Promise<unknown> }).authenticate;
      if (authenticate) await until(authenticate.call(exchange));
      lastHeardAt = nowMs();
      attempt = 0;
      if (subscribedBefore && options.onReconnect) {
        void Promise.resolve()
          .then(options.onReconnect)
          .catch((error: unknown) => options.logger?.warn({ err: error }, 'ccxt stream: the reconnect hook failed'));
      }
      subscribedBefore = true;
      // Updates that came with the subscription's answer, before a watch waited for them, wait in
      // ccxt's cache until the next update: they are taken now (a later return of them adds nothing).
      handle(connection, [...((exchange as unknown as { orders?: Order[] }).orders ?? [])]);
      for (;;) {
        const orders = await until(exchange.watchOrders());
        lastHeardAt = nowMs();
        handle(connection, orders);
      }
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
        attempt += 1;
        // The alerts' schedule: doubling from initialMs, capped at maxMs, jittered in its upper half.
        const delayMs = retryDelayMs(attempt, { baseMs: options.backoff.initialMs, maxMs: options.backoff.maxMs }, random());
        options.onRetry?.({ attempt, delayMs, reason });
        options.logger?.warn({ reason, attempt, delayMs }, 'ccxt stream: the order stream dropped; reconnecting');
        await pause(delayMs, stopper.signal);
      }
    } catch (error) {
      // Read by the consumer's `on` (none listens once it has stopped).
      if (channel.listenerCount('error') > 0) channel.emit('error', error instanceof Error ? error : new BrokerRejectedError(String(error)));
    }
  })();

  try {
    for await (const [events] of on(channel, 'events', { signal: stopper.signal }) as AsyncIterableIterator<[TBrokerEvent[]]>) yield* events;
  } catch (error) {
    // Stopping ends the reading with an AbortError; anything else is the refusal.
    if (!stopper.signal.aborted) throw error;
  } finally {
    signal.removeEventListener('abort', stop);
    stopper.abort();
    await running;
  }
}
