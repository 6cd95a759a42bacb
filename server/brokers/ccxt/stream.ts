// Events from ccxt's watchOrders (a WebSocket of the account's order updates), for exchanges
// whose pro class has it; the poller (poller.ts) serves the others. Each update is one order as
// ccxt parsed it, with the trades ccxt attached to it: a trade becomes one fill event named as
// the poller names it (`<exchange>:<symbol>:<trade id>`, so the service drops a fill that both
// paths report), an order that ends canceled, expired or rejected its event. Where an order's
// filled quantity runs ahead of the trades seen (its trades came before this connection, or
// ccxt did not attach one), the missing trades are read by REST (fetchMyTrades) before its next
// events. The connection is kept (kept-stream.ts): a watchdog ends it when nothing (no update, no
// pong) arrives within the silence window, reconnections back off exponentially with jitter, and
// every subscription, the first included, calls `onListening` (where the service reconciles what
// came while nothing was subscribed: an update is sent only to a subscribed stream).
import type { Exchange, Order, Trade } from 'ccxt';
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../../decimal.ts';
import type { BrokerOrder, TBrokerEvent } from '../types.ts';
import { keepCcxtStream, type CcxtKeptStreamSettings } from './kept-stream.ts';
import { fromCcxtOrder, isWorking, ZERO, type CcxtAccountKey, type CcxtMarketView } from './mapping.ts';
import { eventOf, type PolledTrade } from './poller.ts';

/** One connection's exchange (a pro instance) and the markets it reports in. */
export interface CcxtStreamConnection {
  exchange: Exchange;
  market: (symbol: string) => CcxtMarketView | undefined;
}

export interface CcxtStreamOptions extends CcxtKeptStreamSettings {
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
}

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
export const streamCcxtOrders = (options: CcxtStreamOptions, signal: AbortSignal): AsyncGenerator<TBrokerEvent> =>
  keepCcxtStream<CcxtStreamConnection, TBrokerEvent>(
    {
      ...options,
      name: 'order stream',
      serving: (emit) => {
        const accept = createOrderEvents(options, emit);
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
        return async (connection, { until, subscribed, heard }) => {
          const { exchange } = connection;
          // Binance (and most pro classes) subscribe the user data here and answer once it is on.
          const authenticate = (exchange as unknown as { authenticate?: (params?: object) => Promise<unknown> }).authenticate;
          if (authenticate) await until(authenticate.call(exchange));
          subscribed();
          // Updates that came with the subscription's answer, before a watch waited for them, wait in
          // ccxt's cache until the next update: they are taken now (a later return of them adds nothing).
          handle(connection, [...((exchange as unknown as { orders?: Order[] }).orders ?? [])]);
          for (;;) {
            const orders = await until(exchange.watchOrders());
            heard();
            handle(connection, orders);
          }
        };
      },
    },
    signal,
  );
