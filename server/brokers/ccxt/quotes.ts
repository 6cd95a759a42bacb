// The trade prices of some symbols from ccxt's pro classes (the adapter's `quotes`, the order
// emulator's input): one subscription of every symbol by watchTradesForSymbols where the class
// has it (Binance: one socket, one SUBSCRIBE of `<symbol>@trade` streams), else one watchTrades
// per symbol. Every trade ccxt received is reported once, in its order within its symbol: a
// watch returns only the symbol that woke it, so after each wake every symbol's trades in ccxt's
// cache after the last one reported go out (a trade that came while no watch waited is not left
// until its symbol's next one). Prices are the exchange's own decimal text where its raw trade
// carries it (Binance's `p`), else the shortest text of ccxt's number. Kept alive as the order
// stream is (kept-stream.ts): a watchdog, reconnects backing off with jitter, a fresh pro
// instance for each connection, its sockets ended when the stream stops.
import type { Exchange, Trade } from 'ccxt';
import type { BrokerQuote } from '../types.ts';
import { keepCcxtStream, type CcxtKeptStreamSettings } from './kept-stream.ts';
import { decimalText } from './mapping.ts';

export interface CcxtQuotesOptions extends CcxtKeptStreamSettings {
  /** Our symbols by ccxt's unified symbol (the markets they name checked by `open`). */
  symbols: ReadonlyMap<string, string>;
  /** A fresh pro instance for each connection; it connects on its first watch. Throws BrokerRejectedError for a symbol the exchange does not list. */
  open: () => Promise<{ exchange: Exchange }>;
}

/** The raw trade fields exchanges send the price in as text: Binance's `p`, others' `price` or `px`. */
const RAW_PRICE_FIELDS = ['p', 'price', 'px'] as const;
const DECIMAL = /^\d+(\.\d+)?$/;

/** The exchange's own text of the trade's price: a raw field that reads as the very number ccxt parsed, else ccxt's number as text. */
export const priceTextOf = (trade: Pick<Trade, 'price' | 'info'>): string => {
  const info: unknown = trade.info;
  if (info && typeof info === 'object') {
    for (const field of RAW_PRICE_FIELDS) {
      const raw = (info as Record<string, unknown>)[field];
      if (typeof raw === 'string' && DECIMAL.test(raw) && Number(raw) === trade.price) return raw;
    }
  }
  return decimalText(trade.price);
};

/** ccxt's cache of a pro instance's trades by unified symbol (its types leave the array shape loose). */
const cachedTrades = (exchange: Exchange, symbol: string): readonly Trade[] | undefined => {
  const cached = (exchange.trades as unknown as Record<string, unknown> | undefined)?.[symbol];
  return Array.isArray(cached) ? (cached as Trade[]) : undefined;
};

/** The symbols' trade prices from now on, until the signal aborts; throws only a refusal (a symbol not listed). */
export const streamCcxtQuotes = (options: CcxtQuotesOptions, signal: AbortSignal): AsyncGenerator<BrokerQuote> =>
  keepCcxtStream<{ exchange: Exchange }, BrokerQuote>(
    {
      ...options,
      name: 'trade price stream',
      serving: (emit) => async ({ exchange }, { until, subscribed, heard }) => {
        const unified = [...options.symbols.keys()];
        // A fresh instance's cache is empty: each connection starts over.
        const lastSent = new Map<string, Trade>();
        let on = false;
        /** The trades of `list` after the last one sent of the symbol (all of them when it is not in `list`). */
        const take = (symbol: string, list: readonly Trade[] | undefined, into: BrokerQuote[]) => {
          const ours = options.symbols.get(symbol);
          if (!ours || !list || list.length === 0) return;
          const last = lastSent.get(symbol);
          for (const trade of list.slice(last ? list.lastIndexOf(last) + 1 : 0)) {
            if (trade.price === undefined || !Number.isFinite(trade.price)) continue;
            into.push({ symbol: ours, price: priceTextOf(trade), at: new Date(trade.timestamp ?? Date.now()) });
          }
          lastSent.set(symbol, list.at(-1)!);
        };
        const watch = async (watching: () => Promise<Trade[]>): Promise<never> => {
          for (;;) {
            const woken = await until(watching());
            // ccxt does not surface the subscription's answer: the first trade says the subscription is on.
            if (on) heard();
            else subscribed();
            on = true;
            const quotes: BrokerQuote[] = [];
            const wokenSymbol = woken[0]?.symbol;
            if (wokenSymbol) take(wokenSymbol, woken, quotes);
            for (const symbol of unified) take(symbol, cachedTrades(exchange, symbol), quotes);
            emit(quotes);
          }
        };
        if (exchange.has.watchTradesForSymbols === true) return watch(() => exchange.watchTradesForSymbols(unified));
        // One watch per symbol, together: the first to fail ends the connection.
        return Promise.race(unified.map((symbol) => watch(() => exchange.watchTrades(symbol))));
      },
    },
    signal,
  );
