// The fake Binance's spot market streams (stream.binance.com), the part ccxt's pro `binance`
// class uses for public trades (watchTrades, watchTradesForSymbols): raw streams at `/ws` and
// `/ws/<streamName>` (ccxt connects to `/ws/<n>` and subscribes by frames), combined streams at
// `/stream?streams=a/b` whose events are wrapped as `{stream, data}`. Requests as Binance
// documents them: SUBSCRIBE and UNSUBSCRIBE (`{"result":null,"id":..}`), LIST_SUBSCRIPTIONS;
// the only streams are `<symbol>@trade` of a listed symbol (anything else is refused with code
// 2, as the fake serves nothing else). Every price set in the books is a trade sent to the
// sockets subscribed to its symbol: `{"e":"trade","E":..,"s":"BTCUSDT","t":..,"p":"50000.00000000",
// "q":..,"T":..,"m":false,"M":true}`, trade ids counted per symbol, prices in 8 places. Faults
// (binance-sockets.ts): drop the sockets (and refuse the next connections), or silence them.
import type { IncomingMessage } from 'node:http';
import type { FakeBinanceBooks, FakeBinancePriceSet } from './binance-books.ts';
import { binanceDecimal, createFakeBinanceSockets, type FakeBinanceSocket } from './binance-sockets.ts';

/** The market streams' paths: raw (`/ws`, `/ws/<name>`) and combined (`/stream`). */
export const isFakeBinanceMarketStreamPath = (path: string) => path === '/ws' || path.startsWith('/ws/') || path === '/stream';

/** The quantity of every trade the fake reports (a price set has none). */
const TRADE_QTY = '0.001';

interface StreamState {
  /** The streams this socket is subscribed to. */
  streams: Set<string>;
  /** Combined payloads (`/stream`): events wrapped as `{stream, data}`. */
  combined: boolean;
}

interface StreamRequest {
  method?: unknown;
  params?: unknown;
  id?: unknown;
}

/** One sent trade, as a test reads it back. */
export interface FakeBinanceMarketTrade {
  stream: string;
  t: number;
  p: string;
  T: number;
}

export const createFakeBinanceMarketStreams = (books: FakeBinanceBooks) => {
  const listed = () => new Set(books.markets().map((market) => `${market.symbol.toLowerCase()}@trade`));
  const sent: FakeBinanceMarketTrade[] = [];
  const nextTradeIds = new Map<string, number>();

  /** The valid trade streams among `names`, or the first name the fake does not serve. */
  const streamsOf = (names: unknown): { streams: string[] } | { unknown: string } => {
    if (!Array.isArray(names)) return { unknown: String(names) };
    const known = listed();
    for (const name of names) if (typeof name !== 'string' || !known.has(name)) return { unknown: String(name) };
    return { streams: names as string[] };
  };

  const stateOf = (request: IncomingMessage): StreamState => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const combined = url.pathname === '/stream';
    const named = combined ? (url.searchParams.get('streams') ?? '').split('/') : [url.pathname.slice('/ws/'.length)];
    // A name that is not a stream of the fake's (ccxt's `/ws/0`) subscribes nothing.
    const known = listed();
    return { streams: new Set(named.filter((name) => known.has(name))), combined };
  };

  const answer = (session: FakeBinanceSocket<StreamState>, request: StreamRequest) => {
    const id = request.id ?? null;
    const refuse = (msg: string) => sockets.send(session, { error: { code: 2, msg }, id });
    if (typeof id !== 'number' && typeof id !== 'string' && id !== null) return refuse('Invalid request: request ID must be an unsigned integer');
    if (request.method === 'LIST_SUBSCRIPTIONS') return sockets.send(session, { result: [...session.state.streams], id });
    if (request.method !== 'SUBSCRIBE' && request.method !== 'UNSUBSCRIBE') {
      return refuse(`Invalid request: unknown variant ${String(request.method)}, expected one of \`SUBSCRIBE\`, \`UNSUBSCRIBE\`, \`LIST_SUBSCRIPTIONS\``);
    }
    const named = streamsOf(request.params);
    if ('unknown' in named) return refuse(`Invalid request: the fake serves no stream ${named.unknown}`);
    for (const stream of named.streams) {
      if (request.method === 'SUBSCRIBE') session.state.streams.add(stream);
      else session.state.streams.delete(stream);
    }
    sockets.send(session, { result: null, id });
  };

  const sockets = createFakeBinanceSockets<StreamState>({
    stateOf,
    onRequest: (session, request) => answer(session, request ?? {}),
    malformed: { error: { code: 3, msg: 'Invalid JSON: expected value at line 1 column 1' }, id: null },
  });

  const publish = ({ symbol, price, time }: FakeBinancePriceSet) => {
    const stream = `${symbol.toLowerCase()}@trade`;
    const t = nextTradeIds.get(symbol) ?? 1;
    nextTradeIds.set(symbol, t + 1);
    const data = { e: 'trade', E: Date.now(), s: symbol, t, p: binanceDecimal(price), q: binanceDecimal(TRADE_QTY), T: time, m: false, M: true };
    const listening = sockets.sessions().filter((session) => session.state.streams.has(stream));
    for (const session of listening) sockets.send(session, session.state.combined ? { stream, data } : data);
    if (listening.some((session) => !session.silent)) sent.push({ stream, t, p: data.p, T: time });
  };
  const unsubscribe = books.onPriceSet(publish);

  return {
    upgrade: sockets.upgrade,
    /** Market stream connections attempted so far (refused ones included). */
    get connections() {
      return sockets.connections;
    },
    /** Sockets subscribed to the stream now (`btcusdt@trade`) and not silenced; to any stream without one. */
    subscribers: (stream?: string) => sockets.sessions().filter((session) => !session.silent && (stream === undefined ? session.state.streams.size > 0 : session.state.streams.has(stream))).length,
    /** The trades sent to at least one listening socket, oldest first. */
    sent: () => [...sent],
    /** Ends every market stream socket and refuses the next `refuse` connections (503 on the upgrade). */
    drop: sockets.drop,
    /** The market stream sockets open now go silent for good: no trades, no answers, no pongs. */
    silence: sockets.silence,
    close: () => {
      unsubscribe();
      sockets.close();
    },
  };
};

export type FakeBinanceMarketStreams = ReturnType<typeof createFakeBinanceMarketStreams>;
