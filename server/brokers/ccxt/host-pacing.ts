// An exchange's request-weight budget belongs to the IP that calls it (Binance: 6,000 weight a
// minute), not to a key. ccxt paces each exchange instance by itself, by the weight it knows for
// every endpoint; this service builds an instance per account and per use (requests, events), so
// left alone N accounts on one host would send N budgets' worth together and earn an IP ban. The
// first instance built for a host keeps its pacer (ccxt's throttler); every later instance on
// that host is given the same one, so all of them draw, weight by weight, from one budget.
// The host's pacer serves order calls first (limits/order-calls.ts): a request waits its turn in
// front of ccxt's throttler, behind the order calls waiting and ahead of every read, and goes in
// when the one before it was let through, so the throttler paces exactly what it paced before.
// The markets are shared the same way: an exchange's market list is the same for every account on
// a host, and loading it is one of the heaviest reads there is, so it is loaded once per host.
import type { Exchange } from 'ccxt';
import { isOrderCall } from '../limits/order-calls.ts';

/** ccxt's throttler, as this module passes it between instances (ccxt types it as `any`). */
type Throttler = { throttle: (cost?: number) => Promise<unknown> };

interface Turn {
  cost: number | undefined;
  go: () => void;
  fail: (error: unknown) => void;
}

/**
 * `pacer` with order calls first: one request at a time is handed to it (the next once it let the
 * last through), the longest-waiting order call before any read, else the longest-waiting read.
 */
export const ordersFirstPacer = (pacer: Throttler): Throttler => {
  const orders: Turn[] = [];
  const reads: Turn[] = [];
  let handing = false;
  const handNext = () => {
    if (handing) return;
    const next = orders.shift() ?? reads.shift();
    if (!next) return;
    handing = true;
    pacer.throttle(next.cost).then(
      () => {
        handing = false;
        next.go();
        handNext();
      },
      (error: unknown) => {
        handing = false;
        next.fail(error);
        handNext();
      },
    );
  };
  return {
    throttle: (cost) =>
      new Promise<void>((go, fail) => {
        (isOrderCall() ? orders : reads).push({ cost, go, fail });
        handNext();
      }),
  };
};

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
      let held = byHost.get(key);
      if (!held) byHost.set(key, (held = ordersFirstPacer(exchange.throttler as Throttler)));
      exchange.throttler = held;
    },
    pacerOf: (exchangeId, host) => byHost.get(keyOf(exchangeId, host)),
  };
};
