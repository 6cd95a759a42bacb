// The real broker adapters of BROKER_MODE=real, built from a key's credentials: the US key's
// Alpaca-style adapter, the KR key's KIS-style adapter, the crypto key's ccxt adapter on
// CRYPTO_EXCHANGE_ID. Owns what every adapter of a key must share in this process: the request
// limiters (per key, and per host for KIS), the KIS order links and the ccxt watched symbols of
// each account.
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import type { KeyCredentials } from '../../keys/keys.ts';
import type { Logger } from '../../observability/logger.ts';
import { createAlpacaBroker, createLimiterRegistry } from '../alpaca/index.ts';
import { createCcxtBroker } from '../ccxt/index.ts';
import { createKisBroker, kisLimiters, KIS_LIVE_REQUESTS_PER_SECOND, KIS_PAPER_REQUESTS_PER_SECOND, type KisOrderLinkStore } from '../kis/index.ts';
import type { Broker } from '../types.ts';
import { createKisLinkStore } from './kis-links.ts';

export interface RealAccount {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  credentials: KeyCredentials;
}

/** What an events consumer adds to an adapter: the reconnect hook (where it reconciles). */
export interface StreamHooks {
  onReconnect?: () => void | Promise<void>;
}

const perSecond = (count: number) => ({ requestsPerMinute: count * 60, burst: count });

/** KIS's CANO is the first 8 digits of the account number; a key may carry it as `50012345-01`. */
const kisAccountNo = (accountNo: string) => accountNo.replace(/\D/g, '').slice(0, 8);

export type RealAdapters = ReturnType<typeof createRealAdapters>;

export const createRealAdapters = ({ db, config, logger }: { db: Db; config: Config; logger: Logger }) => {
  const alpacaLimiters = createLimiterRegistry({ requestsPerMinute: config.BROKER_US_REQUESTS_PER_MIN });
  const krPerSecond = config.BROKER_KR_REQUESTS_PER_SEC;
  const kisKeyLimiters = {
    paper: createLimiterRegistry(perSecond(krPerSecond || KIS_PAPER_REQUESTS_PER_SECOND)),
    live: createLimiterRegistry(perSecond(krPerSecond || KIS_LIVE_REQUESTS_PER_SECOND)),
  };
  // KIS forgets our client order ids: each account's links, shared by its request and events adapters.
  const kisLinks = new Map<string, KisOrderLinkStore>();
  const linksOf = (userId: number, mode: TTradingMode) => {
    const key = `${userId}:${mode}`;
    let links = kisLinks.get(key);
    if (!links) kisLinks.set(key, (links = createKisLinkStore({ db, userId, mode })));
    return links;
  };
  const cryptoLimiters = createLimiterRegistry({ requestsPerMinute: config.BROKER_CRYPTO_REQUESTS_PER_MIN });
  // An exchange lists a market order's fills by symbol: the symbols an account trades, shared by its request and events adapters.
  const watchedSymbols = new Map<string, Set<string>>();
  const watchedOf = (userId: number, mode: TTradingMode) => {
    const key = `${userId}:${mode}`;
    let watched = watchedSymbols.get(key);
    if (!watched) watchedSymbols.set(key, (watched = new Set()));
    return watched;
  };
  const warn = logger.child({ area: 'brokers' });

  /** The adapter of one account; throws AppError for what real mode cannot serve. */
  const build = ({ userId, assetClass, mode, credentials }: RealAccount, hooks: StreamHooks = {}): Broker => {
    switch (assetClass) {
      case 'us_equity':
        return createAlpacaBroker({
          userId,
          mode,
          keyId: credentials.apiKey,
          secretKey: credentials.apiSecret,
          // Checked against the allow-list when the key was registered; the documented origin without one.
          ...(credentials.baseUrl ? { baseUrl: credentials.baseUrl } : {}),
          dataUrl: config.BROKER_US_DATA_URL,
          timeoutMs: config.BROKER_TIMEOUT_MS,
          limiter: alpacaLimiters.forKey(credentials.apiKey),
          silenceSeconds: config.BROKER_STREAM_SILENCE_SEC,
          ...(hooks.onReconnect ? { onReconnect: hooks.onReconnect } : {}),
          logger: warn,
        });
      case 'kr_equity':
        if (!credentials.accountNo || !credentials.accountProductCode) throw new AppError('BROKER_NOT_CONFIGURED', 'The kr_equity key has no account number and product code');
        return createKisBroker({
          userId,
          mode,
          appKey: credentials.apiKey,
          appSecret: credentials.apiSecret,
          accountNo: kisAccountNo(credentials.accountNo),
          productCode: credentials.accountProductCode,
          ...(credentials.baseUrl ? { baseUrl: credentials.baseUrl } : {}),
          timeoutMs: config.BROKER_TIMEOUT_MS,
          keyLimiters: kisKeyLimiters[mode],
          hostLimiters: kisLimiters.hosts,
          links: linksOf(userId, mode),
          pollIntervalMs: config.BROKER_KR_POLL_INTERVAL_MS,
          // Each reading from a (re)start reports the day's fills; the service drops the ones it has.
          replayToday: true,
          logger: warn,
        });
      case 'crypto':
        return createCcxtBroker({
          userId,
          mode,
          exchangeId: config.CRYPTO_EXCHANGE_ID,
          apiKey: credentials.apiKey,
          secret: credentials.apiSecret,
          ...(credentials.baseUrl ? { baseUrl: credentials.baseUrl } : {}),
          timeoutMs: config.BROKER_TIMEOUT_MS,
          limiter: cryptoLimiters.forKey(credentials.apiKey),
          pollIntervalMs: config.BROKER_CRYPTO_POLL_INTERVAL_MS,
          watched: watchedOf(userId, mode),
          // watchOrders where the exchange has it: the same watchdog and reconnect hook as the US stream.
          stream: config.BROKER_CRYPTO_STREAM,
          silenceSeconds: config.BROKER_STREAM_SILENCE_SEC,
          ...(hooks.onReconnect ? { onReconnect: hooks.onReconnect } : {}),
          logger: warn,
        });
    }
  };

  const close = () => {
    alpacaLimiters.close();
    cryptoLimiters.close();
    kisKeyLimiters.paper.close();
    kisKeyLimiters.live.close();
  };

  return { build, close };
};
