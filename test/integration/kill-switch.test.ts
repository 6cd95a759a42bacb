// The kill switch over HTTP and WebSocket: a price crash (POST /api/admin/sim/prices) trips the
// −4 % alert and then the −5 % lock; buys are refused with the lock's end (sells still pass), working
// buys are canceled (every working sell stays), a halted bot_status frame reaches /ws/live and the user's running bot stops, the webhook is
// called once per alert, two sweeps at once lock once; an operator clear holds for the day. With
// KILL_SWITCH_LIQUIDATE, a fill after the crash trips it and every position is sold at market.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, criticalAlerts, emergencyLocks } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startFakeWebhook, type FakeWebhook } from '../support/fake-webhook.ts';
import { startTestServer, tempDir, type TestServer } from '../support/server.ts';
import { LIQUIDATE_QUEUE } from '../../server/live/kill-switch.ts';
import { setLock } from '../../server/controls/queries.ts';
import { rowsOf } from '../../server/db/client.ts';
import { waitFor } from '../support/wait.ts';
import { connect, liveSubscribed, wsUrl } from '../support/ws.ts';

// A Tuesday afternoon (UTC): crypto trades around the clock.
const clock = manualClock('2026-03-10T15:00:00Z');
let keyCount = 0;

const start = (env: Record<string, string>, webhook: FakeWebhook) =>
  startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', ALERT_WEBHOOK_URL: webhook.url('/alerts'), ...env }, undefined, { clock });

const trader = async (server: TestServer, prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `ks-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};
/**
 * Everything an action set going, finished: the simulator's fills, the order service's intake,
 * and the kill switch's evaluations after those fills (asked for once the intake has applied a
 * fill, a microtask later: one macrotask turn lets them register first). Without the last step,
 * an evaluation after a fill could run after the test's next price change, and lock early.
 */
const settled = async (server: TestServer) => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
  await new Promise((resolve) => setImmediate(resolve));
  await server.services.killSwitch.idle();
};
const place = async (server: TestServer, user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', ...body } });
  await settled(server);
  return res;
};
const setPrice = async (server: TestServer, admin: FactoryUser, price: number) => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price } });
  expect(res.status, res.text).toBe(200);
  await settled(server);
};
const openOrders = async (server: TestServer, user: FactoryUser) =>
  (await server.http('GET', '/api/equity/orders?asset_class=crypto&status=open&size=100', { token: user.tokens.access_token })).body.items as { client_order_id: string; side: string; qty: number; metadata: Record<string, unknown> }[];
const alertsOf = (webhook: FakeWebhook, userId: number, kind: string) =>
  webhook.accepted.filter((body: { kind?: string; data?: { user_id?: number } }) => body.kind === kind && body.data?.user_id === userId);

describe('a price crash, without liquidation', () => {
  let server: TestServer;
  let webhook: FakeWebhook;
  let admin: FactoryUser;
  beforeAll(async () => {
    webhook = await startFakeWebhook();
    // Sizing holds per position: the 0.5 BTC held and the 0.1 bracketed below risk 2,752.5 together, over 2 %.
    server = await start({ RISK_MAX_RISK_PER_TRADE_PCT: '3' }, webhook);
    admin = await newUser(server, { role: 'admin', prefix: 'ks_admin' });
    await setPrice(server, admin, 50_000);
  });
  afterAll(async () => {
    await server.stop();
    await webhook.close();
  });

  it('alerts once at −4 %, locks once at −5 % (buys refused until its end, sells accepted, working buys canceled, every working sell kept, bot halted), and an operator clear holds for the day', async () => {
    const user = await trader(server, 'crash');
    const locks: [number, string, string][] = [];
    server.services.killSwitch.onLock((userId, assetClass, lockedUntil) => locks.push([userId, assetClass, lockedUntil.toISOString()]));
    // 0.6 BTC held (0.1 of it under a bracket, 0.05 in a resting sell), and a resting entry order far below the market.
    expect((await place(server, user, { side: 'buy', qty: 0.5, order_type: 'market' })).status).toBe(201);
    const restingSell = await place(server, user, { side: 'sell', qty: 0.05, order_type: 'limit', limit_price: 90_000, time_in_force: 'gtc' });
    expect(restingSell.status, restingSell.text).toBe(201);
    expect((await place(server, user, { side: 'buy', qty: 0.1, order_type: 'market', bracket: { take_profit: 60_000, stop_loss: 35_000 } })).status).toBe(201);
    const resting = await place(server, user, { side: 'buy', qty: 0.01, order_type: 'limit', limit_price: 30_000, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    const before = await openOrders(server, user);
    expect(before.filter((order) => order.metadata.parent_client_order_id !== undefined)).toHaveLength(2);
    expect(before.map((order) => order.client_order_id)).toContain(resting.body.client_order_id);
    const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
    await liveSubscribed(server, user.user.id);
    // The user's bot trades crypto: the lock stops it.
    const bot = await server.http('POST', '/api/bot/start', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbols: ['BTC/USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } } });
    expect(bot.status, bot.text).toBe(200);

    // About −4.4 %: the warning, once however often it is evaluated.
    await setPrice(server, admin, 42_800);
    expect(await server.services.killSwitch.sweep()).toMatchObject({ warned: 1, locked: 0 });
    expect(await server.services.killSwitch.sweep()).toMatchObject({ warned: 0, locked: 0 });
    await server.services.alerts.idle();
    expect(alertsOf(webhook, user.user.id, 'daily_loss_warning')).toHaveLength(1);
    expect((await place(server, user, { side: 'sell', qty: 0.01, order_type: 'market' })).status).toBe(201);

    // About −6 %: two sweeps at once lock once.
    await setPrice(server, admin, 40_000);
    const [first, second] = await Promise.all([server.services.killSwitch.sweep(), server.services.killSwitch.sweep()]);
    expect(first.locked + second.locked).toBe(1);
    await server.services.orders.idle();
    await server.services.alerts.idle();

    const [lock] = await server.services.db.select().from(emergencyLocks).where(and(eq(emergencyLocks.userId, user.user.id), eq(emergencyLocks.assetClass, 'crypto')));
    const lockedUntil = new Date(clock.now().getTime() + 24 * 3_600_000).toISOString();
    expect(lock!.lockedUntil.toISOString()).toBe(lockedUntil);
    expect(locks).toEqual([[user.user.id, 'crypto', lockedUntil]]);
    expect(alertsOf(webhook, user.user.id, 'kill_switch_lock')).toHaveLength(1);
    expect(alertsOf(webhook, user.user.id, 'daily_loss_warning')).toHaveLength(1);
    const stored = await server.services.db.select().from(criticalAlerts).where(eq(criticalAlerts.userId, user.user.id));
    expect(stored.map((row) => row.kind).sort()).toEqual(['daily_loss_warning', 'kill_switch_lock']);
    const audited = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'kill_switch.locked')));
    expect(audited).toHaveLength(1);

    // The resting entry is canceled; every working sell stays, the bracket's exits and the plain one.
    const after = await openOrders(server, user);
    expect(after.map((order) => order.client_order_id)).not.toContain(resting.body.client_order_id);
    expect(after.map((order) => order.client_order_id)).toContain(restingSell.body.client_order_id);
    expect(after.filter((order) => order.metadata.parent_client_order_id !== undefined)).toHaveLength(2);
    const cancels = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.cancel_requested')));
    expect(cancels.map((row) => [row.data.client_order_id, row.data.by, row.actorUserId])).toEqual([[resting.body.client_order_id, 'kill_switch', null]]);

    // The bot's own start frame came first; the halted one follows the lock.
    const frame = await socket.next((candidate) => candidate.type === 'bot_status' && candidate.is_halted === true);
    expect(frame).toMatchObject({ type: 'bot_status', is_running: false, is_halted: true });
    expect(frame.halt_reason).toContain(lockedUntil);
    await socket.close();

    const botStatus = await waitFor(
      async () => (await server.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body,
      (body) => body.is_running === false,
    );
    expect(botStatus).toMatchObject({ is_running: false, is_halted: true, stopped_by: 'lock' });
    expect(botStatus.halt_reason).toContain(lockedUntil);

    const refused = await place(server, user, { side: 'buy', qty: 0.001, order_type: 'market' });
    expect([refused.status, refused.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(refused.body.message).toContain(lockedUntil);
    // A lock refuses what adds risk, never an exit: a sell of what is held goes through.
    expect((await place(server, user, { side: 'sell', qty: 0.01, order_type: 'market' })).status).toBe(201);
    const status = await server.http('GET', '/api/operations/live/status', { token: user.tokens.access_token });
    expect(status.body.crypto.locked_until).toBe(lockedUntil);

    // Only an operator clears it early; the day's trip is spent, so the next sweep does not lock again.
    const cleared = await server.http('POST', `/api/admin/users/${user.user.id}/locks/clear`, { token: admin.tokens.access_token, body: { asset_class: 'crypto' } });
    expect(cleared.body.cleared).toBe(true);
    expect(await server.services.killSwitch.sweep()).toMatchObject({ locked: 0, warned: 0 });
    expect((await place(server, user, { side: 'sell', qty: 0.01, order_type: 'market' })).status).toBe(201);
    await server.services.alerts.idle();
    expect(alertsOf(webhook, user.user.id, 'kill_switch_lock')).toHaveLength(1);
  });

  it('cancels, at the next sweep, an entry order that escaped the lock (the process died before its cancels)', async () => {
    const user = await trader(server, 'escaped');
    const resting = await place(server, user, { side: 'buy', qty: 0.01, order_type: 'limit', limit_price: 1_000, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    // The lock as a crash right after its commit left it two minutes ago: written, nothing canceled.
    const lockedAt = new Date(clock.now().getTime() - 120_000);
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(lockedAt.getTime() + 86_400_000), reason: 'kill switch: test', at: lockedAt });
    expect((await openOrders(server, user)).map((order) => order.client_order_id)).toContain(resting.body.client_order_id);

    expect(await server.services.killSwitch.sweep()).toMatchObject({ recanceled: 1 });
    await server.services.simulator.idle();
    await server.services.orders.idle();
    expect((await openOrders(server, user)).map((order) => order.client_order_id)).not.toContain(resting.body.client_order_id);
    const cancels = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.cancel_requested')));
    expect(cancels.map((row) => row.data.by)).toEqual(['kill_switch']);
    // Nothing left to cancel: the next sweep does nothing for it.
    expect(await server.services.killSwitch.sweep()).toMatchObject({ recanceled: 0 });
  });
});

describe('a bracket entry that fills in parts, under a lock', () => {
  let server: TestServer;
  let webhook: FakeWebhook;
  let admin: FactoryUser;
  beforeAll(async () => {
    webhook = await startFakeWebhook();
    // 1,000 lots of 0.00001 BTC: a resting limit fills 0.01 BTC per price it meets.
    server = await start({ SIM_LIQUIDITY_LOTS_PER_TICK: '1000' }, webhook);
    admin = await newUser(server, { role: 'admin', prefix: 'ksp_admin' });
    await setPrice(server, admin, 50_000);
  });
  afterAll(async () => {
    await server.stop();
    await webhook.close();
  });

  /** The entry's working children, by client id, with their quantities. */
  const childrenOf = async (user: FactoryUser, entryClientOrderId: string) =>
    (await openOrders(server, user))
      .filter((order) => order.metadata.parent_client_order_id === entryClientOrderId)
      .map((order) => ({ client_order_id: order.client_order_id, qty: order.qty }))
      .sort((a, b) => a.client_order_id.localeCompare(b.client_order_id));

  it('its children cover what it has filled, growing with each fill, and the lock that cancels it keeps them', async () => {
    const user = await trader(server, 'partly');
    const entry = await place(server, user, { side: 'buy', qty: 0.025, order_type: 'limit', limit_price: 49_000, time_in_force: 'gtc', bracket: { take_profit: 60_000, stop_loss: 45_000 } });
    expect(entry.status, entry.text).toBe(201);
    const children = () => childrenOf(user, entry.body.client_order_id);
    const pairOf = (qty: number) => [`${entry.body.client_order_id}:sl`, `${entry.body.client_order_id}:tp`].map((client_order_id) => ({ client_order_id, qty }));

    await setPrice(server, admin, 48_900);
    expect(await children()).toEqual(pairOf(0.01));
    await setPrice(server, admin, 48_800);
    // The order service shows the legs as the broker grew them.
    expect(await children()).toEqual(pairOf(0.02));

    // A lock (as a crash right after its commit left it) cancels the working entry at the next sweep.
    const lockedAt = new Date(clock.now().getTime() - 120_000);
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(lockedAt.getTime() + 86_400_000), reason: 'kill switch: test', at: lockedAt });
    expect(await server.services.killSwitch.sweep()).toMatchObject({ recanceled: 1 });
    await settled(server);
    const got = await server.http('GET', `/api/equity/orders/${entry.body.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(got.body).toMatchObject({ status: 'canceled', filled_qty: 0.02 });
    // The children of its filled part stay, and protect exactly what is held.
    expect(await children()).toEqual(pairOf(0.02));
    const positions = await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token });
    expect(positions.body.items).toMatchObject([{ symbol: 'BTC/USDT', qty: 0.02 }]);
  });

  it('a leg selling in part shrinks the other in the order list; a fill after the pair ended gets a new pair', async () => {
    const user = await trader(server, 'pairs');
    await setPrice(server, admin, 50_000);
    const entry = await place(server, user, { side: 'buy', qty: 0.025, order_type: 'limit', limit_price: 49_000, time_in_force: 'gtc', bracket: { take_profit: 60_000, stop_loss: 45_000 } });
    expect(entry.status, entry.text).toBe(201);
    const children = () => childrenOf(user, entry.body.client_order_id);
    const id = (suffix: string) => `${entry.body.client_order_id}${suffix}`;
    await setPrice(server, admin, 48_900);
    await setPrice(server, admin, 48_800);
    expect(await children()).toEqual([
      { client_order_id: id(':sl'), qty: 0.02 },
      { client_order_id: id(':tp'), qty: 0.02 },
    ]);
    // The take-profit sells 0.01 of the 0.02: the stop-loss protects the 0.01 still held.
    await setPrice(server, admin, 61_000);
    expect(await children()).toEqual([
      { client_order_id: id(':sl'), qty: 0.01 },
      { client_order_id: id(':tp'), qty: 0.02 },
    ]);
    // It sells the rest: the pair has ended, nothing is held.
    await setPrice(server, admin, 61_100);
    expect(await children()).toEqual([]);
    // The entry's last 0.005 fills: a new pair protects it.
    await setPrice(server, admin, 48_700);
    expect(await children()).toEqual([
      { client_order_id: id(':sl.2'), qty: 0.005 },
      { client_order_id: id(':tp.2'), qty: 0.005 },
    ]);
    const positions = await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token });
    expect(positions.body.items).toMatchObject([{ symbol: 'BTC/USDT', qty: 0.005 }]);
    // Those names stay the broker's: an order of the user's own may not take one.
    const named = await place(server, user, { side: 'buy', qty: 0.001, order_type: 'market', client_order_id: 'mine:tp.3' });
    expect(named.status, named.text).toBe(422);
  });
});

describe('with KILL_SWITCH_LIQUIDATE=true', () => {
  let server: TestServer;
  let webhook: FakeWebhook;
  let admin: FactoryUser;
  beforeAll(async () => {
    webhook = await startFakeWebhook();
    server = await start({ KILL_SWITCH_LIQUIDATE: 'true', RISK_MAX_RISK_PER_TRADE_PCT: '3' }, webhook);
    admin = await newUser(server, { role: 'admin', prefix: 'ksl_admin' });
    await setPrice(server, admin, 50_000);
  });
  afterAll(async () => {
    await server.stop();
    await webhook.close();
  });

  it('a fill after the crash trips the lock, every order (exits too) is canceled and every position sold at market through the lock', async () => {
    const user = await trader(server, 'liquidate');
    expect((await place(server, user, { side: 'buy', qty: 0.5, order_type: 'market' })).status).toBe(201);
    expect((await place(server, user, { side: 'buy', qty: 0.1, order_type: 'market', bracket: { take_profit: 60_000, stop_loss: 35_000 } })).status).toBe(201);
    await setPrice(server, admin, 40_000);
    // No sweep: the fill of this sell is what the kill switch evaluates after.
    expect((await place(server, user, { side: 'sell', qty: 0.01, order_type: 'market' })).status).toBe(201);
    await server.services.killSwitch.idle();
    await waitFor(
      async () => {
        await server.services.simulator.idle();
        await server.services.orders.idle();
        return (await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token })).body.items as unknown[];
      },
      (items) => items.length === 0,
    );
    expect(await openOrders(server, user)).toEqual([]);
    const sells = (await server.http('GET', '/api/equity/orders?asset_class=crypto&status=filled&size=100', { token: user.tokens.access_token })).body.items as { side: string; qty: number; metadata: Record<string, unknown> }[];
    expect(sells.filter((order) => order.metadata.liquidation === true).map((order) => [order.side, order.qty])).toEqual([['sell', 0.59]]);
    await server.services.alerts.idle();
    const [alert] = alertsOf(webhook, user.user.id, 'kill_switch_lock');
    // Canceling one of the bracket's OCO pair cancels its sibling at the broker: one or two cancels.
    expect(alert.data).toMatchObject({ liquidate: true, liquidation_orders: 1 });
    expect(alert.data.canceled_orders).toBeGreaterThanOrEqual(1);
    // Straight past −5 %: the day's −4 % row is written with the lock, under the warning's own title.
    const stored = await server.services.db.select().from(criticalAlerts).where(eq(criticalAlerts.userId, user.user.id));
    const titles = Object.fromEntries(stored.map((row) => [row.kind, row.title]));
    expect(titles.kill_switch_lock).toMatch(new RegExp(`^Kill switch: user ${user.user.id}'s crypto locked until `));
    expect(titles.daily_loss_warning).toMatch(new RegExp(`^Daily loss -\\d+\\.\\d{2} % on user ${user.user.id}'s crypto \\(paper\\)$`));
  });

  it('a closed market’s liquidation waits for its open: a pg-boss job that starts then', async () => {
    // 15:00 UTC is midnight in Seoul: KRX is closed until 09:00 KST (00:00 UTC) the next weekday.
    const user = await newUser(server, { prefix: 'liq_krx' });
    const deferred = await server.services.killSwitch.liquidate({ userId: user.user.id, assetClass: 'kr_equity' });
    expect(deferred).toEqual({ placed: 0, deferredUntil: new Date('2026-03-11T00:00:00Z') });
    const rows = await rowsOf<{ data: unknown; start_after: Date | string }>(
      server.services.db,
      sql`select data, start_after from pgboss.job where name = ${LIQUIDATE_QUEUE} and (data->>'userId')::integer = ${user.user.id}`,
    );
    expect(rows.map((row) => [row.data, new Date(row.start_after).toISOString()])).toEqual([[{ userId: user.user.id, assetClass: 'kr_equity' }, '2026-03-11T00:00:00.000Z']]);
  });
});

// Two instances on one PostgreSQL database (embedded PGlite is one process's database).
describe.skipIf(!process.env.DATABASE_URL)('two instances sweeping at once', () => {
  let a: TestServer;
  let b: TestServer;
  let webhook: FakeWebhook;
  beforeAll(async () => {
    webhook = await startFakeWebhook();
    a = await start({}, webhook);
    b = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', ALERT_WEBHOOK_URL: webhook.url('/alerts') }, { dataDir: tempDir(), databaseUrl: a.databaseUrl }, { clock });
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
    await webhook.close();
  });

  it('lock once, alert once and cancel once', async () => {
    const admin = await newUser(a, { role: 'admin', prefix: 'ks2_admin' });
    await setPrice(a, admin, 50_000);
    const user = await trader(a, 'two');
    expect((await place(a, user, { side: 'buy', qty: 0.5, order_type: 'market' })).status).toBe(201);
    expect((await place(a, user, { side: 'buy', qty: 0.01, order_type: 'limit', limit_price: 30_000, time_in_force: 'gtc' })).status).toBe(201);
    await setPrice(a, admin, 38_000);
    const results = await Promise.all([a.services.killSwitch.sweep(), b.services.killSwitch.sweep(), a.services.killSwitch.sweep(), b.services.killSwitch.sweep()]);
    expect(results.reduce((sum, result) => sum + result.locked, 0)).toBe(1);
    await a.services.alerts.idle();
    await b.services.alerts.idle();
    expect(alertsOf(webhook, user.user.id, 'kill_switch_lock')).toHaveLength(1);
    const cancels = await a.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.cancel_requested')));
    expect(cancels).toHaveLength(1);
  });
});
