// BROKER_MODE=real end to end over HTTP: keys that name the fake Alpaca and the fake KIS on
// 127.0.0.1 (on the allow-list), their test, orders through the same gates to the broker the key
// names, fills taken in by the leased consumer of each account (Alpaca's stream, KIS's polling),
// cancels, refusals, an unreachable broker, a crypto key on the fake Binance through ccxt (fills
// by its order stream, watchOrders), and streams that drop while an order fills (the fill arrives
// once, by reconciliation after the reconnect).
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { equitySnapshots, orderFills, orders } from '../../server/db/schema/index.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { capturedLogger } from '../support/logs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const alpacaKey = { keyId: `PKTEST${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
const kisKey = { appKey: `PSTEST${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000001', productCode: '01' };
const binanceKey = { apiKey: `bn${randomBytes(8).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };
const captured = capturedLogger('debug');

let alpaca: FakeAlpaca;
let kis: FakeKis;
let binance: FakeBinance;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...alpacaKey, cash: '100000' }], prices: { AAPL: '200', MSFT: '400' } });
  kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { '005930': '96500' } });
  binance = await startFakeBinance({ accounts: [{ ...binanceKey, balances: { USDT: '100000' } }], prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });
  server = await startTestServer(
    {
      BROKER_MODE: 'real',
      BROKER_BASE_URLS: `us_broker:paper=${alpaca.url},kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url}`,
      BROKER_CRYPTO_POLL_INTERVAL_MS: '200',
      BROKER_US_DATA_URL: alpaca.url,
      // Polling draws on the key's request budget like every other call: kept well under it.
      BROKER_KR_POLL_INTERVAL_MS: '300',
      BROKER_KR_REQUESTS_PER_SEC: '20',
      BROKER_STREAM_SILENCE_SEC: '5',
      RISK_MARKET_HOURS: 'ignore',
      SIM_TICK_INTERVAL_MS: '0',
      LOG_LEVEL: 'debug',
      // No minute's jobs: the stream-gap tests show a fill taken in by the reconcile that follows a
      // reconnect, which the minute's reconcile of every account would otherwise race to (the
      // reconciler's own tests call it).
      WORKERS_IN_PROCESS: 'false',
    },
    undefined,
    { logger: captured.logger },
  );
  alice = await newUser(server, { prefix: 'real_alice' });
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([alpaca?.close(), kis?.close(), binance?.close()]);
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const usKey = { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true };
const krKey = { asset_class: 'kr_equity', exchange: 'kr_broker', paper_mode: true, account_no: `${kisKey.accountNo}-${kisKey.productCode}`, account_product_code: kisKey.productCode };
const fillsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => fill.qty);
const orderRow = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const getOrder = (assetClass: string, brokerOrderId: string) => call('GET', `/api/equity/orders/${encodeURIComponent(brokerOrderId)}?asset_class=${assetClass}`);
const untilStatus = (assetClass: string, brokerOrderId: string, status: string) =>
  waitFor(
    () => getOrder(assetClass, brokerOrderId),
    (res) => res.body?.status === status,
  );

describe('us_equity on the Alpaca-style broker', () => {
  it('tests a key against the broker: ok with its account; a wrong secret is ok=false with the broker’s reason and no secret', async () => {
    const good = await call('POST', '/api/exchange-keys/test', { ...usKey, api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url });
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ ok: true, equity: 100000, currency: 'USD', error: null });
    const wrongSecret = `wrong-${alpacaKey.secretKey}`;
    const bad = await call('POST', '/api/exchange-keys/test', { ...usKey, api_key: alpacaKey.keyId, api_secret: wrongSecret, base_url: alpaca.url });
    expect(bad.status, bad.text).toBe(200);
    expect(bad.body).toMatchObject({ ok: false, equity: null, error: expect.stringMatching(/forbidden|refused/i) });
    expect(bad.text).not.toContain(wrongSecret);
    expect(bad.text).not.toContain(alpacaKey.secretKey);
    // The broker was asked (the simulator would have said ok to any secret).
    expect(alpaca.requests.some((request) => request.url === '/v2/account')).toBe(true);
  });

  it('registers the key; its stream is taken in; a market order goes to the broker (201 accepted) and fills through the stream once', async () => {
    const created = await call('POST', '/api/exchange-keys', { ...usKey, api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url });
    expect(created.status, created.text).toBe(201);
    await waitFor(
      () => Promise.resolve(alpaca.listenerCount(alpacaKey.keyId)),
      (count) => count === 1,
    );
    const res = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'us-market-1' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'accepted', exchange: 'alpaca', client_order_id: 'us-market-1' });
    // Alpaca's order id, not the simulator's.
    expect(alpaca.books.getByClientOrderId(alpacaKey.keyId, 'us-market-1').id).toBe(res.body.broker_order_id);
    const filled = await untilStatus('us_equity', res.body.broker_order_id, 'filled');
    expect(filled.body).toMatchObject({ filled_qty: 2, avg_fill_price: 200 });
    await server.services.orders.idle();
    expect(await fillsOf('us-market-1')).toEqual(['2']);
    const positions = await call('GET', '/api/equity/positions?asset_class=us_equity');
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: 'AAPL', qty: 2, exchange: 'alpaca' })]);
    const account = await call('GET', '/api/equity/account?asset_class=us_equity');
    expect(account.body).toMatchObject({ broker: 'alpaca', paper: true, currency: 'USD' });
    // The kill switch looked at the broker's account after the fill (its day-start snapshot is the broker's equity).
    const snapshot = await waitFor(
      async () => (await server.services.db.select().from(equitySnapshots).where(and(eq(equitySnapshots.userId, alice.user.id), eq(equitySnapshots.assetClass, 'us_equity'))))[0],
      (row) => row !== undefined,
    );
    expect(Number(snapshot!.equity)).toBe(Number(alpaca.books.account(alpacaKey.keyId).equity));
  });

  it('cancels a resting limit order at the broker (204), and the cancel comes back through the stream', async () => {
    const resting = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'limit', limit_price: 150, time_in_force: 'gtc', client_order_id: 'us-limit-1' });
    expect(resting.status, resting.text).toBe(201);
    const canceled = await call('DELETE', `/api/equity/orders/${resting.body.broker_order_id}?asset_class=us_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    await untilStatus('us_equity', resting.body.broker_order_id, 'canceled');
    expect(alpaca.books.getByClientOrderId(alpacaKey.keyId, 'us-limit-1').status).toBe('canceled');
  });

  it('answers a broker refusal 422 BROKER_REJECTED (marked rejected) and a broker failing 502 BROKER_UNAVAILABLE (left pending, then settled by the reconciler)', async () => {
    alpaca.failNext(422, 'qty must be a whole number for this asset', { method: 'POST', path: '/v2/orders' });
    const refused = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-refused-1' });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.code).toBe('BROKER_REJECTED');
    expect(refused.body.message).toContain('qty must be a whole number');
    expect(await orderRow('us-refused-1')).toMatchObject({ status: 'rejected', reason: expect.stringContaining('qty must be a whole number') });

    alpaca.failNext(503, 'service unavailable', { method: 'POST', path: '/v2/orders' });
    const down = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-down-1' });
    expect(down.status, down.text).toBe(502);
    expect(down.body.code).toBe('BROKER_UNAVAILABLE');
    // A 5xx does not say the order was not taken: it stays pending for the reconciler.
    expect(await orderRow('us-down-1')).toMatchObject({ status: 'pending', reason: 'broker_unavailable' });
    // A copy while the outcome is unknown gets the same 502 at once (not a pending 201 after a wait).
    const copy = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-down-1' });
    expect(copy.status, copy.text).toBe(502);
    expect(copy.body.code).toBe('BROKER_UNAVAILABLE');
    expect(alpaca.books.listOrders(alpacaKey.keyId, { status: 'all', nested: false }).some((order) => order.client_order_id === 'us-down-1')).toBe(false);
    // Not at the broker: once old enough (its submission moved back a few minutes here), settled as not placed, and audited.
    expect(await server.services.orders.reconcile()).toMatchObject({ settled: 0 });
    await server.services.db.update(orders).set({ submittedAt: new Date(Date.now() - 5 * 60_000) }).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, 'us-down-1')));
    expect((await server.services.orders.reconcile()).settled).toBeGreaterThanOrEqual(1);
    expect(await orderRow('us-down-1')).toMatchObject({ status: 'rejected', reason: 'not_at_broker' });
    const trail = await call('GET', '/api/audit?client_order_id=us-down-1');
    expect(trail.body.items.map((event: { action: string }) => event.action)).toEqual(expect.arrayContaining(['order.placed', 'order.unconfirmed', 'order.reconciled']));
  });

  it('takes a bracket whose stop leg trails, which Alpaca cannot hold, as an entry at Alpaca alone whose exits the order emulator holds', async () => {
    // Changed with the emulated exits (it used to be 422 BROKER_REJECTED): their own tests are order-emulator-stops.test.ts.
    const placed = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-trail-leg-1', bracket: { take_profit: 250, trail_percent: 5 } });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.metadata).toMatchObject({ emulated_exits: true });
    // At Alpaca: the entry alone, no legs.
    const atBroker = alpaca.books.listOrders(alpacaKey.keyId, { status: 'all', nested: false }).filter((order) => order.client_order_id.startsWith('us-trail-leg-1'));
    expect(atBroker.map((order) => [order.client_order_id, order.order_class])).toEqual([['us-trail-leg-1', '']]);
    await waitFor(
      () => orderRow('us-trail-leg-1:sl'),
      (row) => row !== undefined,
    );
    expect(await orderRow('us-trail-leg-1:sl')).toMatchObject({ status: 'open', orderType: 'trailing_stop', metadata: expect.objectContaining({ emulated: true, trail_percent: 5 }) });
    expect(await orderRow('us-trail-leg-1:tp')).toMatchObject({ status: 'open', orderType: 'limit', limitPrice: '250' });
    // Canceling one leg ends both (no broker call: the emulator holds them).
    const leg = await orderRow('us-trail-leg-1:sl');
    expect((await call('DELETE', `/api/equity/orders/${leg!.brokerOrderId}?asset_class=us_equity`)).status).toBe(204);
    expect(await orderRow('us-trail-leg-1:tp')).toMatchObject({ status: 'canceled' });
  });

  it('keeps an order the broker took though its answer failed: 502, pending, then linked and filled once by the reconciler', async () => {
    alpaca.takeThenFailNext(502, 'bad gateway', { method: 'POST', path: '/v2/orders' });
    const lost = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-taken-1' });
    expect(lost.status, lost.text).toBe(502);
    expect(lost.body.code).toBe('BROKER_UNAVAILABLE');
    const taken = alpaca.books.getByClientOrderId(alpacaKey.keyId, 'us-taken-1');
    expect(taken.status).toBe('filled');
    // Not rejected: the broker's stream may already have brought its fill in; the reconciler takes it otherwise.
    expect((await orderRow('us-taken-1'))?.status).not.toBe('rejected');
    await server.services.orders.reconcile();
    const row = await orderRow('us-taken-1');
    expect(row).toMatchObject({ status: 'filled', brokerOrderId: taken.id });
    expect(await fillsOf('us-taken-1')).toEqual(['1']);
    // A retry of the request answers the order, not a second one.
    const again = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-taken-1' });
    expect(again.status, again.text).toBe(201);
    expect(again.body.broker_order_id).toBe(taken.id);
    expect(alpaca.books.listOrders(alpacaKey.keyId, { status: 'all', nested: false }).filter((order) => order.client_order_id === 'us-taken-1')).toHaveLength(1);
  });

  it('takes a fill made while the stream was down exactly once: reconciled after the reconnect, a redelivery adds nothing', async () => {
    const resting = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'MSFT', side: 'buy', qty: 3, order_type: 'limit', limit_price: 390, time_in_force: 'gtc', client_order_id: 'us-gap-1' });
    expect(resting.status, resting.text).toBe(201);
    await untilStatus('us_equity', resting.body.broker_order_id, 'open');
    const connectionsBefore = alpaca.streamConnections;
    // The stream drops and stays down (reconnections refused) while the order fills at the broker.
    alpaca.dropStreams(1_000);
    await waitFor(
      () => Promise.resolve(alpaca.listenerCount(alpacaKey.keyId)),
      (count) => count === 0,
    );
    alpaca.setPrice('MSFT', '385');
    expect(alpaca.books.getByClientOrderId(alpacaKey.keyId, 'us-gap-1').status).toBe('filled');
    expect((await orderRow('us-gap-1'))?.status).not.toBe('filled');
    // Back up: the next reconnection is let through.
    alpaca.dropStreams(0);
    await waitFor(
      () => Promise.resolve(alpaca.listenerCount(alpacaKey.keyId)),
      (count) => count === 1,
      30_000,
    );
    expect(alpaca.streamConnections).toBeGreaterThan(connectionsBefore);
    const filled = await untilStatus('us_equity', resting.body.broker_order_id, 'filled');
    expect(filled.body).toMatchObject({ filled_qty: 3 });
    expect(await fillsOf('us-gap-1')).toEqual(['3']);
    // Taken by the reconciliation that follows the reconnect (not the minute's sweep of every account).
    expect(captured.lines.some((line) => line.msg === 'reconciled the account with its broker' && line.why === 'stream reconnected' && line.assetClass === 'us_equity')).toBe(true);
    // The broker sends everything again (a duplicate delivery); an order placed after it shows the
    // redelivered updates were taken in before it (one socket, in order).
    alpaca.redeliver(alpacaKey.keyId);
    const after = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'us-after-gap' });
    expect(after.status, after.text).toBe(201);
    await untilStatus('us_equity', after.body.broker_order_id, 'filled');
    await server.services.orders.idle();
    expect(await fillsOf('us-gap-1')).toEqual(['3']);
    expect(await fillsOf('us-market-1')).toEqual(['2']);
    // AAPL: us-market-1's 2, us-trail-leg-1's entry 1, us-taken-1's 1 (taken by the reconciler), us-after-gap's 1.
    const positions = await call('GET', '/api/equity/positions?asset_class=us_equity');
    expect(positions.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ symbol: 'MSFT', qty: 3 }), expect.objectContaining({ symbol: 'AAPL', qty: 5 })]));
  });
});

describe('kr_equity on the KIS-style broker', () => {
  it('registers the key (tested first), fills a market order by polling, cancels a resting one, and answers an unreachable broker 502', async () => {
    const tested = await call('POST', '/api/exchange-keys/test', { ...krKey, api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url });
    expect(tested.body, tested.text).toMatchObject({ ok: true, currency: 'KRW' });
    const created = await call('POST', '/api/exchange-keys', { ...krKey, api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url });
    expect(created.status, created.text).toBe(201);
    // The account's poller is running once it reads the day's orders.
    await waitFor(
      () => Promise.resolve(kis.requests.filter((request) => request.path === KIS_PATHS.dailyOrders).length),
      (count) => count > 0,
    );

    const res = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'kr-market-1' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'accepted', exchange: 'kis', client_order_id: 'kr-market-1' });
    const filled = await untilStatus('kr_equity', res.body.broker_order_id, 'filled');
    expect(filled.body).toMatchObject({ filled_qty: 2, avg_fill_price: 96500 });
    await server.services.orders.idle();
    expect(await fillsOf('kr-market-1')).toEqual(['2']);
    const positions = await call('GET', '/api/equity/positions?asset_class=kr_equity');
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: '005930', qty: 2, exchange: 'kis' })]);

    const resting = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 1, order_type: 'limit', limit_price: 90000, time_in_force: 'day', client_order_id: 'kr-limit-1' });
    expect(resting.status, resting.text).toBe(201);
    const canceled = await call('DELETE', `/api/equity/orders/${resting.body.broker_order_id}?asset_class=kr_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    await untilStatus('kr_equity', resting.body.broker_order_id, 'canceled');

    kis.failNext(503, '<html>Service Unavailable</html>', { method: 'POST', path: KIS_PATHS.orderCash });
    const down = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'kr-down-1' });
    expect(down.status, down.text).toBe(502);
    expect(down.body.code).toBe('BROKER_UNAVAILABLE');
    expect(await orderRow('kr-down-1')).toMatchObject({ status: 'pending', reason: 'broker_unavailable' });
  });

  it('takes a trailing_stop and an oco as emulated orders (KIS holds neither: the order emulator does) with no broker call', async () => {
    const calls = kis.requests.filter((request) => request.path === KIS_PATHS.orderCash).length;
    // Changed with the order emulator (it used to be 422 BROKER_REJECTED): its own tests are order-emulator.test.ts.
    const emulated = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: '005930', side: 'sell', qty: 1, order_type: 'trailing_stop', trail_percent: 5, client_order_id: 'kr-trail-1' });
    expect(emulated.status, emulated.text).toBe(201);
    expect(emulated.body.metadata).toMatchObject({ emulated: true });
    const canceled = await call('DELETE', `/api/equity/orders/${emulated.body.broker_order_id}?asset_class=kr_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    expect(await orderRow('kr-trail-1')).toMatchObject({ status: 'canceled' });
    // Changed with the emulated OCO (it used to be 422 BROKER_REJECTED): its own tests are order-emulator-stops.test.ts.
    const oco = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: '005930', side: 'sell', qty: 1, order_type: 'limit', limit_price: 110000, order_class: 'oco', bracket: { stop_loss: 90000 }, client_order_id: 'kr-oco-1' });
    expect(oco.status, oco.text).toBe(201);
    expect(oco.body.metadata).toMatchObject({ emulated: true, order_class: 'oco' });
    expect((await call('DELETE', `/api/equity/orders/${oco.body.broker_order_id}?asset_class=kr_equity`)).status).toBe(204);
    expect(await orderRow('kr-oco-1:sl')).toMatchObject({ status: 'canceled' });
    // An oto is now an entry at KIS with an emulated leg: order-emulator-stops.test.ts.
    expect(kis.requests.filter((request) => request.path === KIS_PATHS.orderCash).length).toBe(calls);
  });
});

describe('crypto on a ccxt exchange (the fake Binance)', () => {
  /** Waits until the account's user data sockets on the fake number `count`. */
  const binanceSubscribers = (count: number) => waitFor(() => Promise.resolve(binance.userStreamSubscribers(binanceKey.apiKey)), (now) => now === count, 30_000);
  const cryptoKey = { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, base_url: '' };
  it('tests the key against the exchange (a wrong secret is ok=false with no secret), registers it, and a market order fills through the order stream once', async () => {
    const key = { ...cryptoKey, base_url: binance.url };
    const good = await call('POST', '/api/exchange-keys/test', { ...key, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ ok: true, currency: 'USDT', equity: 100000 });
    const wrong = `wrong-${binanceKey.secret}`;
    const bad = await call('POST', '/api/exchange-keys/test', { ...key, api_key: binanceKey.apiKey, api_secret: wrong });
    expect(bad.body).toMatchObject({ ok: false, equity: null });
    expect(bad.text).not.toContain(wrong);
    const created = await call('POST', '/api/exchange-keys', { ...key, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(created.status, created.text).toBe(201);
    // The account's consumer listens on the exchange's user data stream (BROKER_CRYPTO_STREAM defaults to auto).
    await binanceSubscribers(1);

    const res = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'crypto-market-1' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'accepted', client_order_id: 'crypto-market-1' });
    await untilStatus('crypto', String(res.body.broker_order_id), 'filled');
    expect(await fillsOf('crypto-market-1')).toEqual(['0.01']);
    const positions = await call('GET', '/api/equity/positions?asset_class=crypto');
    expect(positions.body.items.find((position: { symbol: string }) => position.symbol === 'BTC/USDT')).toMatchObject({ qty: 0.01 });
    // A second order of the symbol fills too (the poller's cursor moved past the first's trade).
    const again = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'crypto-market-2' });
    expect(again.status, again.text).toBe(201);
    await untilStatus('crypto', String(again.body.broker_order_id), 'filled');
    expect(await fillsOf('crypto-market-2')).toEqual(['0.01']);
    // The exchange was asked: an order reached the fake's books. The fills came by the stream: no trades were polled.
    expect(binance.requests.some((request) => request.method === 'POST' && request.path === '/api/v3/order')).toBe(true);
    expect(binance.requests.filter((request) => request.path === '/api/v3/myTrades')).toEqual([]);
  });

  it('takes a crypto fill made while the order stream was down once, by the reconcile after the reconnect', async () => {
    const resting = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'ETH/USDT', side: 'buy', qty: 0.5, order_type: 'limit', limit_price: 2900, time_in_force: 'gtc', client_order_id: 'crypto-gap-1' });
    expect(resting.status, resting.text).toBe(201);
    const connections = binance.userStreamConnections;
    // Down, reconnections refused, while the order fills at the exchange.
    binance.dropUserStreams(1_000);
    await binanceSubscribers(0);
    binance.setPrice('ETHUSDT', '2890');
    await waitFor(() => Promise.resolve(binance.userStreamConnections), (count) => count > connections + 1);
    expect((await orderRow('crypto-gap-1'))?.status).not.toBe('filled');
    binance.dropUserStreams(0);
    await binanceSubscribers(1);
    await untilStatus('crypto', String(resting.body.broker_order_id), 'filled');
    expect(await fillsOf('crypto-gap-1')).toEqual(['0.5']);
    expect(captured.lines.some((line) => line.msg === 'reconciled the account with its broker' && line.why === 'stream reconnected' && line.assetClass === 'crypto')).toBe(true);
  });

  it('answers a symbol the exchange does not list with 422 BROKER_REJECTED', async () => {
    const res = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'SOL/USDT', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'crypto-refused-1' });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('BROKER_REJECTED');
  });
});

describe('secrets', () => {
  it('never logs a key’s secret', () => {
    const text = captured.text();
    for (const secret of [alpacaKey.secretKey, kisKey.appSecret, binanceKey.secret]) expect(text).not.toContain(secret);
  });
});
