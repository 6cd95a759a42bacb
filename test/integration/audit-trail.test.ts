// GET /api/audit: a user's own audit trail, newest first, a page at a time, filtered by action
// prefix; another user's records never appear, and without a token it is 401. GET
// /api/admin/audit: an operator's view of everyone's records, or one user's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let alice: FactoryUser;
let bob: FactoryUser;
let operator: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  alice = await newUser(server, { prefix: 'trail_alice' });
  bob = await newUser(server, { prefix: 'trail_bob' });
  operator = await newUser(server, { role: 'admin', prefix: 'trail_ops' });
  // Three audited changes of Alice's (keys added: `keys.create`), one of Bob's.
  for (const n of [1, 2, 3]) {
    const key = await server.http('POST', '/api/exchange-keys', { token: alice.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `trail-alice-${process.pid}-${n}`, api_secret: 'trail-secret-value' } });
    expect(key.status, key.text).toBe(201);
  }
  const other = await server.http('POST', '/api/exchange-keys', { token: bob.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `trail-bob-${process.pid}`, api_secret: 'trail-secret-value' } });
  expect(other.status, other.text).toBe(201);
});
afterAll(() => server?.stop());

const trail = (user: FactoryUser, query = '') => server.http('GET', `/api/audit${query}`, { token: user.tokens.access_token });

describe('GET /api/audit', () => {
  it("lists only the user's own records, newest first, with the total", async () => {
    const res = await trail(alice);
    expect(res.status, res.text).toBe(200);
    const items = res.body.items as { id: number; action: string; created_at: string; actor_user_id: number | null }[];
    expect(res.body.total).toBe(items.length);
    expect(items.filter((item) => item.action === 'keys.create')).toHaveLength(3);
    const ids = items.map((item) => item.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const bobs = (await trail(bob)).body.items as { id: number }[];
    expect(bobs.some((record) => ids.includes(record.id))).toBe(false);
    expect(res.text).not.toContain('trail-secret-value');
    // Neither whom it is about (the user) nor the request's address.
    expect(items.every((item) => !('address' in item) && !('subject_user_id' in item))).toBe(true);
  });

  it('pages, and filters by an action prefix (wildcards taken literally)', async () => {
    const all = (await trail(alice, '?size=100')).body;
    const firstPage = await trail(alice, '?page=1&size=2');
    const secondPage = await trail(alice, '?page=2&size=2');
    expect(firstPage.body.items).toHaveLength(2);
    expect(firstPage.body.total).toBe(all.total);
    expect([...firstPage.body.items, ...secondPage.body.items].map((item: { id: number }) => item.id)).toEqual(all.items.slice(0, 4).map((item: { id: number }) => item.id));
    const action = (all.items[0] as { action: string }).action;
    const filtered = (await trail(alice, `?action=${encodeURIComponent(action)}`)).body;
    expect(filtered.items.length).toBeGreaterThan(0);
    expect(filtered.items.every((item: { action: string }) => item.action.startsWith(action))).toBe(true);
    expect((await trail(alice, '?action=%25')).body.total).toBe(0);
  });

  it("gives one order's records by its client order id: placement, acceptance and fill, and no other order's", async () => {
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
    for (const id of ['trail-order-1', 'trail-order-2']) {
      const placed = await server.http('POST', '/api/equity/orders', { token: alice.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', client_order_id: id } });
      expect(placed.status, placed.text).toBe(201);
    }
    await server.services.simulator.idle();
    await server.services.orders.idle();
    const first = (await trail(alice, '?client_order_id=trail-order-1')).body as { total: number; items: { action: string; data: { client_order_id?: string } }[] };
    expect(first.items.map((item) => item.action).sort()).toEqual(['order.accepted', 'order.fill', 'order.placed']);
    expect(first.items.every((item) => item.data.client_order_id === 'trail-order-1')).toBe(true);
    // Another user's order of the same id is not hers to see, and is not there.
    expect((await trail(bob, '?client_order_id=trail-order-1')).body.total).toBe(0);
  });

  it('answers 401 without a token and 422 for a bad page', async () => {
    expect((await server.http('GET', '/api/audit')).status).toBe(401);
    const bad = await trail(alice, '?page=0');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('GET /api/admin/audit', () => {
  it("gives an operator everyone's records, or one user's, with the subject and the address", async () => {
    const all = await server.http('GET', '/api/admin/audit?size=100', { token: operator.tokens.access_token });
    expect(all.status, all.text).toBe(200);
    const subjects = new Set((all.body.items as { subject_user_id: number | null }[]).map((item) => item.subject_user_id));
    expect(subjects.has(alice.user.id) && subjects.has(bob.user.id)).toBe(true);
    const bobs = await server.http('GET', `/api/admin/audit?user_id=${bob.user.id}&action=keys.`, { token: operator.tokens.access_token });
    expect(bobs.status, bobs.text).toBe(200);
    expect(bobs.body.total).toBe(1);
    expect(bobs.body.items[0]).toMatchObject({ action: 'keys.create', subject_user_id: bob.user.id, actor_user_id: bob.user.id });
    expect(typeof bobs.body.items[0].address).toBe('string');
  });

  it('is 403 for a user who is not an operator', async () => {
    expect((await server.http('GET', '/api/admin/audit', { token: alice.tokens.access_token })).status).toBe(403);
  });
});
