// Crypto keys naming their own exchange in BROKER_MODE=real: the service's default exchange is
// kraken (CRYPTO_EXCHANGE_ID) and it allows binance too (CRYPTO_EXCHANGE_IDS); a key naming
// binance trades on the fake Binance through ccxt's binance class, under a client order id longer
// than Binance takes (placed, found again by reconciliation after a simulated crash, filled under
// our id). Start-up refuses an exchange id ccxt does not have.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../server/app.ts';
import { clientOrderIdRuleOf, toExchangeClientOrderId } from '../../server/brokers/ccxt/index.ts';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { orderFills, orders } from '../../server/db/schema/index.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { createCcxtClientIdStore } from '../../server/orders/broker-links.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { createTestDatabase, dataDirFromTemplate, startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const binanceKey = { apiKey: `bn${randomBytes(8).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };
let binance: FakeBinance;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  binance = await startFakeBinance({ accounts: [{ ...binanceKey, balances: { USDT: '100000' } }], prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });
  server = await startTestServer({
    BROKER_MODE: 'real',
    CRYPTO_EXCHANGE_ID: 'kraken',
    CRYPTO_EXCHANGE_IDS: 'binance',
    BROKER_BASE_URLS: `binance:paper=${binance.url}`,
    BROKER_CRYPTO_POLL_INTERVAL_MS: '200',
    RISK_MARKET_HOURS: 'ignore',
    SIM_TICK_INTERVAL_MS: '0',
  });
  alice = await newUser(server, { prefix: 'cx_alice' });
});
afterAll(async () => {
  await server?.stop();
  await binance?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const orderRow = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const fillsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => fill.qty);
const untilStatus = (clientOrderId: string, status: string) =>
  waitFor(
    () => orderRow(clientOrderId),
    (row) => row?.status === status,
  );

describe('a crypto key naming binance while CRYPTO_EXCHANGE_ID is kraken', () => {
  it('takes the fake only for a key of binance (the allow-list is per exchange), and keeps the name the key gave', async () => {
    const forKraken = await call('POST', '/api/exchange-keys', { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, base_url: binance.url, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(forKraken.status, forKraken.text).toBe(422);
    expect(forKraken.body.errors).toEqual([{ path: 'base_url', message: expect.stringContaining('kraken') }]);
    const tested = await call('POST', '/api/exchange-keys/test', { asset_class: 'crypto', exchange: 'binance', paper_mode: true, base_url: binance.url, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(tested.body, tested.text).toMatchObject({ ok: true, currency: 'USDT', equity: 100000 });
    const created = await call('POST', '/api/exchange-keys', { asset_class: 'crypto', exchange: 'binance', paper_mode: true, base_url: binance.url, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ asset_class: 'crypto', exchange: 'binance' });
  });

  it('fills a market order on the fake Binance under a 64-character client order id', async () => {
    const ours = `mkt-${randomBytes(30).toString('hex')}`;
    expect(ours).toHaveLength(64);
    const res = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: ours });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'accepted', client_order_id: ours, exchange: 'binance' });
    await untilStatus(ours, 'filled');
    await server.services.orders.idle();
    expect(await fillsOf(ours)).toEqual(['0.01']);
    const held = binance.books.orders(binanceKey.apiKey).find((order) => `BTCUSDT~${order.orderId}` === res.body.broker_order_id);
    expect(held?.clientOrderId).toBe(toExchangeClientOrderId(ours, clientOrderIdRuleOf('binance')));
    expect(held?.clientOrderId).not.toBe(ours);
  });

  it('finds a resting order by our 64-character id after a crash lost the exchange’s answer, then takes its fill under our id', async () => {
    const ours = `lmt-${randomBytes(30).toString('hex')}`;
    const res = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'ETH/USDT', side: 'buy', qty: 0.5, order_type: 'limit', limit_price: 2900, time_in_force: 'gtc', client_order_id: ours });
    expect(res.status, res.text).toBe(201);
    const brokerOrderId = String(res.body.broker_order_id);
    // As if the process died between the exchange's answer and our record of it: an intent only.
    await server.services.db.update(orders).set({ status: 'pending', brokerOrderId: null }).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, ours)));
    const reconciled = await server.services.orders.reconcile({ userId: alice.user.id, assetClass: 'crypto', mode: 'paper' });
    expect(reconciled).toEqual({ linked: 1, settled: 0, ambiguous: 0, rearmed: 0 });
    expect(await orderRow(ours)).toMatchObject({ brokerOrderId, status: 'open' });
    // Another instance (no placements in its memory) finds our id in the orders table by broker order id.
    const store = createCcxtClientIdStore({ db: server.services.db, userId: alice.user.id, mode: 'paper', rule: clientOrderIdRuleOf('binance') });
    expect(await store.find(toExchangeClientOrderId(ours, clientOrderIdRuleOf('binance')), brokerOrderId)).toBe(ours);

    binance.setPrice('ETHUSDT', '2890');
    await untilStatus(ours, 'filled');
    await server.services.orders.idle();
    expect(await fillsOf(ours)).toEqual(['0.5']);
  });
});

describe('start-up in real mode', () => {
  it('refuses an exchange id ccxt does not have, naming the setting', async () => {
    const dataDir = dataDirFromTemplate();
    const database = await createTestDatabase();
    try {
      const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, DATABASE_URL: database.url, LOG_LEVEL: 'silent', BROKER_MODE: 'real', CRYPTO_EXCHANGE_IDS: 'binance,nosuchexchange' });
      const failed = await startApp(config).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(ConfigError);
      expect(failed).toMatchObject({ setting: 'CRYPTO_EXCHANGE_IDS', message: expect.stringContaining('nosuchexchange') });
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
