// The operator's live controls over HTTP: suspending every live order at runtime (kept in the
// database, audited; live orders 503 FEATURE_DISABLED, paper orders untouched) and the overview
// an operator on call reads first.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, systemState } from '../../server/db/schema/index.ts';
import { recordCriticalAlert } from '../../server/live/kill-switch-queries.ts';
import { setLock } from '../../server/controls/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'la_admin' });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(() => server.stop());

const liveTrader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `la-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
  return user;
};
const order = (user: FactoryUser, live: boolean) =>
  server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', live_mode: live } });
const suspend = (suspended: unknown, token = admin.tokens.access_token) => server.http('POST', '/api/admin/live/suspend', { token, body: { suspended } });

describe('POST /api/admin/live/suspend', () => {
  it('suspends every live order (503 FEATURE_DISABLED) until resumed, paper orders untouched; stored and audited', async () => {
    const user = await liveTrader('suspend');
    expect((await order(user, true)).status).toBe(201);

    const on = await suspend(true);
    expect(on.status, on.text).toBe(200);
    expect(on.body).toEqual({ suspended: true, updated_at: clock.now().toISOString() });
    const refused = await order(user, true);
    expect([refused.status, refused.body.code]).toEqual([503, 'FEATURE_DISABLED']);
    expect(refused.body.message).toContain('suspended');
    expect((await order(user, false)).status).toBe(201);
    const [stored] = await server.services.db.select().from(systemState).where(eq(systemState.key, 'live_suspended'));
    expect(stored!.value).toEqual({ suspended: true });

    const off = await suspend(false);
    expect(off.body.suspended).toBe(false);
    expect((await order(user, true)).status).toBe(201);
    const audited = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.actorUserId, admin.user.id)));
    expect(audited.map((row) => row.action).filter((action) => action.startsWith('admin.live_'))).toEqual(['admin.live_suspended', 'admin.live_resumed']);
  });

  it('reads the stored state again when told (what the change feed does on every instance)', async () => {
    await server.services.db.update(systemState).set({ value: { suspended: true }, version: 1_000 }).where(eq(systemState.key, 'live_suspended'));
    const user = await liveTrader('suspend_feed');
    // The feed's notification, as another instance's write would send it.
    await server.services.changes.publish(server.services.db, { kind: 'live_suspend' });
    await expect.poll(async () => (await order(user, true)).status).toBe(503);
    expect((await suspend(false)).body.suspended).toBe(false);
  });

  it('is for operators only, with a boolean', async () => {
    const user = await newUser(server, { prefix: 'suspend_user' });
    expect((await suspend(true, user.tokens.access_token)).status).toBe(403);
    expect((await suspend('yes')).status).toBe(422);
    expect((await suspend(undefined)).status).toBe(422);
  });
});

describe('GET /api/admin/overview', () => {
  it('lists live-enabled users, active locks, running bots, today’s live orders and the newest critical alerts', async () => {
    const user = await liveTrader('overview');
    expect((await order(user, true)).status).toBe(201);
    const { db } = server.services;
    const lockedUntil = new Date(clock.now().getTime() + 3_600_000);
    await setLock(db, { userId: user.user.id, assetClass: 'crypto', lockedUntil, reason: 'kill switch: test', at: clock.now() });
    await recordCriticalAlert(db, { userId: user.user.id, assetClass: 'crypto', day: '2026-03-10', kind: 'kill_switch_lock', title: 'locked', data: {}, at: clock.now() });

    const res = await server.http('GET', '/api/admin/overview', { token: admin.tokens.access_token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ as_of: clock.now().toISOString(), halted: false, live_suspended: false, running_bots: [] });
    expect(res.body.live_enabled).toContainEqual({ user_id: user.user.id, username: user.username, asset_class: 'crypto', first_live_order_at: clock.now().toISOString() });
    expect(res.body.active_locks).toContainEqual({ user_id: user.user.id, username: user.username, asset_class: 'crypto', locked_until: lockedUntil.toISOString(), reason: 'kill switch: test' });
    expect(res.body.live_orders_today).toContainEqual({ user_id: user.user.id, asset_class: 'crypto', count: 1 });
    expect(res.body.critical_alerts[0]).toMatchObject({ user_id: user.user.id, asset_class: 'crypto', day: '2026-03-10', kind: 'kill_switch_lock', title: 'locked' });

    const asUser = await server.http('GET', '/api/admin/overview', { token: user.tokens.access_token });
    expect(asUser.status).toBe(403);
  });
});
