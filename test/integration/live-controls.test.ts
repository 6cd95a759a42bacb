// Live trading's controls over HTTP: the user's live status per asset class, and the operator's
// live disable and lock clear (audited; an unknown user is 404).
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents } from '../../server/db/schema/index.ts';
import { liveScope } from '../../server/orders/gates.ts';
import { setLock } from '../../server/controls/queries.ts';
import { claimRate } from '../../server/controls/rate-queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ LIVE_DAILY_TRADE_LIMIT: '3' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'live_admin' });
});
afterAll(() => server.stop());

const status = async (user: FactoryUser) => {
  const res = await server.http('GET', '/api/operations/live/status', { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const operator = (path: string, body: Record<string, unknown>) => server.http('POST', path, { token: admin.tokens.access_token, body });

describe('GET /api/operations/live/status', () => {
  it('says per asset class whether live is on, the first live order, an active lock and today’s live orders against the limit', async () => {
    const user = await newUser(server, { prefix: 'live_status' });
    const none = { live_enabled: false, first_live_order_at: null, locked_until: null, live_orders_today: 0, daily_limit: 3 };
    expect(await status(user)).toEqual({ crypto: none, us_equity: none, kr_equity: none });

    const { db, orders } = server.services;
    await orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    const lockedUntil = new Date(clock.now().getTime() + 24 * 3_600_000);
    await setLock(db, { userId: user.user.id, assetClass: 'us_equity', lockedUntil, reason: 'test', at: clock.now() });
    const midnight = new Date('2026-03-10T00:00:00Z');
    for (let i = 0; i < 2; i++) await claimRate(db, { userId: user.user.id, scope: liveScope('crypto'), windowStart: midnight, at: clock.now(), max: 3 });

    const now = await status(user);
    expect(now.crypto).toEqual({ ...none, live_enabled: true, live_orders_today: 2 });
    expect(now.us_equity).toEqual({ ...none, locked_until: lockedUntil.toISOString() });

    // The next UTC day: yesterday's count is spent, and the lock has run out (a new session: the
    // day outlives the access token).
    clock.advance(24 * 3_600_000 + 1);
    const tomorrow = await status({ ...user, tokens: await server.services.auth.issueSession({ user: user.auth }) });
    expect(tomorrow.crypto.live_orders_today).toBe(0);
    expect(tomorrow.us_equity.locked_until).toBeNull();
  });
});

describe('the operator’s live controls', () => {
  it('disables a user’s live trading for an asset class and clears a lock early, each audited; an unknown user is 404', async () => {
    // A session of this instant (an earlier test moved the clock past the first one's tokens).
    admin = { ...admin, tokens: await server.services.auth.issueSession({ user: admin.auth }) };
    const user = await newUser(server, { prefix: 'live_ops' });
    const { db, orders } = server.services;
    await orders.setLive({ userId: user.user.id, assetClass: 'kr_equity', enabled: true });
    await setLock(db, { userId: user.user.id, assetClass: 'kr_equity', lockedUntil: new Date(clock.now().getTime() + 3_600_000), reason: 'kill switch', at: clock.now() });

    const disabled = await operator(`/api/admin/users/${user.user.id}/live/disable`, { asset_class: 'kr_equity' });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body).toEqual({ user_id: user.user.id, asset_class: 'kr_equity', live_enabled: false });
    const cleared = await operator(`/api/admin/users/${user.user.id}/locks/clear`, { asset_class: 'kr_equity' });
    expect(cleared.body).toEqual({ user_id: user.user.id, asset_class: 'kr_equity', locked_until: null, cleared: true });
    expect((await status(user)).kr_equity).toMatchObject({ live_enabled: false, locked_until: null });
    expect((await operator(`/api/admin/users/${user.user.id}/locks/clear`, { asset_class: 'kr_equity' })).body.cleared).toBe(false);

    const audited = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.actorUserId, admin.user.id)))
      .orderBy(asc(auditEvents.id));
    expect(audited.map((row) => [row.action, row.data.asset_class])).toEqual([
      ['admin.live_disabled', 'kr_equity'],
      ['admin.lock_cleared', 'kr_equity'],
      ['admin.lock_cleared', 'kr_equity'],
    ]);

    const unknown = await operator('/api/admin/users/2147483000/live/disable', { asset_class: 'crypto' });
    expect(unknown.status).toBe(404);
    expect((await operator(`/api/admin/users/${user.user.id}/live/disable`, { asset_class: 'forex' })).status).toBe(422);
    const asUser = await server.http('POST', `/api/admin/users/${user.user.id}/locks/clear`, { token: user.tokens.access_token, body: { asset_class: 'crypto' } });
    expect(asUser.status).toBe(403);
  });
});
