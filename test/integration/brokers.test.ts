// The brokers area over HTTP: the paper-account reset, the operator's simulator controls (price,
// outage), and a user's broker following its key (none, active, deactivated, deleted).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setLock } from '../../server/controls/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let admin: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false' });
  admin = await newUser(server, { role: 'admin', prefix: 'brk_admin' });
});
afterAll(() => server.stop());

let keys = 0;
const withKey = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', {
    token: user.tokens.access_token,
    body: { exchange: 'crypto_exchange', api_key: `brokers-test-key-${process.pid}-${++keys}`, api_secret: 'brokers-test-secret' },
  });
  expect(key.status, key.text).toBe(201);
  return { user, keyId: key.body.id as number };
};
const adminPost = (path: string, body: unknown) => server.http('POST', path, { token: admin.tokens.access_token, body });
const reset = (user: FactoryUser, body: unknown = { asset_class: 'crypto' }) => server.http('POST', '/api/equity/account/reset', { token: user.tokens.access_token, body });
const brokerOf = (user: FactoryUser) => server.services.brokers.forUser({ userId: user.user.id, assetClass: 'crypto', mode: 'paper' });

describe('POST /api/admin/sim/prices', () => {
  it('sets the price a symbol trades at (any written form), and null clears it', async () => {
    const set = await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'eth-usdt', price: 2500.5 });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ asset_class: 'crypto', symbol: 'ETH/USDT', price: 2500.5, source: 'admin' });
    expect(await server.services.simulator.priceOf({ assetClass: 'crypto', symbol: 'ETH/USDT' })).toBe('2500.5');
    const cleared = await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'ETH/USDT', price: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.source).not.toBe('admin');
  });

  it('answers 422 for an unregistered symbol, a price of zero, or a string price', async () => {
    expect((await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'NOPE/USDT', price: 1 })).body.errors).toEqual([{ path: 'symbol', message: expect.any(String) }]);
    expect((await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'BTC/USDT', price: 0 })).status).toBe(422);
    expect((await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'BTC/USDT', price: '5' })).status).toBe(422);
  });
});

describe('POST /api/equity/account/reset', () => {
  it('answers 403 BROKER_NOT_CONFIGURED without a key for the asset class', async () => {
    const user = await newUser(server, { prefix: 'brk_nokey' });
    const res = await reset(user);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('BROKER_NOT_CONFIGURED');
  });

  it('is refused with 422 RISK_RULE_VIOLATION while an emergency lock holds', async () => {
    const { user } = await withKey('brk_locked');
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(Date.now() + 3_600_000), reason: 'test', at: new Date() });
    const res = await reset(user);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('RISK_RULE_VIOLATION');
  });

  it('cancels open orders, removes positions and restores the starting cash', async () => {
    const { user } = await withKey('brk_reset');
    await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 });
    const broker = await brokerOf(user);
    await broker.placeOrder({ clientOrderId: 'reset-buy', symbol: 'BTC/USDT', side: 'buy', qty: '0.1', orderType: 'market', timeInForce: 'gtc' });
    await broker.placeOrder({ clientOrderId: 'reset-rest', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'limit', limitPrice: '10000', timeInForce: 'gtc' });
    await server.services.simulator.idle();
    expect(Number((await broker.account()).cash)).toBeLessThan(100000);
    expect(await broker.positions()).toHaveLength(1);

    const res = await reset(user);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ asset_class: 'crypto', broker: 'simulator', paper: true, equity: 100000, cash: 100000, buying_power: 100000, currency: 'USDT', metadata: { canceled_orders: 1 } });
    expect(await broker.positions()).toEqual([]);
    expect(await broker.listOpenOrders()).toEqual([]);
  });
});

describe('POST /api/admin/sim/outage', () => {
  it('makes that asset class’s simulated broker fail as a real one would, until lifted', async () => {
    const { user } = await withKey('brk_outage');
    const down = await adminPost('/api/admin/sim/outage', { asset_class: 'crypto', down: true });
    expect(down.status, down.text).toBe(200);
    expect(down.body).toEqual({ crypto: true, us_equity: false, kr_equity: false });
    try {
      const failed = await reset(user);
      expect(failed.status).toBe(502);
      expect(failed.body.code).toBe('BROKER_UNAVAILABLE');
      const test = await server.http('POST', '/api/exchange-keys/test', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: 'k-outage-test', api_secret: 's' } });
      expect(test.status).toBe(200);
      expect(test.body).toMatchObject({ ok: false, equity: null, error: expect.any(String) });
    } finally {
      const up = await adminPost('/api/admin/sim/outage', { asset_class: 'crypto', down: false });
      expect(up.body.crypto).toBe(false);
    }
    expect((await reset(user)).status).toBe(200);
    expect((await adminPost('/api/admin/sim/outage', { asset_class: 'crypto', down: 'false' })).status).toBe(422);
  });
});

describe('a user’s broker follows its key', () => {
  it('is there with an active key, gone once the key is deactivated or deleted', async () => {
    const { user, keyId } = await withKey('brk_follow');
    expect((await brokerOf(user)).name).toBe('simulator');
    const patch = await server.http('PATCH', `/api/exchange-keys/${keyId}`, { token: user.tokens.access_token, body: { is_active: false } });
    expect(patch.status).toBe(200);
    await expect(brokerOf(user)).rejects.toMatchObject({ code: 'BROKER_NOT_CONFIGURED' });
    await server.http('PATCH', `/api/exchange-keys/${keyId}`, { token: user.tokens.access_token, body: { is_active: true } });
    expect((await brokerOf(user)).name).toBe('simulator');
    expect((await server.http('DELETE', `/api/exchange-keys/${keyId}`, { token: user.tokens.access_token })).status).toBe(204);
    await expect(brokerOf(user)).rejects.toMatchObject({ code: 'BROKER_NOT_CONFIGURED' });
  });

  it('re-attaches the same account when a key is registered again', async () => {
    const { user, keyId } = await withKey('brk_reattach');
    await adminPost('/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'SOL/USDT', price: 100 });
    const broker = await brokerOf(user);
    await broker.placeOrder({ clientOrderId: 'reattach-buy', symbol: 'SOL/USDT', side: 'buy', qty: '2', orderType: 'market', timeInForce: 'gtc' });
    await server.services.simulator.idle();
    await server.http('DELETE', `/api/exchange-keys/${keyId}`, { token: user.tokens.access_token });
    await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `reattach-${process.pid}`, api_secret: 's' } });
    const positions = await (await brokerOf(user)).positions();
    expect(positions.map((position) => [position.symbol, position.qty])).toEqual([['SOL/USDT', '2']]);
  });
});
