// Alpaca's real-time stock data stream v2 (`wss://stream.data.alpaca.markets/v2/iex`, or `/v2/sip`)
// as a stream of trade prices: on the server's `connected` the client authenticates, on
// `authenticated` it subscribes to the symbols' trades, and each trade becomes a BrokerQuote. The
// connection is kept alive by keep-alive.ts; each reconnection authenticates and subscribes again
// (a trade printed while disconnected is not sent again: the stream is of prices from now on).
import { BrokerRejectedError, type BrokerQuote } from '../types.ts';
import { keepStreaming, type KeepAliveOptions, type StreamProtocol } from './keep-alive.ts';

export interface QuoteStreamOptions extends KeepAliveOptions {
  /** `wss://stream.data.alpaca.markets/v2/iex`, or the fake's ws:// URL. */
  url: string;
  keyId: string;
  secretKey: string;
}

/** One message of a data stream frame, as this adapter reads it. */
export type DataStreamEvent =
  | { kind: 'connected' }
  | { kind: 'authenticated' }
  | { kind: 'error'; code: number; message: string }
  | { kind: 'subscribed'; trades: string[] }
  | { kind: 'trade'; quote: BrokerQuote }
  /** Another channel's data (quotes, bars, corrections), a success of no interest, or a malformed trade. */
  | { kind: 'ignored'; type: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A trade's price as decimal text: a JSON number's shortest decimal form is the text it was sent
 * as (as the REST quote reads it); a price that only prints with an exponent is no stock's.
 */
const priceTextOf = (price: unknown): string | undefined => {
  if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) return undefined;
  const text = String(price);
  return /e/i.test(text) ? undefined : text;
};

const eventOf = (message: unknown): DataStreamEvent => {
  if (!isRecord(message) || typeof message.T !== 'string') return { kind: 'ignored', type: 'malformed' };
  switch (message.T) {
    case 'success':
      if (message.msg === 'connected') return { kind: 'connected' };
      if (message.msg === 'authenticated') return { kind: 'authenticated' };
      return { kind: 'ignored', type: 'success' };
    case 'error':
      return { kind: 'error', code: typeof message.code === 'number' ? message.code : 0, message: typeof message.msg === 'string' ? message.msg : '' };
    case 'subscription':
      return { kind: 'subscribed', trades: Array.isArray(message.trades) ? message.trades.filter((symbol): symbol is string => typeof symbol === 'string') : [] };
    case 't': {
      const price = priceTextOf(message.p);
      // Date reads RFC 3339 with nanoseconds, keeping the milliseconds.
      const at = typeof message.t === 'string' ? new Date(message.t) : undefined;
      if (typeof message.S !== 'string' || message.S === '' || price === undefined || !at || Number.isNaN(at.getTime())) return { kind: 'ignored', type: 'malformed trade' };
      return { kind: 'trade', quote: { symbol: message.S, price, at } };
    }
    default:
      return { kind: 'ignored', type: message.T };
  }
};

/** One frame of the data stream: a JSON array of messages (throws on anything else). */
export const parseDataFrame = (text: string): DataStreamEvent[] => {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error('an Alpaca data stream frame is a JSON array');
  return parsed.map(eventOf);
};

/**
 * Errors no retry cures, which end the stream: a request of ours Alpaca cannot read (400, 401,
 * 410), the key refused (402), more symbols than the plan allows (405), a feed the plan does not
 * include (409). The rest (404 auth timeout, 406 connection limit exceeded while another
 * connection of the key is still open, 407 slow client, 500) reconnect after the backoff.
 */
const FATAL_CODES = new Set([400, 401, 402, 405, 409, 410]);
/** 403 already authenticated: nothing is wrong. */
const HARMLESS_CODES = new Set([403]);

const quotesProtocol = (options: QuoteStreamOptions, symbols: ReadonlySet<string>): StreamProtocol<DataStreamEvent, BrokerQuote> => {
  // Alpaca echoes no secret, but a message is a stranger's text: the secret never passes on.
  const scrub = (text: string) => (options.secretKey ? text.split(options.secretKey).join('[redacted]') : text);
  return {
    name: 'market data',
    parse: parseDataFrame,
    // The server speaks first (`connected`); the client answers it.
    handle: (event, connection) => {
      switch (event.kind) {
        case 'connected':
          return connection.send({ action: 'auth', key: options.keyId, secret: options.secretKey });
        case 'authenticated':
          return connection.send({ action: 'subscribe', trades: [...symbols] });
        case 'subscribed': {
          const missing = [...symbols].filter((symbol) => !event.trades.includes(symbol));
          if (missing.length > 0) options.logger?.warn({ missing }, 'alpaca: the market data stream did not subscribe to every symbol');
          return connection.ready();
        }
        case 'trade':
          // Alpaca may still send a symbol of an earlier subscription for a moment: only ours pass.
          if (symbols.has(event.quote.symbol)) connection.deliver(event.quote);
          return;
        case 'error': {
          if (HARMLESS_CODES.has(event.code)) return;
          const what = `${event.code} ${scrub(event.message)}`.trim();
          if (FATAL_CODES.has(event.code)) return connection.fail(new BrokerRejectedError(`Alpaca's market data stream refused ${event.code === 402 ? 'the key' : 'the request'} (${what})`));
          options.logger?.warn({ code: event.code }, `alpaca: the market data stream failed (${what}); reconnecting`);
          return connection.drop();
        }
        case 'ignored':
          return;
      }
    },
  };
};

/**
 * The symbols' trade prices from now on, in the order Alpaca sends them, until the signal aborts;
 * throws BrokerRejectedError for a refused key, feed or symbol count. No symbols: nothing to
 * connect for, so it only waits for the abort.
 */
export async function* streamQuotes(options: QuoteStreamOptions, symbols: readonly string[], signal: AbortSignal): AsyncGenerator<BrokerQuote> {
  const wanted = new Set(symbols);
  if (wanted.size === 0) {
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return;
  }
  yield* keepStreaming(options, quotesProtocol(options, wanted), signal);
}
