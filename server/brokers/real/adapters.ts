// The real broker adapters of BROKER_MODE=real, built from a key's credentials: the US key's
// Alpaca-style adapter, the KR key's KIS-style adapter, the crypto key's ccxt adapter on the
// exchange the key names (CRYPTO_EXCHANGE_ID for `crypto_exchange`). Owns what every adapter of
// a key must share: the request limiters (per key, and per host for KIS), whose budgets every
// instance shares through Postgres, and, in this process, ccxt's pacing by request weight per
// exchange host, the KIS order links, and the ccxt watched symbols and client order ids of each
// account (stores the composition root gives it: the order service's, which read its orders
// table); and, with every instance, the KIS access tokens (kept in Postgres).
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { cryptoExchangeOf, cryptoExchangesOf } from '../../keys/exchanges.ts';
import type { KeyCipher } from '../../keys/crypto.ts';
import type { KeyCredentials } from '../../keys/keys.ts';
import type { Logger } from '../../observability/logger.ts';
import { createAlpacaBroker, createLimiterRegistry } from '../alpaca/index.ts';
import { clientOrderIdRuleOf, createCcxtBroker, createHostPacing, createPlacedOrders, type CcxtClientIdStore, type ClientOrderIdRule } from '../ccxt/index.ts';
import { createKisBroker, KIS_HOST_REQUESTS_PER_SECOND, KIS_LIVE_REQUESTS_PER_SECOND, KIS_PAPER_REQUESTS_PER_SECOND, type KisOrderLinkStore } from '../kis/index.ts';
import { budgetNames } from '../limits/names.ts';
import { sharedBudgetLimiters } from '../limits/shared-limiter.ts';
import { ordersFirst } from '../limits/order-calls.ts';
import type { Broker } from '../types.ts';
import { createKisTokenStore } from './kis-tokens.ts';

export interface RealAccount {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  credentials: KeyCredentials;
}

/**
 * Where an account's adapters find the order ids of ours that its broker cannot keep (KIS keeps
 * no client order id; an exchange may keep only a digest form of it). The order service's
 * records are the store (its broker-links module), handed in by the composition root, so the
 * brokers area never reads the order service's tables.
 */
export interface OrderLinkStores {
  kis(account: { userId: number; mode: TTradingMode }): KisOrderLinkStore;
  ccxt(account: { userId: number; mode: TTradingMode; rule: ClientOrderIdRule }): CcxtClientIdStore;
}

/** What an events consumer adds to an adapter: the listening hook (where it reconciles). */
export interface StreamHooks {
  /**
   * Called each time the account's event stream listens, the first time included (Alpaca's
   * trade_updates, ccxt's order stream): an update is sent only to a stream listening when it
   * happens. Polled events (KIS, ccxt without an order stream) never call it.
   */
  onListening?: () => void | Promise<void>;
}

const perSecond = (count: number) => ({ requestsPerMinute: count * 60, burst: count });

/** KIS's CANO is the first 8 digits of the account number; a key may carry it as `50012345-01`. */
const kisAccountNo = (accountNo: string) => accountNo.replace(/\D/g, '').slice(0, 8);

/** One thing per account (or exchange, ...), made on first use and the same one after. */
const perKey = <A extends unknown[], T>(make: (...args: A) => T) => {
  const made = new Map<string, T>();
  const of = (...args: A): T => {
    const key = args.join(':');
    let thing = made.get(key);
    if (thing === undefined) made.set(key, (thing = make(...args)));
    return thing;
  };
  return { of, all: () => made.values() };
};

export type RealAdapters = ReturnType<typeof createRealAdapters>;

export const createRealAdapters = ({ db, clock, config, logger, cipher, orderLinks }: { db: Db; clock: Clock; config: Config; logger: Logger; cipher: KeyCipher; orderLinks: OrderLinkStores }) => {
  // Every budget is shared by the instances on this database; the database gets as long to answer
  // a take as a broker gets to answer a request.
  const shared = (nameOf: (keyId: string) => string) => sharedBudgetLimiters({ db, clock, logger: logger.child({ area: 'broker-budgets' }), answerTimeoutMs: config.BROKER_TIMEOUT_MS }, nameOf);
  const alpacaLimiters = createLimiterRegistry({ requestsPerMinute: config.BROKER_US_REQUESTS_PER_MIN }, shared(budgetNames.usKey));
  const krPerSecond = config.BROKER_KR_REQUESTS_PER_SEC;
  const kisKeyLimiters = {
    paper: createLimiterRegistry(perSecond(krPerSecond || KIS_PAPER_REQUESTS_PER_SECOND), shared(budgetNames.krKey('paper'))),
    live: createLimiterRegistry(perSecond(krPerSecond || KIS_LIVE_REQUESTS_PER_SECOND), shared(budgetNames.krKey('live'))),
  };
  const kisHostLimiters = createLimiterRegistry(perSecond(KIS_HOST_REQUESTS_PER_SECOND), shared(budgetNames.krHost));
  // KIS forgets our client order ids: each account's links, shared by its request and events adapters.
  const kisLinks = perKey((userId: number, mode: TTradingMode): KisOrderLinkStore => orderLinks.kis({ userId, mode }));
  // KIS issues about one token a minute per key: one token per key and domain for every instance.
  const kisTokens = createKisTokenStore({ db, cipher, clock });
  const cryptoExchanges = cryptoExchangesOf(config);
  // One registry per exchange: a crypto key's budget is named by the exchange it trades on.
  const cryptoLimiters = perKey((exchangeId: string) => createLimiterRegistry({ requestsPerMinute: config.BROKER_CRYPTO_REQUESTS_PER_MIN }, shared(budgetNames.cryptoKey(exchangeId))));
  // An exchange counts request weight per calling IP: every account's ccxt instances on one host share ccxt's pacing.
  const cryptoHostPacing = createHostPacing();
  // An exchange lists a market order's fills by symbol: the symbols an account trades, shared by its request and events adapters.
  const watchedSymbols = perKey((_userId: number, _mode: TTradingMode, _exchangeId: string) => new Set<string>());
  // The orders an account placed that its poller has not seen yet: shared by its request and events adapters.
  const placedOrders = perKey((_userId: number, _mode: TTradingMode, _exchangeId: string) => createPlacedOrders());
  // Our client order ids behind the digest forms an exchange was sent: each account's, shared by its request and events adapters.
  const clientIdStores = perKey(
    (userId: number, mode: TTradingMode, exchangeId: string): CcxtClientIdStore => orderLinks.ccxt({ userId, mode, rule: clientOrderIdRuleOf(exchangeId) }),
  );
  const warn = logger.child({ area: 'brokers' });

  /** The adapter of one account; throws AppError for what real mode cannot serve. */
  const adapterOf = ({ userId, assetClass, mode, credentials }: RealAccount, hooks: StreamHooks = {}): Broker => {
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
          ...(config.BROKER_US_DATA_STREAM_URL ? { dataStreamUrl: config.BROKER_US_DATA_STREAM_URL } : {}),
          timeoutMs: config.BROKER_TIMEOUT_MS,
          limiter: alpacaLimiters.forKey(credentials.apiKey),
          silenceSeconds: config.BROKER_STREAM_SILENCE_SEC,
          ...(hooks.onListening ? { onListening: hooks.onListening } : {}),
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
          hostLimiters: kisHostLimiters,
          tokenStore: kisTokens,
          links: kisLinks.of(userId, mode),
          pollIntervalMs: config.BROKER_KR_POLL_INTERVAL_MS,
          // quotes(): KIS's WebSocket at the documented host of the key's origin, under the streams' watchdog.
          quoteStream: { silenceSeconds: config.BROKER_STREAM_SILENCE_SEC },
          // Each reading from a (re)start reports the day's fills; the service drops the ones it has.
          replayToday: true,
          // KIS's days are Seoul's, and a lost order is looked for by its age: both on the service's clock.
          now: () => clock.now(),
          logger: warn,
        });
      case 'crypto': {
        const exchangeId = cryptoExchangeOf(credentials.exchange, cryptoExchanges);
        // A key registered before CRYPTO_EXCHANGE_IDS dropped its exchange: not traded on until the setting allows it again.
        if (!exchangeId) throw new AppError('BROKER_NOT_CONFIGURED', `The crypto key names ${credentials.exchange}, which this service does not allow (CRYPTO_EXCHANGE_IDS)`);
        return createCcxtBroker({
          userId,
          mode,
          exchangeId,
          apiKey: credentials.apiKey,
          secret: credentials.apiSecret,
          ...(credentials.baseUrl ? { baseUrl: credentials.baseUrl } : {}),
          timeoutMs: config.BROKER_TIMEOUT_MS,
          limiter: cryptoLimiters.of(exchangeId).forKey(credentials.apiKey),
          hostPacing: cryptoHostPacing,
          pollIntervalMs: config.BROKER_CRYPTO_POLL_INTERVAL_MS,
          watched: watchedSymbols.of(userId, mode, exchangeId),
          clientIds: clientIdStores.of(userId, mode, exchangeId),
          placed: placedOrders.of(userId, mode, exchangeId),
          // watchOrders where the exchange has it: the same watchdog and listening hook as the US stream.
          stream: config.BROKER_CRYPTO_STREAM,
          silenceSeconds: config.BROKER_STREAM_SILENCE_SEC,
          ...(hooks.onListening ? { onListening: hooks.onListening } : {}),
          logger: warn,
        });
      }
    }
  };

  /** The adapter of one account, its order calls served before its reads by every budget they share (limits/order-calls.ts). */
  const build = (account: RealAccount, hooks: StreamHooks = {}): Broker => ordersFirst(adapterOf(account, hooks));

  const close = () => {
    alpacaLimiters.close();
    for (const registry of cryptoLimiters.all()) registry.close();
    kisKeyLimiters.paper.close();
    kisKeyLimiters.live.close();
    kisHostLimiters.close();
  };

  return { build, close };
};
