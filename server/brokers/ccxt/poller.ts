// Events by polling a ccxt exchange, where its order stream is not used (stream.ts: an exchange
// without watchOrders, or BROKER_CRYPTO_STREAM=poll): at an interval the account's trades since
// a cursor are read for each watched symbol, and the open orders are compared with the last reading. A trade
// becomes one fill event named by the exchange's trade id (read again, or by another instance, it
// has the same execution id, and the service drops it); an order that left the open list without
// filling becomes its canceled or expired event. Symbols are watched once seen: in an open order,
// a holding, or an order this process placed (a market order never shows as open).
//
// Reads are weighed against the exchange's budget per calling IP (Binance: open orders of every
// symbol weigh 80, the account 20, against 6,000 a minute; open orders of one symbol weigh 6).
// So the open orders are read symbol by symbol for the watched symbols, and the whole account
// (open orders of every symbol, the holdings: what shows orders and symbols placed elsewhere) is
// swept only every `sweepEvery` readings, or every reading once there are more watched symbols
// than `maxSymbolReads` (where one sweep weighs less than the reads one by one).
import type { Logger } from '../../observability/logger.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BrokerRejectedError, type BrokerOrder, type TBrokerEvent } from '../types.ts';
import { isWorking, type CcxtAccountKey } from './mapping.ts';
import { pause } from '../pause.ts';

/** A trade as the poller needs it (decimal strings). */
export interface PolledTrade {
  id: string;
  orderId: string;
  symbol: string;
  qty: string;
  price: string;
  fee: string;
  at: number;
}

export interface CcxtPollOptions {
  key: CcxtAccountKey;
  intervalMs: number;
  /** Symbols to read trades of: the account's shared set, added to as orders and holdings appear. */
  watched: Set<string>;
  /** Symbols with a non-zero holding (not the quote currency). */
  heldSymbols: () => Promise<string[]>;
  /** The open orders of one symbol, or of every symbol without one. */
  openOrders: (symbol?: string) => Promise<BrokerOrder[]>;
  /** Readings from one sweep of the whole account to the next (default 15: 30 s at 2 s). */
  sweepEvery?: number;
  /** Past this many watched symbols every reading is a sweep (default 8). */
  maxSymbolReads?: number;
  /** The account's trades of a symbol at or after `since` (ms). */
  trades: (symbol: string, since: number) => Promise<PolledTrade[]>;
  /**
   * Orders the account's adapters placed, taken (and emptied) at the start of each reading as if
   * seen open: one the exchange ends before any reading saw it (an IOC that expires, the leg of
   * an OCO the other's fill ends) still gives its end.
   */
  placed?: CcxtPlacedOrders;
  /** The order of a trade or of an order that left the open list, by symbol and exchange id; undefined when not (yet) known as ours. */
  order: (symbol: string, exchangeOrderId: string) => Promise<BrokerOrder | undefined>;
  /** How far back the first reading looks (the service drops what it has by execution id). */
  replayMs: number;
  now: () => number;
  /** Told after every reading; the next waits for what it returns. */
  onPoll?: () => void | Promise<void>;
  logger?: Pick<Logger, 'warn'>;
}


/** The orders placed since the poller's last reading, by broker order id; the oldest let go past `limit` (nobody takes them when events come by stream). */
export interface CcxtPlacedOrders {
  add(order: BrokerOrder): void;
  take(): BrokerOrder[];
}

export const createPlacedOrders = (limit = 1_000): CcxtPlacedOrders => {
  const placed = new Map<string, BrokerOrder>();
  return {
    add: (order) => {
      placed.set(order.brokerOrderId, order);
      if (placed.size > limit) placed.delete(placed.keys().next().value!);
    },
    take: () => {
      const taken = [...placed.values()];
      placed.clear();
      return taken;
    },
  };
};

/** One event of the order as it stands (the stream's events are made the same way). */
export const eventOf = (order: BrokerOrder, key: CcxtAccountKey, type: TBrokerEvent['type'], at: number, overrides: Partial<TBrokerEvent> = {}): TBrokerEvent => ({
  type,
  user_id: key.userId,
  asset_class: 'crypto',
  mode: key.mode,
  broker: key.exchangeId,
  broker_order_id: order.brokerOrderId,
  client_order_id: order.clientOrderId,
  symbol: order.symbol,
  status: order.status,
  filled_qty: order.filledQty,
  avg_fill_price: order.avgFillPrice,
  fill: null,
  reason: order.endReason ?? null,
  at: new Date(at).toISOString(),
  ...overrides,
});

/**
 * The fill events of one order's new trades, oldest first. The order is read after its trades,
 * so its filled quantity includes them all: each trade's cumulative quantity is that less the
 * trades after it (a trade made between the two reads only makes the last cumulative larger, and
 * comes in at the next reading).
 */
export const fillEvents = (order: BrokerOrder, trades: PolledTrade[], key: CcxtAccountKey): TBrokerEvent[] => {
  const sorted = [...trades].sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  let cumulative = new ExactDecimal(order.filledQty);
  const events: TBrokerEvent[] = [];
  for (let index = sorted.length - 1; index >= 0; index -= 1) {
    const trade = sorted[index]!;
    const last = index === sorted.length - 1;
    const status = last ? order.status : 'partially_filled';
    const done = status === 'filled' || !isWorking(status);
    events.unshift(
      eventOf(order, key, last && done && status === 'filled' ? 'fill' : 'partial_fill', trade.at, {
        status,
        filled_qty: cumulative.toFixed(),
        fill: { execution_id: `${key.exchangeId}:${trade.symbol}:${trade.id}`, qty: trade.qty, price: trade.price, fee: trade.fee },
      }),
    );
    cumulative = cumulative.minus(trade.qty);
  }
  return events;
};

/** The account's order events from now on, until the signal aborts; throws only on a refusal (a key the exchange will not take). */
export async function* pollCcxtEvents(options: CcxtPollOptions, signal: AbortSignal): AsyncGenerator<TBrokerEvent> {
  const { key, watched } = options;
  const seenTrades = new Set<string>();
  const cursors = new Map<string, number>();
  let open = new Map<string, BrokerOrder>();
  const startedAt = options.now() - options.replayMs;
  const sweepEvery = options.sweepEvery ?? 15;
  const maxSymbolReads = options.maxSymbolReads ?? 8;

  for (let reading = 0; !signal.aborted; reading += 1) {
    try {
      // The first reading is a sweep: it finds what the account holds and has open.
      const sweep = reading % sweepEvery === 0 || watched.size > maxSymbolReads;
      // Taken before the open orders are read: one placed meanwhile waits for the next reading.
      for (const order of options.placed?.take() ?? []) {
        watched.add(order.symbol);
        if (!open.has(order.brokerOrderId)) open.set(order.brokerOrderId, order);
      }
      let openNow: BrokerOrder[] = [];
      if (sweep) openNow = await options.openOrders();
      // Every symbol with an order in `open` is watched, so reading the watched ones misses none of them.
      else for (const symbol of [...watched]) openNow.push(...(await options.openOrders(symbol)));
      for (const order of openNow) watched.add(order.symbol);
      if (sweep) for (const symbol of await options.heldSymbols()) watched.add(symbol);
      for (const symbol of [...watched]) {
        const since = cursors.get(symbol) ?? startedAt;
        const fresh = (await options.trades(symbol, since)).filter((trade) => !seenTrades.has(`${symbol}:${trade.id}`));
        const byOrder = new Map<string, PolledTrade[]>();
        for (const trade of fresh) byOrder.set(trade.orderId, [...(byOrder.get(trade.orderId) ?? []), trade]);
        /** The oldest trade of an order not known yet (placed with a digest id not recorded yet), read again next time. */
        let heldBack: number | undefined;
        for (const [orderId, trades] of byOrder) {
          const order = await options.order(symbol, orderId);
          if (!order) {
            // Held back only while recent: an order that never becomes known (not the service's) is let go.
            const oldest = Math.min(...trades.map((trade) => trade.at));
            if (options.now() - oldest < options.replayMs) heldBack = Math.min(heldBack ?? oldest, oldest);
            continue;
          }
          for (const event of fillEvents(order, trades, key)) yield event;
          for (const trade of trades) seenTrades.add(`${symbol}:${trade.id}`);
        }
        // The cursor stays on the newest trade's time (inclusive): its id keeps it from coming twice.
        const newest = fresh.reduce((max, trade) => Math.max(max, trade.at), since);
        cursors.set(symbol, heldBack === undefined ? newest : Math.min(newest, heldBack));
      }
      const openIds = new Set(openNow.map((order) => order.brokerOrderId));
      for (const [id, before] of open) {
        if (openIds.has(id)) continue;
        const raw = before.metadata.exchange_order_id;
        const exchangeOrderId = typeof raw === 'string' ? raw : '';
        const after = await options.order(before.symbol, exchangeOrderId);
        if (after && (after.status === 'canceled' || after.status === 'expired' || after.status === 'rejected')) yield eventOf(after, key, after.status, after.updatedAt.getTime());
      }
      open = new Map(openNow.map((order) => [order.brokerOrderId, order]));
    } catch (error) {
      if (error instanceof BrokerRejectedError) throw error;
      // Unavailable: the next reading tries again from the same cursors; nothing is lost.
      options.logger?.warn({ err: error }, 'ccxt: reading the account failed; trying again at the next interval');
    }
    await options.onPoll?.();
    await pause(options.intervalMs, signal);
  }
}
