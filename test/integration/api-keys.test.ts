// Personal API keys from outside (DESIGN §6 "Integrations"): created with scopes and shown once,
// listed without their secrets, used as `Authorization: Bearer tsk_…`; a route outside the key's
// scopes, or one that takes no key (admin, exchange keys, password, sessions, API keys, live
// promotion), is 403 naming why; a revoked key, a password change and a deactivation end keys at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZApiKeyCreated, ZApiKeyList } from '../../contracts/auth.ts';
import { manualClock } from '../../server/clock.ts';
import { FACTORY_PASSWORD, newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, wsUrl } from '../support/ws.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'key_admin' });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(() => server.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `apikey-test-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const newKey = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/auth/api-keys', { token: user.tokens.access_token, body });
  expect(res.status, res.text).toBe(201);
  return ZApiKeyCreated.parse(res.body);
};
const order = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market' };

describe('personal API keys', () => {
  it('are shown once, listed without their secrets, and reach what their scopes allow: read lists orders and may not place one, trade places a paper order and no live one', async () => {
    const user = await trader('key_scopes');
    const reader = await newKey(user, { name: 'dashboard', scopes: ['read'] });
    expect(reader.key).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    expect(reader).toMatchObject({ name: 'dashboard', scopes: ['read'], prefix: reader.key.slice(0, 8), expires_at: null, last_used_at: null });
    const trader_ = await newKey(user, { name: 'script', scopes: ['read', 'trade'] });
    const listed = ZApiKeyList.parse((await server.http('GET', '/api/auth/api-keys', { token: user.tokens.access_token })).body);
    // Newest first; these two were made at the same instant of the test's clock.
    expect(listed.items.map((key) => key.name).sort()).toEqual(['dashboard', 'script']);
    expect(JSON.stringify(listed)).not.toContain(reader.key.slice(8));

    const asReader = (method: string, path: string, body?: unknown) => server.http(method, path, { token: reader.key, ...(body === undefined ? {} : { body }) });
    expect((await asReader('GET', '/api/equity/orders?asset_class=crypto')).status).toBe(200);
    expect((await asReader('GET', '/api/auth/me')).body).toMatchObject({ id: user.user.id });
    const refused = await asReader('POST', '/api/equity/orders', order);
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    expect(refused.body.message).toContain('trade scope');
    const backtest = await asReader('POST', '/api/equity/backtest', {});
    expect([backtest.status, backtest.body.message]).toEqual([403, 'This API key lacks the backtest scope']);

    const placed = await server.http('POST', '/api/equity/orders', { token: trader_.key, body: order });
    expect(placed.status, placed.text).toBe(201);
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    const live = await server.http('POST', '/api/equity/orders', { token: trader_.key, body: { ...order, live_mode: true } });
    expect([live.status, live.body.message]).toEqual([403, 'This API key lacks the live scope']);
    const liveKey = await newKey(user, { name: 'live', scopes: ['trade', 'live'] });
    expect((await server.http('POST', '/api/equity/orders', { token: liveKey.key, body: { ...order, live_mode: true } })).status).toBe(201);

    // Its use is noted (at most once a minute).
    const after = ZApiKeyList.parse((await server.http('GET', '/api/auth/api-keys', { token: user.tokens.access_token })).body);
    expect(after.items.find((key) => key.id === reader.id)?.last_used_at).toBe(clock.now().toISOString());
  });

  it('never reach the routes that take no key: admin, exchange keys, password, sessions, API keys, live promotion', async () => {
    const user = await trader('key_denied');
    const key = await newKey(user, { name: 'all', scopes: ['read', 'trade', 'live', 'backtest', 'analysis'] });
    const adminKey = await newKey(admin, { name: 'ops', scopes: ['read'] });
    const denied: [string, string, string, unknown?][] = [
      [key.key, 'GET', '/api/exchange-keys'],
      [key.key, 'GET', '/api/auth/api-keys'],
      [key.key, 'POST', '/api/auth/api-keys', { name: 'more', scopes: ['read'] }],
      [key.key, 'GET', '/api/auth/sessions'],
      [key.key, 'POST', '/api/auth/password', { current_password: FACTORY_PASSWORD, new_password: 'another-password-1' }],
      [key.key, 'GET', '/api/operations/live/status'],
      [adminKey.key, 'GET', '/api/admin/users'],
    ];
    for (const [token, method, path, body] of denied) {
      const res = await server.http(method, path, { token, ...(body === undefined ? {} : { body }) });
      expect([res.status, res.body.code], `${method} ${path}: ${res.text}`).toEqual([403, 'FORBIDDEN']);
    }
  });

  it('end at once when revoked, at a password change, at a deactivation and at their expiry; a key of another user cannot be revoked', async () => {
    const user = await trader('key_end');
    const other = await newUser(server, { prefix: 'key_other' });
    const revoked = await newKey(user, { name: 'a', scopes: ['read'] });
    const me = (token: string) => server.http('GET', '/api/auth/me', { token });
    expect((await me(revoked.key)).status).toBe(200);
    const foreign = await server.http('DELETE', `/api/auth/api-keys/${revoked.id}`, { token: other.tokens.access_token });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await server.http('DELETE', `/api/auth/api-keys/${revoked.id}`, { token: user.tokens.access_token })).status).toBe(204);
    expect((await me(revoked.key)).status).toBe(401);
    expect((await server.http('DELETE', `/api/auth/api-keys/${revoked.id}`, { token: user.tokens.access_token })).status).toBe(404);

    const past = await server.http('POST', '/api/auth/api-keys', { token: user.tokens.access_token, body: { name: 'c', scopes: ['read'], expires_at: '2020-01-01T00:00:00Z' } });
    expect([past.status, past.body.code]).toEqual([422, 'VALIDATION_ERROR']);

    const beforePassword = await newKey(user, { name: 'd', scopes: ['read'] });
    const changed = await server.http('POST', '/api/auth/password', { token: user.tokens.access_token, body: { current_password: FACTORY_PASSWORD, new_password: 'a-new-password-2' } });
    expect(changed.status, changed.text).toBe(204);
    expect((await me(beforePassword.key)).status).toBe(401);

    const deactivated = await newUser(server, { prefix: 'key_deact' });
    const itsKey = await newKey(deactivated, { name: 'e', scopes: ['read'] });
    expect((await me(itsKey.key)).status).toBe(200);
    const off = await server.http('POST', `/api/admin/users/${deactivated.user.id}/deactivate`, { token: admin.tokens.access_token, body: {} });
    expect(off.status, off.text).toBe(200);
    expect((await me(itsKey.key)).status).toBe(401);
    expect((await me('tsk_not-a-key')).status).toBe(401);

    const expiring = await newKey(other, { name: 'b', scopes: ['read'], expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    expect((await me(expiring.key)).status).toBe(200);
    clock.advance(3_600_000);
    expect((await me(expiring.key)).status).toBe(401);
  });

  it('open the WebSocket channels with the read scope (a key without it is refused), and a revocation closes the channel', async () => {
    const user = await trader('key_ws');
    const reader = await newKey(user, { name: 'feed', scopes: ['read'] });
    const tradeOnly = await newKey(user, { name: 'orders', scopes: ['trade'] });
    const socket = connect(wsUrl(server, '/ws/equity/orders', { token: reader.key }));
    // The hello frame: the channel is open for the key's user.
    await socket.next((frame) => frame.type === 'hello');
    const placed = await server.http('POST', '/api/equity/orders', { token: tradeOnly.key, body: { ...order, client_order_id: 'ws-key-1' } });
    expect(placed.status, placed.text).toBe(201);
    await socket.next((frame) => frame.type === 'order_event' && frame.client_order_id === 'ws-key-1');
    const refused = connect(wsUrl(server, '/ws/equity/orders', { token: tradeOnly.key }));
    expect((await refused.closed).code).toBe(4001);

    expect((await server.http('DELETE', `/api/auth/api-keys/${reader.id}`, { token: user.tokens.access_token })).status).toBe(204);
    expect((await socket.closed).code).toBe(4001);
  });
});
