// The KIS adapter against the fake KIS on 127.0.0.1: market and limit orders, cancel, lookups by
// our id and by client id, positions and the account from the balance, quotes and daily bars;
// refusals and failures as the broker errors, "too many requests" retried after a backoff, the
// token renewed once when KIS ends it (one renewal for many callers), and fills found by polling,
// each reported once.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLimiterRegistry } from '../../server/brokers/alpaca/index.ts';
import { eq } from 'drizzle-orm';
import { createKisBroker, createMemoryLinkStore, createMemoryTokenStore, tokenStoreKey, type KisBrokerOptions, type KisStoredToken } from '../../server/brokers/kis/index.ts';
import { createKisTokenStore } from '../../server/brokers/real/kis-tokens.ts';
import { brokerTokens } from '../../server/db/schema/index.ts';
import { createKeyCipher } from '../../server/keys/crypto.ts';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { BrokerOrderAmbiguousError, BrokerRejectedError, BrokerUnavailableError, type Broker, type BrokerOrderRequest, type TBrokerEvent } from '../../server/brokers/types.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { openTestDatabase } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const SECRET_PREFIX = 'kis-app-secret-';

/**
 * The time of the shared fake and of the adapters: it starts at 10:00 in Seoul and runs on from
 * there, so every order falls on one Seoul day (the adapter's day boundary) whatever the time of
 * day the suite runs. It runs rather than stands still: the poller's readings and the limiters go on in real time.
 */
const startedAt = Date.now();
const testNow = () => new Date(Date.parse('2025-06-12T01:00:00Z') + (Date.now() - startedAt));
/** Per REST call: a bound no answered call comes near, even on a loaded machine (the timeout has its own test). */
const ROOMY_TIMEOUT_MS = 20_000;

let fake: FakeKis;
/** Roomy budgets for the tests that are not about the limiters. */
const keyLimiters = createLimiterRegistry({ requestsPerMinute: 100_000 });
const hostLimiters = createLimiterRegistry({ requestsPerMinute: 100_000 });
const errorsSeen: Error[] = [];
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  // Issuance spacing off for most tests (each account is its own key anyway); one test turns to a fake of its own.
  fake = await startFakeKis({ prices: { '005930': '71000', '000660': '180000' }, tokenIssueIntervalMs: 60_000, now: testNow });
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
afterAll(async () => {
  keyLimiters.close();
  hostLimiters.close();
  await fake.close();
});

let accounts = 0;

/** A fresh account on a fake (its own app key and token store) and an adapter for it. */
const newBroker = (options: Partial<KisBrokerOptions> & { cash?: string; on?: FakeKis } = {}) => {
  const target = options.on ?? fake;
  accounts += 1;
  const appKey = `PS${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const appSecret = `${SECRET_PREFIX}${randomUUID()}`;
  const accountNo = String(50_000_000 + accounts);
  target.addAccount({ appKey, appSecret, accountNo, productCode: '01', cash: options.cash ?? '10000000' });
  const tokenStore = options.tokenStore ?? createMemoryTokenStore();
  // One link store per account, as the service's orders table is: every adapter of it sees our client ids.
  const links = options.links ?? createMemoryLinkStore();
  const make = (overrides: Partial<KisBrokerOptions> = {}) =>
    createKisBroker({
      userId: 7,
      mode: 'paper',
      appKey,
      appSecret,
      accountNo,
      productCode: '01',
      baseUrl: target.url,
      timeoutMs: ROOMY_TIMEOUT_MS,
      keyLimiters,
      hostLimiters,
      tokenStore,
      links,
      rateLimitBackoff: { baseMs: 20, maxMs: 80 },
      pollIntervalMs: 50,
      now: testNow,
      ...options,
      ...overrides,
    });
  return { broker: make(), make, appKey, appSecret, accountNo, tokenStore };
};

const failureOf = async (call: Promise<unknown>): Promise<Error> => {
  try {
    await call;
  } catch (error) {
    errorsSeen.push(error as Error);
    return error as Error;
  }
  throw new Error('the call did not fail');
};

const order = (fields: Partial<BrokerOrderRequest> = {}): BrokerOrderRequest => ({
  clientOrderId: randomUUID().replaceAll('-', ''),
  symbol: '005930',
  side: 'buy',
  qty: '10',
  orderType: 'market',
  timeInForce: 'day',
  ...fields,
});

const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

const requestsOf = (appKey: string, path?: string) => fake.requests.filter((request) => request.appKey === appKey && (!path || request.path.endsWith(path)));

/** Collects the broker's events in the background until the test ends. */
const collectEvents = (broker: Broker) => {
  const events: TBrokerEvent[] = [];
  const controller = new AbortController();
  const done = (async () => {
    for await (const event of broker.events(controller.signal)) events.push(event);
  })();
  cleanups.push(() => controller.abort());
  return { events, done, stop: () => controller.abort() };
};

/** The lifetime KIS gives the tokens of renewOnShortTokens' fake: the adapter renews in its last tenth. */
const SHORT_TOKEN_SECONDS = 100;

/**
 * Adapters of one account (one per entry of `instances`) on a fake of its own with 100-second
 * tokens and no issuance spacing, all on one clock that stands still until moved. Each round moves
 * it to 95 s after the last issuance (inside the last tenth of the token's life, 5 s before it
 * ends) and calls account() on every adapter. Answers the fake's issuances: after the first call,
 * then after each round.
 */
const renewOnShortTokens = async (instances: Array<Partial<KisBrokerOptions>>, rounds: number) => {
  let clock = testNow().getTime();
  const now = () => new Date(clock);
  const shortLived = await startFakeKis({ prices: { '005930': '71000' }, tokenLifetimeSeconds: SHORT_TOKEN_SECONDS, tokenIssueIntervalMs: 0, now });
  try {
    const { make } = newBroker({ on: shortLived, now });
    const brokers = instances.map((instance) => make(instance));
    await brokers[0]!.account();
    const issuances = [shortLived.tokenIssuances];
    for (let round = 0; round < rounds; round += 1) {
      clock += SHORT_TOKEN_SECONDS * 1_000 - 5_000;
      await Promise.all(brokers.map((broker) => broker.account()));
      issuances.push(shortLived.tokenIssuances);
    }
    return issuances;
  } finally {
    await shortLived.close();
  }
};

describe('orders', () => {
  it('places a market order that fills at the price: accepted on placement, filled on reading, in the balance after', async () => {
    const { broker, appKey } = newBroker();
    const request = order({ qty: '3', metadata: { report_uuid: 'r-1' } });
    const placed = await broker.placeOrder(request);
    expect(placed).toMatchObject({ status: 'accepted', filledQty: '0', assetClass: 'kr_equity', mode: 'paper', qty: '3', orderType: 'market', limitPrice: null, clientOrderId: request.clientOrderId });
    expect(placed.brokerOrderId).toMatch(/^\d{8}-0000000001$/);
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'filled', filledQty: '3', avgFillPrice: '71000', clientOrderId: request.clientOrderId, metadata: { report_uuid: 'r-1' } });
    expect(await broker.positions()).toEqual([{ symbol: '005930', qty: '3', avgEntryPrice: '71000', currentPrice: '71000', realizedPnl: '0', currency: 'KRW' }]);
    expect(await broker.account()).toMatchObject({ broker: 'kis', paper: true, currency: 'KRW', cash: '9787000', equity: '10000000', buyingPower: '9787000' });
    // The paper domain's tr_ids, with the bearer token and keys on every call.
    expect(requestsOf(appKey).map((request) => request.trId)).toEqual(expect.arrayContaining(['VTTC0012U', 'VTTC0081R', 'VTTC8434R']));
  });

  it('rests a limit buy (its price put on the KRX tick grid, downward) until the price falls to it', async () => {
    const { broker } = newBroker();
    fake.setPrice('035420', '201000');
    // 199,950 is between ticks of 100 (the 50,000–200,000 band): a buy rounds down to 199,900.
    const placed = await broker.placeOrder(order({ symbol: '035420', qty: '2', orderType: 'limit', limitPrice: '199950' }));
    expect(placed).toMatchObject({ status: 'accepted', limitPrice: '199900', orderType: 'limit' });
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'open', limitPrice: '199900', filledQty: '0' });
    expect((await broker.listOpenOrders()).map((open) => open.brokerOrderId)).toEqual([placed.brokerOrderId]);
    fake.setPrice('035420', '199800');
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'filled', avgFillPrice: '199900' });
    expect(await broker.listOpenOrders()).toEqual([]);
  });

  it('sells what it holds with a limit order; an IOC limit that cannot trade is canceled at once', async () => {
    const { broker } = newBroker();
    await broker.placeOrder(order({ qty: '5' }));
    const sell = await broker.placeOrder(order({ side: 'sell', qty: '5', orderType: 'limit', limitPrice: '70900' }));
    expect(await broker.getOrder({ brokerOrderId: sell.brokerOrderId })).toMatchObject({ side: 'sell', status: 'filled', avgFillPrice: '71000' });
    expect(await broker.positions()).toEqual([]);
    const ioc = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '60000', timeInForce: 'ioc' }));
    expect(await broker.getOrder({ brokerOrderId: ioc.brokerOrderId })).toMatchObject({ status: 'canceled', timeInForce: 'ioc', filledQty: '0' });
  });

  it('cancels a working order, and refuses to cancel it twice or to cancel an unknown one', async () => {
    const { broker } = newBroker();
    const placed = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '60000' }));
    expect(await broker.cancelOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ brokerOrderId: placed.brokerOrderId, status: 'canceled', filledQty: '0' });
    expect(await broker.listOpenOrders()).toEqual([]);
    const again = await failureOf(broker.cancelOrder({ brokerOrderId: placed.brokerOrderId }));
    expect(again).toBeInstanceOf(BrokerRejectedError);
    expect(again.message).toContain('canceled');
    expect(await failureOf(broker.cancelOrder({ brokerOrderId: '20200101-0000000009' }))).toBeInstanceOf(BrokerRejectedError);
    // The cancel is KIS's own row; it is not an order of ours.
    expect((await broker.getOrder({ brokerOrderId: placed.brokerOrderId.replace(/\d{10}$/, '0000000002') }))).toBeUndefined();
  });

  it('finds an order by its id and by our client order id, and answers undefined for unknown ones', async () => {
    const { broker } = newBroker();
    const request = order({ orderType: 'limit', limitPrice: '50000' });
    const placed = await broker.placeOrder(request);
    expect(await broker.getOrder({ clientOrderId: request.clientOrderId })).toMatchObject({ brokerOrderId: placed.brokerOrderId, clientOrderId: request.clientOrderId, status: 'open' });
    expect(await broker.getOrder({ clientOrderId: randomUUID() })).toBeUndefined();
    expect(await broker.getOrder({ brokerOrderId: 'not-a-kis-id' })).toBeUndefined();
  });

  it('pages through the daily inquiry (15 rows a page on paper)', async () => {
    const { broker, appKey } = newBroker({ cash: '100000000' });
    const placed = [];
    for (let index = 0; index < 17; index += 1) placed.push(await broker.placeOrder(order({ qty: '1', orderType: 'limit', limitPrice: String(50000 + index * 100) })));
    const before = requestsOf(appKey, 'inquire-daily-ccld').length;
    const open = await broker.listOpenOrders();
    expect(open.map((item) => item.brokerOrderId).sort()).toEqual(placed.map((item) => item.brokerOrderId).sort());
    expect(requestsOf(appKey, 'inquire-daily-ccld').slice(before).map((request) => request.trCont)).toEqual(['', 'N']);
  });

  it('reads the account, positions and open orders at once, quotes, and reads daily bars across pages', async () => {
    const { broker } = newBroker({ cash: '1000000' });
    await broker.placeOrder(order({ symbol: '000660', qty: '2' }));
    const resting = await broker.placeOrder(order({ symbol: '000660', qty: '1', orderType: 'limit', limitPrice: '150000' }));
    const snapshot = await broker.snapshot();
    expect(snapshot.account).toMatchObject({ cash: '640000', equity: '1000000' });
    expect(snapshot.positions).toEqual([{ symbol: '000660', qty: '2', avgEntryPrice: '180000', currentPrice: '180000', realizedPnl: '0', currency: 'KRW' }]);
    expect(snapshot.openOrders.map((open) => open.brokerOrderId)).toEqual([resting.brokerOrderId]);
    expect(await broker.quote('005930')).toBe('71000');
    expect(await failureOf(broker.quote('999999'))).toBeInstanceOf(BrokerRejectedError);

    // 150 trading days: two pages of at most 100, newest first on the wire, oldest first here.
    const rows = Array.from({ length: 150 }, (_, index) => {
      const date = new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
      return { stck_bsop_date: date, stck_oprc: String(70000 + index), stck_hgpr: String(71000 + index), stck_lwpr: String(69000 + index), stck_clpr: String(70500 + index), acml_vol: String(1000 + index), acml_tr_pbmn: '0' };
    });
    fake.setBars('005930', rows);
    const bars = await broker.dailyBars('005930', '2025-01-01', '2025-12-31');
    expect(bars).toHaveLength(150);
    expect(bars[0]).toEqual({ date: '2025-01-01', open: '70000', high: '71000', low: '69000', close: '70500', volume: '1000' });
    expect(bars[149]!.date).toBe('2025-05-30');
    expect(await broker.dailyBars('005930', '2025-02-01', '2025-02-03')).toHaveLength(3);
  });
});

describe('refusals and failures', () => {
  it('refuses a buy beyond the cash with KIS message, and no secret or token in it', async () => {
    const { broker, appSecret, tokenStore, appKey } = newBroker({ cash: '100000' });
    const error = await failureOf(broker.placeOrder(order({ qty: '2' })));
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect(error.message).toContain('주문가능금액을 초과 했습니다');
    expect(error.message).toContain('APBK0952');
    const token = (await tokenStore.get(tokenStoreKey('paper', new URL(fake.url).origin, appKey)))!.accessToken;
    for (const text of [error.message, String(error.stack)]) {
      expect(text).not.toContain(appSecret);
      expect(text).not.toContain(token);
    }
    expect(await broker.listOpenOrders()).toEqual([]);
  });

  it('refuses what KIS cash orders cannot carry before calling KIS: fractions, stops, gtc, brackets', async () => {
    const { broker, appKey } = newBroker();
    const before = requestsOf(appKey, 'order-cash').length;
    for (const fields of [{ qty: '1.5' }, { orderType: 'stop' as const, stopPrice: '72000' }, { orderType: 'limit' as const, limitPrice: '70000', timeInForce: 'gtc' as const }, { bracket: { takeProfit: '80000', stopLoss: '60000', stopLossLimit: null } }]) {
      expect(await failureOf(broker.placeOrder(order(fields)))).toBeInstanceOf(BrokerRejectedError);
    }
    expect(requestsOf(appKey, 'order-cash').length).toBe(before);
  });

  it('refuses a sell of more than is held, and a wrong secret', async () => {
    const { broker, make } = newBroker();
    const oversold = await failureOf(broker.placeOrder(order({ side: 'sell', qty: '1' })));
    expect(oversold).toBeInstanceOf(BrokerRejectedError);
    expect(oversold.message).toContain('주문 가능한 수량을 초과하였습니다');
    const wrong = make({ appSecret: `${SECRET_PREFIX}wrong`, tokenStore: createMemoryTokenStore() });
    const refused = await failureOf(wrong.account());
    expect(refused).toBeInstanceOf(BrokerRejectedError);
    expect(refused.message).toContain('유효하지 않은 AppKey');
  });

  it('reads a 5xx that is not KIS speaking as unavailable, and carries on after it', async () => {
    const { broker } = newBroker();
    await broker.account();
    fake.failNext(502);
    expect(await failureOf(broker.account())).toBeInstanceOf(BrokerUnavailableError);
    fake.failNext(500);
    expect(await failureOf(broker.positions())).toBeInstanceOf(BrokerUnavailableError);
    expect(await broker.account()).toMatchObject({ cash: '10000000' });
  });

  it('gives up on a call that never answers: unavailable after the timeout', async () => {
    const { broker, make } = newBroker();
    // The token first, by an adapter with the roomy timeout: only the call that hangs meets the short one.
    await broker.account();
    fake.hangNext();
    const error = await failureOf(make({ timeoutMs: 300 }).placeOrder(order()));
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).toContain('did not answer POST /uapi/domestic-stock/v1/trading/order-cash within 300 ms');
  });

  it('reads a refused connection as unavailable', async () => {
    const broker = createKisBroker({ userId: 1, mode: 'paper', appKey: 'PSNOBODY', appSecret: `${SECRET_PREFIX}nobody`, accountNo: '50000000', productCode: '01', baseUrl: 'http://127.0.0.1:1', keyLimiters, hostLimiters, tokenStore: createMemoryTokenStore() });
    const error = await failureOf(broker.account());
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).not.toContain(SECRET_PREFIX);
  });

  it('backs off after "too many requests" (EGW00201) and succeeds; unavailable once the retries run out', async () => {
    const { broker, appKey } = newBroker({ maxRateLimitRetries: 2 });
    await broker.account();
    const before = requestsOf(appKey, 'inquire-balance').length;
    fake.rateLimitNext(2);
    expect(await broker.account()).toMatchObject({ cash: '10000000' });
    expect(requestsOf(appKey, 'inquire-balance').length - before).toBe(3);
    fake.rateLimitNext(3);
    const error = await failureOf(broker.account());
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).toContain('EGW00201');
    expect(requestsOf(appKey, 'inquire-balance').length - before).toBe(6);
  });

  it('retries an order KIS refused as too many requests (it was not taken), and places it once', async () => {
    const { broker } = newBroker();
    await broker.account();
    fake.rateLimitNext(1);
    const placed = await broker.placeOrder(order({ qty: '1' }));
    expect(await broker.listOpenOrders()).toEqual([]);
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'filled', qty: '1' });
    expect(placed.brokerOrderId).toMatch(/-0000000001$/);
  });
});

describe('an order whose placement answer was lost', () => {
  /**
   * An account whose adapter stands three minutes ahead of the fake (past the two-minute window in
   * which a lost order is looked for), and a way to place orders whose answers KIS loses.
   */
  const lossyAccount = () => {
    const account = newBroker({ now: () => new Date(testNow().getTime() + 180_000) });
    const placeLost = async (request: BrokerOrderRequest) => {
      const sentAt = testNow();
      fake.loseAnswerNext({ method: 'POST', path: KIS_PATHS.orderCash });
      expect(await failureOf(account.broker.placeOrder(request))).toBeInstanceOf(BrokerUnavailableError);
      return { clientOrderId: request.clientOrderId, intent: { symbol: request.symbol, side: request.side, qty: request.qty, sentAt } };
    };
    return { ...account, placeLost };
  };

  it('is found among the day\'s orders by symbol, side, quantity and time, and linked; a twin placed and linked normally is not taken for it', async () => {
    const { broker, placeLost } = lossyAccount();
    const lost = await placeLost(order({ qty: '4' }));
    const twin = await broker.placeOrder(order({ qty: '4' }));
    // By the client order id alone, as before: KIS knows nothing of it.
    expect(await broker.getOrder({ clientOrderId: lost.clientOrderId })).toBeUndefined();
    const found = await broker.getOrder(lost);
    expect(found).toMatchObject({ clientOrderId: lost.clientOrderId, status: 'filled', filledQty: '4', qty: '4' });
    expect(found!.brokerOrderId).toMatch(/^\d{8}-0000000001$/);
    expect(found!.brokerOrderId).not.toBe(twin.brokerOrderId);
    // Linked: found by the client order id from now on, and named in the order's events.
    expect(await broker.getOrder({ clientOrderId: lost.clientOrderId })).toMatchObject({ brokerOrderId: found!.brokerOrderId });
    expect(await broker.getOrder({ brokerOrderId: found!.brokerOrderId })).toMatchObject({ clientOrderId: lost.clientOrderId });
    // Another quantity fits nothing.
    expect(await broker.getOrder({ clientOrderId: 'other', intent: { ...lost.intent, qty: '5' } })).toBeUndefined();
  });

  it('is not guessed when several orders fit: ambiguous, with their ids; and not looked for before the window has passed', async () => {
    const { broker, make, placeLost } = lossyAccount();
    const first = await placeLost(order({ side: 'buy', qty: '6' }));
    await placeLost(order({ side: 'buy', qty: '6' }));
    const ambiguous = await failureOf(broker.getOrder(first));
    expect(ambiguous).toBeInstanceOf(BrokerOrderAmbiguousError);
    expect([...(ambiguous as BrokerOrderAmbiguousError).candidates].sort()).toEqual([expect.stringMatching(/-0000000001$/), expect.stringMatching(/-0000000002$/)]);
    // An adapter at the fake's own time: the order could still be on its way, so nothing is decided.
    const early = await failureOf(make({ now: testNow }).getOrder(first));
    expect(early).toBeInstanceOf(BrokerUnavailableError);
  });
});

describe('the limiters', () => {
  it('holds the calls of two keys on one host to the host budget, and a key of many adapters to its own', async () => {
    const hosts = createLimiterRegistry({ requestsPerMinute: 60, burst: 2 });
    const keys = createLimiterRegistry({ requestsPerMinute: 60, burst: 3 });
    cleanups.push(() => hosts.close(), () => keys.close());
    const first = newBroker();
    const second = newBroker();
    // Tokens first, through roomy limiters, so only the calls under test meet the small ones.
    await Promise.all([first.broker.account(), second.broker.account()]);
    const before = fake.requests.length;
    const onHost = [first.make({ hostLimiters: hosts }), second.make({ hostLimiters: hosts })];
    const calls = Array.from({ length: 6 }, (_, index) => onHost[index % 2]!.account().then(() => 'answered', (error: unknown) => error));
    const hostLimiter = hosts.forKey(fake.url);
    await until(() => ({ sent: fake.requests.length - before, waiting: hostLimiter.waiting }), ({ sent, waiting }) => sent === 2 && waiting === 4);
    hosts.close();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((outcome) => outcome === 'answered')).toHaveLength(2);
    expect(outcomes.filter((outcome) => outcome instanceof BrokerUnavailableError)).toHaveLength(4);

    // One key, three adapters (three users of it): one budget of 3.
    const sameKey = [first.make({ keyLimiters: keys }), first.make({ keyLimiters: keys, userId: 8 }), first.make({ keyLimiters: keys, userId: 9 })];
    const keyBefore = fake.requests.length;
    const keyCalls = Array.from({ length: 7 }, (_, index) => sameKey[index % 3]!.positions().then(() => 'answered', (error: unknown) => error));
    const keyLimiter = keys.forKey(`${fake.url}|${first.appKey}`);
    await until(() => ({ sent: fake.requests.length - keyBefore, waiting: keyLimiter.waiting }), ({ sent, waiting }) => sent === 3 && waiting === 4);
    keys.close();
    expect((await Promise.all(keyCalls)).filter((outcome) => outcome === 'answered')).toHaveLength(3);
  });
});

describe('secrets', () => {
  it('keeps the app secret and every token out of error messages, even ones the server echoes', async () => {
    const { broker, appSecret, tokenStore, appKey } = newBroker();
    await broker.account();
    const token = (await tokenStore.get(tokenStoreKey('paper', new URL(fake.url).origin, appKey)))!.accessToken;
    fake.refuseNext('EGW00999', `echo ${appSecret} Bearer ${token}`);
    const echoed = await failureOf(broker.account());
    expect(echoed.message).toContain('echo [redacted]');
    expect(echoed.message).not.toContain(appSecret);
    expect(echoed.message).not.toContain(token);
    expect(errorsSeen.length).toBeGreaterThan(10);
    for (const error of errorsSeen) expect(`${error.message} ${String(error.stack)}`).not.toMatch(new RegExp(`${SECRET_PREFIX}|fake-kis-token-`));
  });
});

describe('the access token', () => {
  it('is issued once and shared by every adapter of the key (one token store)', async () => {
    const { broker, make, appKey } = newBroker();
    const before = fake.tokenIssuances;
    await Promise.all([broker.account(), broker.positions(), make().account(), make({ userId: 8 }).listOpenOrders()]);
    expect(fake.tokenIssuances - before).toBe(1);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(1);
  });

  it('is renewed once when KIS ends it early, and the calls refused with it succeed; concurrent ones share the renewal', async () => {
    const { broker, appKey } = newBroker();
    await broker.account();
    fake.expireTokens();
    fake.allowTokenIssue(appKey);
    const before = fake.tokenIssuances;
    const answers = await Promise.all([broker.account(), broker.positions(), broker.listOpenOrders(), broker.quote('005930'), broker.account()]);
    expect(answers[0]).toMatchObject({ cash: '10000000' });
    expect(answers[3]).toBe('71000');
    expect(fake.tokenIssuances - before).toBe(1);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(2);
  });

  it('is unavailable when the token ended and KIS will not issue another within the minute', async () => {
    const { broker } = newBroker();
    await broker.account();
    fake.expireTokens();
    const error = await failureOf(broker.account());
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).toContain('EGW00133');
    expect(fake.tokenRefusals).toBeGreaterThan(0);
  });

  it('keeps serving the old token when an early renewal is refused as too soon, and does not ask again on every call', async () => {
    let clock = testNow().getTime();
    const { broker, appKey } = newBroker({ now: () => new Date(clock) });
    await broker.account();
    // Five minutes before the day-long token ends, by the adapter's clock: inside the renewal margin.
    clock += 86_400_000 - 300_000;
    const refusalsBefore = fake.tokenRefusals;
    expect(await broker.account()).toMatchObject({ cash: '10000000' });
    expect(await broker.positions()).toEqual([]);
    expect(fake.tokenRefusals - refusalsBefore).toBe(1);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(2);
  });

  it('is renewed before it expires, by the lifetime KIS gave it', async () => {
    // One renewal a round, while the old token still had 5 s to live; every call succeeded.
    expect(await renewOnShortTokens([{}], 2)).toEqual([1, 2, 3]);
  });
});

describe('the access token kept in the database, shared by every instance', () => {
  let opened: Awaited<ReturnType<typeof openTestDatabase>>;
  const cipher = createKeyCipher({ secret: 'kis-token-test-secret', salt: 'kis-token-test-salt' });
  beforeAll(async () => {
    opened = await openTestDatabase();
  });
  afterAll(() => opened?.close());

  /** What one service instance brings: its own store over the shared database, its own issuances in flight. */
  const instance = () => ({ tokenStore: createKisTokenStore({ db: opened.database.db, cipher, clock: { now: testNow } }), tokenInFlight: new Map<string, Promise<KisStoredToken>>() });
  const keyOf = (appKey: string, on: FakeKis = fake) => tokenStoreKey('paper', new URL(on.url).origin, appKey);
  const rowOf = async (appKey: string) => (await opened.database.db.select().from(brokerTokens).where(eq(brokerTokens.keyHash, keyOf(appKey))))[0];

  /**
   * Two instances of one account whose token was issued, their clock then moved to five minutes
   * before the day-long token ends (inside the renewal margin); `advance` moves it on.
   */
  const twoInstancesNearExpiry = async () => {
    let clock = testNow().getTime();
    const now = () => new Date(clock);
    const { broker, make, appKey } = newBroker({ ...instance(), now });
    const other = make({ ...instance(), now });
    await broker.account();
    clock += 86_400_000 - 300_000;
    return { broker, other, appKey, advance: (ms: number) => (clock += ms) };
  };

  it('is issued once for two instances asking at the same moment (none refused), and a restarted instance uses it without asking KIS', async () => {
    const { broker, make, appKey } = newBroker(instance());
    const other = make(instance());
    const refusalsBefore = fake.tokenRefusals;
    await Promise.all([broker.account(), other.account(), broker.positions(), other.listOpenOrders()]);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(1);
    expect(fake.tokenRefusals - refusalsBefore).toBe(0);
    // A restart: a fresh instance over the same database, nothing in memory.
    const restarted = make(instance());
    expect(await restarted.account()).toMatchObject({ cash: '10000000' });
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(1);
  });

  it('keeps neither the app key, the app secret nor the token in clear in its row', async () => {
    const { broker, appKey, appSecret } = newBroker(instance());
    await broker.account();
    const row = await rowOf(appKey);
    expect(row).toBeDefined();
    const token = cipher.decrypt(row!.accessTokenEnc);
    expect(token).toMatch(/^fake-kis-token-/);
    const stored = JSON.stringify(row);
    for (const secret of [appKey, appSecret, token!, 'fake-kis-token-']) expect(stored).not.toContain(secret);
    // Its expiry is kept: a day after the issue (KIS's expiry text has whole seconds, and the row's
    // issue time is taken once the answer is in, a moment later on a busy machine).
    expect(row!.expiresAt.getTime() - row!.issuedAt.getTime()).toBeGreaterThan(86_400_000 - 60_000);
    expect(row!.expiresAt.getTime() - row!.issuedAt.getTime()).toBeLessThanOrEqual(86_400_000);
  });

  it('near its expiry is renewed by one instance while the others keep using the old one until the new one is saved', async () => {
    const { broker, other, appKey, advance } = await twoInstancesNearExpiry();
    const first = (await rowOf(appKey))!.accessTokenEnc;
    // A third instance is issuing.
    const clock = advance(0);
    fake.allowTokenIssue(appKey);
    const third = instance().tokenStore;
    expect(await third.claimIssue(keyOf(appKey), 'third-instance', clock, 60_000)).toBe(true);
    expect(await other.account()).toMatchObject({ cash: '10000000' });
    expect(await broker.positions()).toEqual([]);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(1);
    // The third gave up without issuing: the next renewal (a few seconds on) is one instance's.
    await third.releaseIssue(keyOf(appKey), 'third-instance');
    advance(5_000);
    await Promise.all([broker.account(), other.account(), broker.listOpenOrders(), other.positions()]);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(2);
    expect((await rowOf(appKey))!.accessTokenEnc).not.toBe(first);
    await Promise.all([broker.account(), other.account()]);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(2);
  });

  it('keeps the old token when KIS refuses an early renewal as too soon, and no other instance asks again within the minute', async () => {
    const { broker, other, appKey, advance } = await twoInstancesNearExpiry();
    const refusalsBefore = fake.tokenRefusals;
    expect(await broker.account()).toMatchObject({ cash: '10000000' });
    expect(fake.tokenRefusals - refusalsBefore).toBe(1);
    expect(await other.account()).toMatchObject({ cash: '10000000' });
    advance(30_000);
    expect(await other.positions()).toEqual([]);
    expect(fake.tokenRefusals - refusalsBefore).toBe(1);
    expect(requestsOf(appKey, '/oauth2/tokenP')).toHaveLength(2);
  });

  it('is renewed before it expires, by the lifetime KIS gave it, by one instance at a time', async () => {
    // One renewal a round for the two instances, before the old token ended; every call of both succeeded.
    expect(await renewOnShortTokens([instance(), instance()], 2)).toEqual([1, 2, 3]);
  });
});

describe('events by polling', () => {
  it('reports open, then the fill of a resting order once, however many readings follow', async () => {
    let polls = 0;
    const { broker } = newBroker({ onPoll: () => void (polls += 1) });
    const { events } = collectEvents(broker);
    await until(() => polls, (count) => count >= 1);
    const request = order({ qty: '4', orderType: 'limit', limitPrice: '70000' });
    const placed = await broker.placeOrder(request);
    await until(() => events.map((event) => event.type), (types) => types.includes('open'));
    fake.setPrice('005930', '69900');
    fake.setPrice('005930', '71000');
    await until(() => events.map((event) => event.type), (types) => types.includes('fill'));
    const seen = polls;
    await until(() => polls, (count) => count >= seen + 3);
    const fills = events.filter((event) => event.type === 'fill');
    expect(fills).toHaveLength(1);
    expect(fills[0]).toMatchObject({
      broker: 'kis',
      user_id: 7,
      asset_class: 'kr_equity',
      mode: 'paper',
      broker_order_id: placed.brokerOrderId,
      client_order_id: request.clientOrderId,
      symbol: '005930',
      status: 'filled',
      filled_qty: '4',
      avg_fill_price: '70000',
      fill: { execution_id: `${placed.brokerOrderId}:4`, qty: '4', price: '70000', fee: '0' },
    });
  });

  it('reports partial fills by the increase of the cumulative quantity, and a cancel', async () => {
    let polls = 0;
    const { broker, accountNo } = newBroker({ onPoll: () => void (polls += 1) });
    const { events } = collectEvents(broker);
    await until(() => polls, (count) => count >= 1);
    const placed = await broker.placeOrder(order({ qty: '10', orderType: 'limit', limitPrice: '60000' }));
    const odno = placed.brokerOrderId.split('-')[1]!;
    await until(() => events.map((event) => event.type), (types) => types.includes('open'));
    fake.books.fillPart(accountNo, '01', odno, '3', '60000');
    fake.books.fillPart(accountNo, '01', odno, '2', '59900');
    await until(() => events.filter((event) => event.type === 'partial_fill').reduce((sum, event) => sum + Number(event.fill!.qty), 0), (qty) => qty === 5);
    await broker.cancelOrder({ brokerOrderId: placed.brokerOrderId });
    await until(() => events.map((event) => event.type), (types) => types.includes('canceled'));
    const mine = events.filter((event) => event.broker_order_id === placed.brokerOrderId);
    const partials = mine.filter((event) => event.type === 'partial_fill');
    // Two fills between two readings come as one (the inquiry sums them); either way they add up to 5.
    expect(new Set(partials.map((event) => event.fill!.execution_id)).size).toBe(partials.length);
    expect(partials.at(-1)).toMatchObject({ filled_qty: '5', fill: { execution_id: `${placed.brokerOrderId}:5` } });
    expect(mine.at(-1)).toMatchObject({ type: 'canceled', status: 'canceled', filled_qty: '5' });
  });

  it('reports a fill that happened while nobody was polling exactly once, on the next reading', async () => {
    let polls = 0;
    let gate: Promise<void> | undefined;
    let openGate: () => void = () => undefined;
    // The poller waits after a reading for what onPoll returns: the test holds it there.
    const { broker, make } = newBroker({ onPoll: () => ((polls += 1), gate) });
    const { events } = collectEvents(broker);
    await until(() => polls, (count) => count >= 1);
    const placed = await broker.placeOrder(order({ qty: '2', orderType: 'limit', limitPrice: '65000' }));
    await until(() => events.map((event) => event.type), (types) => types.includes('open'));
    gate = new Promise<void>((resolve) => (openGate = resolve));
    const held = polls;
    await until(() => polls, (count) => count === held + 1);
    // Nobody polls now: the resting order fills, and a market order is placed and fills.
    fake.setPrice('005930', '64000');
    fake.setPrice('005930', '71000');
    const market = await broker.placeOrder(order({ qty: '1' }));
    expect(events.filter((event) => event.type === 'fill')).toEqual([]);
    gate = undefined;
    openGate();
    await until(() => events.filter((event) => event.type === 'fill').length, (count) => count >= 2);
    const seen = polls;
    await until(() => polls, (count) => count >= seen + 3);
    const fills = events.filter((event) => event.type === 'fill');
    expect(fills.map((event) => event.broker_order_id).sort()).toEqual([placed.brokerOrderId, market.brokerOrderId].sort());
    expect(fills.find((event) => event.broker_order_id === placed.brokerOrderId)).toMatchObject({ fill: { qty: '2', price: '65000' } });
    // A new stream (a restart) reports from its start on: nothing of the old fills again. KIS
    // gives order times to the second, so an order of the stream's first second counts as new:
    // this restart's clock runs five seconds ahead to be clear of that.
    let restartPolls = 0;
    const restarted = collectEvents(make({ onPoll: () => void (restartPolls += 1), now: () => new Date(testNow().getTime() + 5_000) }));
    await until(() => restartPolls, (count) => count >= 3);
    expect(restarted.events).toEqual([]);
  });

  it('replays the day on request (replayToday) with the same execution ids, for the service to drop by them', async () => {
    let polls = 0;
    const { broker, make } = newBroker();
    const placed = await broker.placeOrder(order({ qty: '1' }));
    const replaying = make({ replayToday: true, onPoll: () => void (polls += 1) });
    const { events } = collectEvents(replaying);
    await until(() => polls, (count) => count >= 1);
    expect(events.filter((event) => event.type === 'fill').map((event) => event.fill!.execution_id)).toEqual([`${placed.brokerOrderId}:1`]);
  });

  it('tells apart the same order number on two days, and reports yesterday\'s working order expired on the new day', async () => {
    // A fake and an adapter on one clock of the test's: 10:00 in Seoul on two days.
    let clock = Date.parse('2025-06-12T01:00:00Z');
    const daily = await startFakeKis({ prices: { '005930': '71000' }, now: () => new Date(clock) });
    try {
      let polls = 0;
      const { broker } = newBroker({ on: daily, now: () => new Date(clock), onPoll: () => void (polls += 1) });
      const { events } = collectEvents(broker);
      await until(() => polls, (count) => count >= 1);
      const first = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '60000' }));
      expect(first.brokerOrderId).toBe('20250612-0000000001');
      await until(() => events.map((event) => `${event.type} ${event.broker_order_id}`), (seen) => seen.includes('open 20250612-0000000001'));
      clock += 86_400_000;
      const second = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '61000' }));
      // KIS numbered it 1 again: the date keeps the two apart.
      expect(second.brokerOrderId).toBe('20250613-0000000001');
      await until(
        () => events.map((event) => `${event.type} ${event.broker_order_id}`),
        (seen) => seen.includes('expired 20250612-0000000001') && seen.includes('open 20250613-0000000001'),
      );
      expect(await broker.getOrder({ brokerOrderId: first.brokerOrderId })).toMatchObject({ status: 'expired', limitPrice: '60000' });
      expect(await broker.getOrder({ brokerOrderId: second.brokerOrderId })).toMatchObject({ status: 'open', limitPrice: '61000' });
      expect((await broker.listOpenOrders()).map((open) => open.brokerOrderId)).toEqual([second.brokerOrderId]);
      expect(events.filter((event) => event.type === 'expired')).toHaveLength(1);
    } finally {
      await daily.close();
    }
  });

  it('ends when the signal aborts', async () => {
    const { broker } = newBroker();
    const { done, stop } = collectEvents(broker);
    stop();
    await done;
  });
});
