// The operator's views for the console: GET /api/admin/users/{user_id} (the user, its live trading per
// asset class with locks and today's live orders, its bot) and GET /api/admin/alerts (the kill
// switch's critical alerts, newest first, by user and kind).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { recordCriticalAlert } from '../../server/live/kill-switch-queries.ts';
import { setLock } from '../../server/controls/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1', LIVE_DAILY_TRADE_LIMIT: '7' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'ov_admin' });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(() => server?.stop());

const detail = (id: number | string, token = admin.tokens.access_token) => server.http('GET', `/api/admin/users/${id}`, { token });
const alerts = (query = '', token = admin.tokens.access_token) => server.http('GET', `/api/admin/alerts${query}`, { token });

const cryptoTrader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `ov-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};

const quiet = { live_enabled: false, first_live_order_at: null, locked_until: null, lock_reason: null, live_orders_today: 0, daily_limit: 7 };

describe('GET /api/admin/users/{user_id}', () => {
  it('shows the user, its live trading per asset class (flag, first live order, lock and reason, today’s live orders) and its bot', async () => {
    const user = await cryptoTrader('ov_detail');
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    const placedAt = clock.now().toISOString();
    const order = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', live_mode: true } });
    expect(order.status, order.text).toBe(201);
    const lockedUntil = new Date(clock.now().getTime() + 86_400_000);
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'us_equity', lockedUntil, reason: 'kill switch: daily loss -5.20 %', at: clock.now() });
    const bot = await server.http('POST', '/api/bot/start', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbols: ['BTC-USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } } });
    expect(bot.status, bot.text).toBe(200);

    const res = await detail(user.user.id);
    expect(res.status, res.text).toBe(200);
    const listed = (await server.http('GET', '/api/admin/users?size=100', { token: admin.tokens.access_token })).body.items.find((item: { id: number }) => item.id === user.user.id);
    const { live, bot: botStatus, ...shown } = res.body;
    expect(shown).toEqual(listed);
    expect(live).toEqual({
      crypto: { ...quiet, live_enabled: true, first_live_order_at: placedAt, live_orders_today: 1 },
      us_equity: { ...quiet, locked_until: lockedUntil.toISOString(), lock_reason: 'kill switch: daily loss -5.20 %' },
      kr_equity: quiet,
    });
    const own = await server.http('GET', '/api/bot/status', { token: user.tokens.access_token });
    expect(botStatus).toEqual(own.body);
    expect(botStatus).toMatchObject({ is_running: true, asset_class: 'crypto', symbols: ['BTC/USDT'], strategy_name: 'sma_crossover' });
    // The user's own live status is what it was: no lock reason there.
    const status = await server.http('GET', '/api/operations/live/status', { token: user.tokens.access_token });
    expect(status.body.us_equity).not.toHaveProperty('lock_reason');
  });

  it('shows an expired lock as none, and a user who never started a bot with bot null', async () => {
    const user = await newUser(server, { prefix: 'ov_plain' });
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(clock.now().getTime() - 1000), reason: 'old', at: clock.now() });
    const res = await detail(user.user.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: user.user.id, username: user.username, role: 'user', is_active: true, bot: null });
    expect(res.body.live).toEqual({ crypto: quiet, us_equity: quiet, kr_equity: quiet });
  });

  it('answers 404 NOT_FOUND for an unknown user, 422 for a bad id, 403 to a regular user', async () => {
    const missing = await detail(2_147_483_000);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ code: 'NOT_FOUND', message: 'User not found', status: 404 });
    for (const bad of ['abc', '0', '01']) {
      const res = await detail(bad);
      expect(res.status, bad).toBe(422);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const user = await newUser(server, { prefix: 'ov_nosy' });
    const refused = await detail(user.user.id, user.tokens.access_token);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
  });
});

describe('GET /api/admin/alerts', () => {
  it('lists critical alerts newest first, filtered by user and kind, a page at a time', async () => {
    const [first, second] = [await newUser(server, { prefix: 'ov_alert_a' }), await newUser(server, { prefix: 'ov_alert_b' })];
    const raise = async (userId: number, kind: 'daily_loss_warning' | 'kill_switch_lock', assetClass: 'crypto' | 'us_equity') => {
      clock.advance(1000);
      const at = clock.now();
      expect(await recordCriticalAlert(server.services.db, { userId, assetClass, day: at.toISOString().slice(0, 10), kind, title: `${kind} ${userId}`, data: { mode: 'paper', pnl_pct: '-4.10' }, at })).toBe(true);
      return at.toISOString();
    };
    const warnedA = await raise(first.user.id, 'daily_loss_warning', 'crypto');
    const lockedA = await raise(first.user.id, 'kill_switch_lock', 'crypto');
    const warnedB = await raise(second.user.id, 'daily_loss_warning', 'us_equity');

    const all = await alerts('?size=100');
    expect(all.status, all.text).toBe(200);
    const mine = (all.body.items as { user_id: number; at: string }[]).filter((item) => [first.user.id, second.user.id].includes(item.user_id));
    expect(mine.map((item) => item.at)).toEqual([warnedB, lockedA, warnedA]);
    expect(all.body.items[0]).toEqual({
      id: expect.any(Number),
      user_id: second.user.id,
      asset_class: 'us_equity',
      day: '2026-03-10',
      kind: 'daily_loss_warning',
      title: `daily_loss_warning ${second.user.id}`,
      data: { mode: 'paper', pnl_pct: '-4.10' },
      at: warnedB,
    });

    const ofFirst = await alerts(`?user_id=${first.user.id}`);
    expect(ofFirst.body).toMatchObject({ total: 2, page: 1, size: 20 });
    expect(ofFirst.body.items.map((item: { kind: string }) => item.kind)).toEqual(['kill_switch_lock', 'daily_loss_warning']);
    const locks = await alerts(`?user_id=${first.user.id}&kind=kill_switch_lock`);
    expect(locks.body.items.map((item: { at: string }) => item.at)).toEqual([lockedA]);
    const secondPage = await alerts(`?user_id=${first.user.id}&page=2&size=1`);
    expect(secondPage.body.items.map((item: { at: string }) => item.at)).toEqual([warnedA]);
    expect((await alerts('?user_id=2147483000')).body).toEqual({ items: [], total: 0, page: 1, size: 20 });
  });

  it('answers 422 for an unknown kind or a bad user id, 403 to a regular user', async () => {
    for (const query of ['?kind=panic', '?user_id=x', '?size=101']) {
      const res = await alerts(query);
      expect(res.status, query).toBe(422);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const user = await newUser(server, { prefix: 'ov_alert_nosy' });
    expect((await alerts('', user.tokens.access_token)).status).toBe(403);
  });
});
