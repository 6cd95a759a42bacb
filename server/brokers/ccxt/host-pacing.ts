// An exchange's request-weight budget belongs to the IP that calls it (Binance: 6,000 weight a
// minute), not to a key. ccxt paces each exchange instance by itself, by the weight it knows for
// every endpoint; this service builds an instance per account and per use (requests, events), so
// left alone N accounts on one host would send N budgets' worth together and earn an IP ban. The
// first instance built for a host keeps its pacer (ccxt's throttler); every later instance on
// that host is given the same one, so all of them draw, weight by weight, from one budget.
// The markets are shared the same way: an exchange's market list is the same for every account on
// a host, and loading it is one of the heaviest reads there is, so it is loaded once per host.
import type { Exchange } from 'ccxt';

/** ccxt's throttler, as this module passes it between instances (ccxt types it as `any`). */
type Throttler = { throttle: (cost?: number) => Promise<unknown> };

/** The origin an exchange's private calls go to (where its weight is counted), or its first API URL's. */
export const apiHostOf = (urls: unknown): string | undefined => {
  const origin = (value: unknown): string | undefined => {
    if (typeof value === 'string') {
      try {
        return new URL(value).origin;
      } catch {
        return undefined;
      }
    }
    if (!value || typeof value !== 'object') return undefined;
    const entries = Object.entries(value as Record<string, unknown>);
    const preferred = entries.find(([name]) => name === 'private');
    for (const [, inner] of preferred ? [preferred, ...entries] : entries) {
      const found = origin(inner);
      if (found) return found;
    }
    return undefined;
  };
  return origin(urls);
};

export interface HostPacing {
  /** Loads `exchange`'s markets: from the host's first load when there was one (a failed load is tried again by the next). */
  loadMarkets(exchangeId: string, exchange: Exchange): Promise<void>;
  /** Gives `exchange` the pacer of its host (its own becomes the host's when it is the first). */
  share(exchangeId: string, exchange: Exchange): void;
  /** The pacer every instance of an exchange on a host draws from, once one was built. */
  pacerOf(exchangeId: string, host: string): Throttler | undefined;
}

export const createHostPacing = (): HostPacing => {
  const byHost = new Map<string, Throttler>();
  /** The instance whose markets every later one on the host takes, once they loaded. */
  const marketsByHost = new Map<string, Promise<Exchange>>();
  const keyOf = (exchangeId: string, host: string) => `${exchangeId} ${host}`;
  return {
    async loadMarkets(exchangeId, exchange) {
      const host = apiHostOf(exchange.urls.api);
      if (!host) {
        await exchange.loadMarkets();
        return;
      }
      const key = keyOf(exchangeId, host);
      let loading = marketsByHost.get(key);
      if (!loading) {
        loading = exchange.loadMarkets().then(() => exchange);
        marketsByHost.set(key, loading);
        loading.catch(() => marketsByHost.delete(key));
        await loading;
        return;
      }
      exchange.setMarketsFromExchange(await loading);
    },
    share(exchangeId, exchange) {
      const host = apiHostOf(exchange.urls.api);
      if (!host) return;
      const key = keyOf(exchangeId, host);
      const held = byHost.get(key);
      if (held) exchange.throttler = held;
      else byHost.set(key, exchange.throttler as Throttler);
    },
    pacerOf: (exchangeId, host) => byHost.get(keyOf(exchangeId, host)),
  };
};
