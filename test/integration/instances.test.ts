// Two API instances on one PostgreSQL: state that every request consults is cached per process
// and invalidated through LISTEN/NOTIFY, so a change made on one instance holds on the other.
// Embedded PGlite is one process's database, so this runs only when DATABASE_URL is set.
import { rmSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, loginAdmin, registerAndLogin, startTestServer, tempDir, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { connect, wsUrl } from '../support/ws.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.skipIf(!onPostgres)('several instances on one database', () => {
  let a: TestServer;
  let b: TestServer;
  // Instances share their secrets through settings (a generated secret is one DATA_DIR's own).
  const env = { ...adminEnv, AUTH_SECRET_KEY: 'k'.repeat(24) + 'shared-across-instances', ENCRYPTION_SALT: 'shared-salt-for-both-instances', SIM_TICK_INTERVAL_MS: '0' };
  beforeAll(async () => {
    a = await startTestServer(env);
    b = await startTestServer(env, { dataDir: tempDir(), databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.stop();
    if (b) rmSync(b.dataDir, { recursive: true, force: true });
    await a?.stop();
  });

  it('a token issued by one instance is accepted by the other', async () => {
    const { tokens, user } = await registerAndLogin(a, 'multi');
    const me = await b.http('GET', '/api/auth/me', { token: tokens.access_token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(user.id);
  });

  it('deactivating a user on one instance ends its tokens on the other', async () => {
    const { tokens, user } = await registerAndLogin(a, 'multi_deact');
    // Instance b has the user cached as active.
    expect((await b.http('GET', '/api/auth/me', { token: tokens.access_token })).status).toBe(200);
    const admin = await loginAdmin(a);
    expect((await a.http('POST', `/api/admin/users/${user.id}/deactivate`, { token: admin.access_token })).status).toBe(200);
    const after = await waitFor(() => b.http('GET', '/api/auth/me', { token: tokens.access_token }), (res) => res.status !== 200);
    expect(after.status).toBe(401);
  });

  it('a halt set on one instance holds on the other, and lifting it too', async () => {
    const { tokens } = await registerAndLogin(a, 'multi_halt');
    const admin = await loginAdmin(a);
    try {
      expect((await a.http('POST', '/api/admin/halt', { token: admin.access_token, body: { halted: true } })).status).toBe(200);
      const halted = await waitFor(() => b.http('GET', '/api/auth/me', { token: tokens.access_token }), (res) => res.status !== 200);
      expect(halted.status).toBe(503);
      expect(halted.body.code).toBe('SERVICE_HALTED');
    } finally {
      await a.http('POST', '/api/admin/halt', { token: admin.access_token, body: { halted: false } });
    }
    const resumed = await waitFor(() => b.http('GET', '/api/auth/me', { token: tokens.access_token }), (res) => res.status === 200);
    expect(resumed.status).toBe(200);
  });

  it("deleting a key on one instance drops the user's broker on the other", async () => {
    const { tokens, user } = await registerAndLogin(a, 'multi_keys');
    const key = await a.http('POST', '/api/exchange-keys', { token: tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `multi-keys-${process.pid}`, api_secret: 's' } });
    expect(key.status).toBe(201);
    const account = { userId: user.id, assetClass: 'crypto' as const, mode: 'paper' as const };
    expect((await b.services.brokers.forUser(account)).name).toBe('simulator');
    expect((await a.http('DELETE', `/api/exchange-keys/${key.body.id}`, { token: tokens.access_token })).status).toBe(204);
    const outcome = await waitFor(
      () => b.services.brokers.forUser(account).then(() => 'cached', (error: { code?: string }) => error.code),
      (value) => value !== 'cached',
    );
    expect(outcome).toBe('BROKER_NOT_CONFIGURED');
  });

  it('an instrument changed on one instance is read anew on the other (its cached copy is dropped)', async () => {
    const admin = await loginAdmin(a);
    const body = { asset_class: 'crypto', symbol: 'MULTIQ/USDT', exchange: 'BINANCE', currency: 'USDT', name: 'Multi coin', reference_price: 10, tick_size: 0.01, lot_size: 0.001, fractional: true };
    const created = await a.http('POST', '/api/admin/instruments', { token: admin.access_token, body });
    expect(created.status, created.text).toBe(201);
    // Instance b reads the instrument once and keeps it.
    expect(await b.services.instruments.resolve({ symbol: 'MULTIQ/USDT', assetClass: 'crypto' })).toMatchObject({ lotSize: '0.001' });
    expect((await a.http('POST', '/api/admin/instruments', { token: admin.access_token, body: { ...body, lot_size: 0.01 } })).status).toBe(200);
    const seen = await waitFor(
      () => b.services.instruments.resolve({ symbol: 'MULTIQ/USDT', assetClass: 'crypto' }),
      (row) => row?.lotSize !== '0.001',
    );
    expect(seen).toMatchObject({ lotSize: '0.01' });
  });

  it("deactivating a user on one instance closes that user's WebSocket on the other with 4001", async () => {
    const { tokens, user } = await registerAndLogin(a, 'multi_ws_deact');
    const onB = connect(wsUrl(b, '/ws/equity/orders', { token: tokens.access_token }));
    try {
      expect((await onB.next()).type).toBe('hello');
      const admin = await loginAdmin(a);
      expect((await a.http('POST', `/api/admin/users/${user.id}/deactivate`, { token: admin.access_token })).status).toBe(200);
      expect(await onB.closed).toEqual({ code: 4001, reason: 'Invalid token' });
    } finally {
      onB.ws.terminate();
    }
  });

  it("a client on one instance receives the order events of an order placed on the other, and another user's client nothing", async () => {
    const admin = await loginAdmin(a);
    expect((await a.http('POST', '/api/admin/sim/prices', { token: admin.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } })).status).toBe(200);
    const trader = await registerAndLogin(a, 'multi_ws');
    const bystander = await registerAndLogin(a, 'multi_ws_other');
    expect((await a.http('POST', '/api/exchange-keys', { token: trader.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `multi-ws-${process.pid}`, api_secret: 's' } })).status).toBe(201);
    const onB = connect(wsUrl(b, '/ws/equity/orders', { token: trader.tokens.access_token }));
    const otherOnB = connect(wsUrl(b, '/ws/equity/orders', { token: bystander.tokens.access_token }));
    try {
      expect((await onB.next()).type).toBe('hello');
      expect((await otherOnB.next()).type).toBe('hello');
      const placed = await a.http('POST', '/api/equity/orders', { token: trader.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'multi-ws-1' } });
      expect(placed.status, placed.text).toBe(201);
      await onB.next((frame) => frame.event_type === 'fill');
      expect(onB.frames.slice(1).map((frame) => frame.event_type)).toEqual(['placed', 'accepted', 'fill']);
      // The bystander's own event, sent after the trader's, arrives; nothing of the trader's came before it.
      await a.services.db.transaction((tx) => a.services.events.append(tx, [{ userId: bystander.user.id, channel: 'orders', frame: { type: 'order_event', event_type: 'open', client_order_id: 'marker' }, at: new Date() }]));
      a.services.events.wake();
      await otherOnB.next((frame) => frame.client_order_id === 'marker');
      expect(otherOnB.frames.slice(1).map((frame) => frame.client_order_id)).toEqual(['marker']);
    } finally {
      onB.ws.terminate();
      otherOnB.ws.terminate();
    }
  });
});

describe.skipIf(!onPostgres)('a dropped LISTEN connection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  it('is re-established and the caches reload what changed while it was down', async () => {
    const { db } = server.services;
    expect(server.services.halt.isHalted()).toBe(false);
    // A change whose notification this instance never hears: written straight to the table.
    await db.execute(sql`update system_state set value = '{"halted": true}', version = version + 1 where key = 'halt'`);
    await db.execute(sql`insert into system_state (key, value, version) values ('halt', '{"halted": true}', 1) on conflict (key) do nothing`);
    expect(server.services.halt.isHalted()).toBe(false);
    const ended = await db.execute(sql`select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = current_database() and query ilike 'listen%'`);
    // Postgres only, so the postgres.js result shape: an array of rows.
    expect((ended as unknown[]).length).toBeGreaterThan(0);
    const health = await waitFor(() => server.http('GET', '/health'), (res) => res.body.halted === true, 20_000);
    expect(health.body.halted).toBe(true);
    await server.services.halt.set({ halted: false, actor: { id: 0 }, origin: { requestId: 'test', address: '127.0.0.1' } });
  });

  it('delivers, once, the events written while it was down', async () => {
    const { db, events } = server.services;
    const user = await registerAndLogin(server, 'listen_events');
    const socket = connect(wsUrl(server, '/ws/equity/orders', { token: user.tokens.access_token }));
    try {
      expect((await socket.next()).type).toBe('hello');
      await db.execute(sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen%'`);
      // Written (as by another instance) while the listening connection may be down: its wake-up
      // can be lost, the rows cannot.
      for (const n of [1, 2, 3]) await db.transaction((tx) => events.append(tx, [{ userId: user.user.id, channel: 'orders', frame: { type: 'order_event', client_order_id: `down-${n}` }, at: new Date() }]));
      await socket.next((frame) => frame.client_order_id === 'down-3', { ms: 20_000 });
      await db.transaction((tx) => events.append(tx, [{ userId: user.user.id, channel: 'orders', frame: { type: 'order_event', client_order_id: 'after' }, at: new Date() }]));
      // Written as by another instance: its wake-up reaches this one through the LISTEN connection again.
      await db.execute(sql`select pg_notify('ts_events', '')`);
      await socket.next((frame) => frame.client_order_id === 'after', { ms: 20_000 });
      expect(socket.frames.slice(1).map((frame) => frame.client_order_id)).toEqual(['down-1', 'down-2', 'down-3', 'after']);
    } finally {
      socket.ws.terminate();
    }
  });
});
