// ccxt's pro (WebSocket) exchange classes, for the order stream (stream.ts) and the trade price
// stream (quotes.ts): whether an exchange streams order updates or trades, and a pro instance
// beside the adapter's REST one, with the same key, sandbox and markets, its WebSocket URLs moved
// to the key's origin where it names one.
import type * as Ccxt from 'ccxt';
import type { Exchange } from 'ccxt';
import { BrokerRejectedError } from '../types.ts';

type ProClass = new (config: object) => Exchange;

const proClassOf = (ccxt: typeof Ccxt, exchangeId: string): ProClass | undefined => (ccxt.pro as unknown as Record<string, ProClass | undefined>)[exchangeId];

/** Whether ccxt's pro class of the exchange has the watch method (watchOrders, watchTrades, watchTradesForSymbols). */
export const proHas = (ccxt: typeof Ccxt, exchangeId: string, method: 'watchOrders' | 'watchTrades' | 'watchTradesForSymbols'): boolean => {
  const Class = proClassOf(ccxt, exchangeId);
  return Class !== undefined && new Class({}).has[method] === true;
};

/** An http(s) origin as the ws(s) origin of the same host. */
export const wsOriginOf = (baseUrl: string) => {
  const url = new URL(baseUrl);
  return `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}`;
};

export interface CcxtProSettings {
  exchangeId: string;
  sandbox: boolean;
  /** How often ccxt pings the socket (its pongs keep a quiet stream heard). */
  keepAliveMs: number;
  /** The exchange's WebSocket URLs with their origin replaced (the key's base_url); left as ccxt has them without. */
  rebaseWs?: (urls: unknown) => unknown;
}

/** A pro instance of the REST instance's exchange, key and markets; it connects on its first watch. */
export const openCcxtProExchange = async (ccxt: typeof Ccxt, rest: Exchange, settings: CcxtProSettings): Promise<Exchange> => {
  const Class = proClassOf(ccxt, settings.exchangeId);
  if (!Class) throw new BrokerRejectedError(`ccxt has no WebSocket class for "${settings.exchangeId}"`);
  const pro = new Class({
    apiKey: rest.apiKey,
    secret: rest.secret,
    enableRateLimit: true,
    timeout: rest.timeout,
    options: { defaultType: 'spot' },
    // The stream's own watchdog ends a silent socket; ccxt's (missed pongs) only backs it up.
    streaming: { keepAlive: settings.keepAliveMs, maxPingPongMisses: 8 },
  });
  if (settings.sandbox) pro.setSandboxMode(true);
  const urls = pro.urls.api as unknown as Record<string, unknown>;
  // REST goes where the adapter's instance goes (ccxt's pro classes read a balance snapshot there, say).
  if (settings.rebaseWs) pro.urls.api = { ...(rest.urls.api as unknown as Record<string, unknown>), ws: settings.rebaseWs(urls.ws) };
  // ccxt wants its http agent loaded before it dials a plain ws:// URL (the fake, a local proxy).
  if (JSON.stringify((pro.urls.api as unknown as Record<string, unknown>).ws ?? '').includes('"ws://')) await pro.loadHttpProxyAgent();
  pro.setMarketsFromExchange(rest);
  return pro;
};
