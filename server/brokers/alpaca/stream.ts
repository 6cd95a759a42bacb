// The `trade_updates` WebSocket of one Alpaca key: authenticates and listens, on a connection
// keep-alive.ts keeps alive (watchdog, jittered exponential reconnects, `onListening` each time a
// connection listens, the first included, where the service reconciles what it may have missed:
// Alpaca sends an update only to a stream listening when it happens).
import { BrokerRejectedError } from '../types.ts';
import { keepStreaming, type KeepAliveOptions, type StreamProtocol } from './keep-alive.ts';
import type { AlpacaStreamMessage, AlpacaTradeUpdate } from './wire.ts';

export type { StreamBackoff, StreamRetry } from './keep-alive.ts';

export interface TradeUpdatesStreamOptions extends KeepAliveOptions {
  /** `wss://paper-api.alpaca.markets/stream`, or the fake's ws:// URL. */
  url: string;
  keyId: string;
  secretKey: string;
}

const tradeUpdatesProtocol = (options: TradeUpdatesStreamOptions): StreamProtocol<AlpacaStreamMessage, AlpacaTradeUpdate> => ({
  name: 'trade_updates',
  parse: (text) => {
    const parsed = JSON.parse(text) as AlpacaStreamMessage | AlpacaStreamMessage[];
    return Array.isArray(parsed) ? parsed : [parsed];
  },
  // The client speaks first on this stream.
  opened: (connection) => connection.send({ action: 'auth', key: options.keyId, secret: options.secretKey }),
  handle: (message, connection) => {
    if (message.stream === 'authorization') {
      if (message.data.status === 'authorized') connection.send({ action: 'listen', data: { streams: ['trade_updates'] } });
      else connection.fail(new BrokerRejectedError('Alpaca refused the key on the trade_updates stream'));
    } else if (message.stream === 'listening') {
      if (message.data.streams.includes('trade_updates')) connection.ready();
      else connection.drop();
    } else if (message.stream === 'trade_updates') {
      connection.deliver(message.data);
    }
  },
});

/** The key's trade updates from now on, until the signal aborts; throws only for a refused key. */
export const streamTradeUpdates = (options: TradeUpdatesStreamOptions, signal: AbortSignal): AsyncGenerator<AlpacaTradeUpdate> => keepStreaming(options, tradeUpdatesProtocol(options), signal);
