// Where a key may point: base_url is taken only from an allow-list per exchange and mode, so a
// key test cannot be turned against internal addresses and a paper key cannot carry a live URL.
// Crypto entries are per ccxt exchange id (a key's own exchange: the one it names, or
// CRYPTO_EXCHANGE_ID for `crypto_exchange`), so one exchange's origin is never allowed for another;
// an entry for `crypto_exchange` stands for CRYPTO_EXCHANGE_ID.
import type { TTradingMode } from '../../contracts/brokers.ts';

/** The brokers' documented origins: Alpaca-style, KIS-style and Binance (spot and its testnet). */
export const DEFAULT_BASE_URLS: readonly string[] = [
  'us_broker:paper=https://paper-api.alpaca.markets',
  'us_broker:live=https://api.alpaca.markets',
  'kr_broker:paper=https://openapivts.koreainvestment.com:29443',
  'kr_broker:live=https://openapi.koreainvestment.com:9443',
  'binance:paper=https://testnet.binance.vision',
  'binance:live=https://api.binance.com',
];

/** `exchange:mode=origin`, the exchange being us_broker, kr_broker, crypto_exchange or a ccxt exchange id. */
const ENTRY = /^(us_broker|kr_broker|crypto_exchange|[a-z0-9]{2,32}):(paper|live)=(.+)$/;

/** The exchange an entry names, or undefined for an entry that is not `exchange:mode=origin`. */
export const allowListEntryExchange = (entry: string): string | undefined => ENTRY.exec(entry)?.[1];

export interface AllowList {
  /** The origin to store for a base_url, or undefined when the list does not allow it. `exchange` is us_broker, kr_broker or a ccxt exchange id. */
  allowed(exchange: string, mode: TTradingMode, baseUrl: string): string | undefined;
}

/** Parses `exchange:mode=origin` entries (`crypto_exchange` read as `cryptoExchangeId`); throws naming the first bad one. */
export const parseAllowList = (entries: readonly string[], cryptoExchangeId: string): AllowList => {
  const allowed = new Set<string>();
  for (const entry of entries) {
    const match = ENTRY.exec(entry);
    let origin: string | undefined;
    try {
      origin = match ? new URL(match[3]!).origin : undefined;
    } catch {
      origin = undefined;
    }
    if (!match || !origin || origin === 'null') throw new Error(`"${entry.slice(0, 80)}" is not exchange:mode=https://host[:port]`);
    const exchange = match[1] === 'crypto_exchange' ? cryptoExchangeId : match[1]!;
    allowed.add(`${exchange}:${match[2]}=${origin}`);
  }
  return {
    allowed: (exchange, mode, baseUrl) => {
      let url: URL;
      try {
        url = new URL(baseUrl);
      } catch {
        return undefined;
      }
      // Only an origin: a path, query or credentials in the URL are not something a broker needs.
      if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
      return allowed.has(`${exchange}:${mode}=${url.origin}`) ? url.origin : undefined;
    },
  };
};
