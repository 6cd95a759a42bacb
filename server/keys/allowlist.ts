// Where a key may point: base_url is taken only from an allow-list per exchange and mode, so a
// key test cannot be turned against internal addresses and a paper key cannot carry a live URL.
import type { TTradingMode } from '../../contracts/brokers.ts';

export type TExchange = 'crypto_exchange' | 'us_broker' | 'kr_broker';

/** The brokers' documented origins: Alpaca-style, KIS-style and Binance (spot and its testnet). */
export const DEFAULT_BASE_URLS: readonly string[] = [
  'us_broker:paper=https://paper-api.alpaca.markets',
  'us_broker:live=https://api.alpaca.markets',
  'kr_broker:paper=https://openapivts.koreainvestment.com:29443',
  'kr_broker:live=https://openapi.koreainvestment.com:9443',
  'crypto_exchange:paper=https://testnet.binance.vision',
  'crypto_exchange:live=https://api.binance.com',
];

const ENTRY = /^(crypto_exchange|us_broker|kr_broker):(paper|live)=(.+)$/;

export interface AllowList {
  /** The origin to store for a base_url, or undefined when the list does not allow it. */
  allowed(exchange: TExchange, mode: TTradingMode, baseUrl: string): string | undefined;
}

/** Parses `exchange:mode=origin` entries; throws naming the first bad one. */
export const parseAllowList = (entries: readonly string[]): AllowList => {
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
    allowed.add(`${match[1]}:${match[2]}=${origin}`);
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
