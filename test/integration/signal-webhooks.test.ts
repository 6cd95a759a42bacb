// Signal webhooks over HTTP: hooks made (token once), listed, rotated and removed; /hooks/{token}
// judged at once (JSON or text/plain, passphrase, staleness, 422 listed with the reason) and its
// order placed after the 202 through the order service (one order per alert id, the lock's rules,
// the hook's mode, qty_pct rounded down to the lot); GET /api/signals; the sweep of what a crash
// left pending; the API key scopes of the routes.
import { and, eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { setLock } from '../../server/controls/queries.ts';
import { auditEvents, orders, signals } from '../../server/db/schema/index.ts';
import { insertSignal } from '../../server/signals/queries.ts';
import { webhookClientOrderId } from '../../server/signals/payload.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

// Tuesday 2026-03-10, 11:00 in New York: NYSE open; crypto always is.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'wh_admin' });
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.stop());

/** A user with a crypto key (paper and live accounts of the simulator). */
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `wh-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};

const makeHook = async (user: FactoryUser, body: Record<string, unknown> = {}) => {
  const res = await server.http('POST', '/api/signals/webhooks', { token: user.tokens.access_token, body: { name: 'tv', asset_class: 'crypto', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; token: string; url: string };
};

/** Calls a hook as TradingView does: the alert's message as the body, JSON or plain text. */
const call = (url: string, body: unknown, contentType = 'application/json') =>
  server.http('POST', url, { rawBody: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': contentType } });

const signalsOf = async (user: FactoryUser, query = '') => {
  const res = await server.http('GET', `/api/signals${query}`, { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { items: Record<string, any>[]; total: number };
};

/** Waits for a signal's outcome: the placement runs after the 202. */
const outcomeOf = async (user: FactoryUser, signalId: string) =>
  (await waitFor(
    async () => (await signalsOf(user, '?size=100')).items.find((item) => item.id === signalId),
    (found) => found !== undefined && found.outcome !== 'pending',
  ))!;

const ordersOf = (userId: number) => server.services.db.select().from(orders).where(eq(orders.userId, userId));
const buy = { symbol: 'BTC/USDT', side: 'buy', qty: 0.01 };
const settle = async () => {
  await server.services.signals.idle();
  await server.services.simulator.idle();
  await server.services.orders.idle();
};

describe('signal webhooks', () => {
  it('shows the token once; lists hooks without it; five calls of one alert make one order from the webhook', async () => {
    const user = await trader('wh_once');
    const hook = await makeHook(user);
    expect(hook.url).toBe(`/hooks/${hook.token}`);
    const listed = await server.http('GET', '/api/signals/webhooks', { token: user.tokens.access_token });
    expect(listed.body.items).toEqual([expect.objectContaining({ id: hook.id, name: 'tv', asset_class: 'crypto', mode: 'paper', max_lag_sec: 120, has_passphrase: false, token_prefix: hook.token.slice(0, 7) })]);
    expect(listed.text).not.toContain(hook.token);

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(hook.url, { ...buy, alert_id: 'cross-1' });
      expect(res.status, res.text).toBe(202);
      ids.push(res.body.signal_id);
    }
    const outcomes = await Promise.all(ids.map((id) => outcomeOf(user, id)));
    const made = await ordersOf(user.user.id);
    expect(made).toHaveLength(1);
    expect(made[0]!.clientOrderId).toBe(webhookClientOrderId(hook.id, { alertId: 'cross-1' }));
    expect(made[0]!.clientOrderId).toMatch(/^wh-[0-9a-f]{48}$/);
    expect(made[0]!.metadata).toMatchObject({ source: 'webhook' });
    for (const outcome of outcomes) expect(outcome).toMatchObject({ outcome: 'accepted', order_id: made[0]!.clientOrderId, broker_order_id: made[0]!.brokerOrderId, qty: 0.01, alert_id: 'cross-1', webhook_name: 'tv', error_code: null });
    // Each call audited, and each outcome.
    const actions = (await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), like(auditEvents.action, 'signal.%')))).map((row) => row.action);
    expect(actions.filter((action) => action === 'signal.received')).toHaveLength(5);
    expect(actions.filter((action) => action === 'signal.accepted')).toHaveLength(5);

    // Without an alert id, every call is an order of its own.
    for (let i = 0; i < 2; i++) expect((await call(hook.url, buy)).status).toBe(202);
    await settle();
    expect(await ordersOf(user.user.id)).toHaveLength(3);
  });

  it('takes a text/plain body (TradingView sends a message that is not pure JSON as text)', async () => {
    const user = await trader('wh_text');
    const hook = await makeHook(user);
    const res = await call(hook.url, JSON.stringify({ ...buy, order_type: 'limit', limit_price: 49000, alert_id: 'txt' }), 'text/plain; charset=utf-8');
    expect(res.status, res.text).toBe(202);
    expect(await outcomeOf(user, res.body.signal_id)).toMatchObject({ outcome: 'accepted', order_type: 'limit', symbol: 'BTC/USDT' });
    const [order] = await ordersOf(user.user.id);
    expect(order).toMatchObject({ orderType: 'limit', limitPrice: '49000', metadata: expect.objectContaining({ source: 'webhook' }) });
    // Another media type is refused before anything is read.
    expect((await call(hook.url, 'symbol=BTC', 'application/x-www-form-urlencoded')).status).toBe(415);
  });

  it('refuses a stale alert, a body that does not parse and one that fails validation with 422, each listed with its reason', async () => {
    const user = await trader('wh_stale');
    const hook = await makeHook(user, { max_lag_sec: 60 });
    const old = new Date(clock.now().getTime() - 61_000);
    const stale = await call(hook.url, { ...buy, timestamp: old.toISOString() });
    expect(stale.status).toBe(422);
    expect(stale.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'timestamp' }] });
    const staleUnix = await call(hook.url, { ...buy, timestamp: Math.floor(old.getTime() / 1000) });
    expect(staleUnix.status).toBe(422);
    const fresh = await call(hook.url, { ...buy, timestamp: Math.floor(clock.now().getTime() / 1000) - 5 });
    expect(fresh.status, fresh.text).toBe(202);
    const malformed = await call(hook.url, '{"symbol": "BTC/USDT", ', 'text/plain');
    expect(malformed.body).toMatchObject({ code: 'VALIDATION_ERROR', status: 422 });
    const misplaced = await call(hook.url, { ...buy, stop_price: 1 });
    expect(misplaced.status).toBe(422);
    const both = await call(hook.url, { ...buy, qty_pct: 0.5 });
    expect(both.status).toBe(422);
    await settle();

    const { items } = await signalsOf(user, '?outcome=invalid');
    expect(items).toHaveLength(5);
    // Received at one instant (the clock stands still): found by their reasons.
    const reasons = items.map((item) => item.error_message as string);
    for (const reason of [/stale: it fired 61 s ago.*max_lag_sec of 60/, /Malformed JSON/, /stop_price/, /exactly one of qty and qty_pct/]) expect(reasons.filter((text) => reason.test(text)), String(reason)).not.toEqual([]);
    expect(reasons.filter((text) => /stale/.test(text))).toHaveLength(2);
    for (const item of items) expect(item).toMatchObject({ outcome: 'invalid', error_code: 'VALIDATION_ERROR', order_id: null, decided_at: clock.now().toISOString() });
    expect(items.filter((item) => item.symbol === 'BTC/USDT' && item.side === 'buy')).toHaveLength(4);
    expect((await signalsOf(user, '?outcome=accepted')).items).toHaveLength(1);
    expect(await ordersOf(user.user.id)).toHaveLength(1);
  });

  it('refuses a wrong or missing passphrase (listed, no order) and never stores the right one', async () => {
    const user = await trader('wh_pass');
    const hook = await makeHook(user, { passphrase: 'open sesame' });
    const wrong = await call(hook.url, { ...buy, passphrase: 'open barley' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ code: 'FORBIDDEN' });
    expect((await call(hook.url, buy)).status).toBe(403);
    const right = await call(hook.url, { ...buy, passphrase: 'open sesame' });
    expect(right.status, right.text).toBe(202);
    await settle();
    const { items } = await signalsOf(user);
    expect(items.map((item) => [item.outcome, item.error_code])).toEqual([
      ['accepted', null],
      ['refused', 'FORBIDDEN'],
      ['refused', 'FORBIDDEN'],
    ]);
    expect(await ordersOf(user.user.id)).toHaveLength(1);
    const rows = await server.services.db.select().from(signals).where(eq(signals.userId, user.user.id));
    expect(JSON.stringify(rows)).not.toContain('sesame');
  });

  it('under a lock refuses a buy signal and lets a reducing sell through', async () => {
    const user = await trader('wh_lock');
    const hook = await makeHook(user);
    expect((await call(hook.url, { ...buy, qty: 0.02 })).status).toBe(202);
    await settle();
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(clock.now().getTime() + 3_600_000), reason: 'kill switch: test', at: clock.now() });
    const locked = await call(hook.url, buy);
    expect(locked.status).toBe(202);
    expect(await outcomeOf(user, locked.body.signal_id)).toMatchObject({ outcome: 'refused', error_code: 'RISK_RULE_VIOLATION', order_id: null });
    const sell = await call(hook.url, { symbol: 'BTC-USDT', side: 'sell', qty_pct: 0.5 });
    expect(sell.status).toBe(202);
    const sold = await outcomeOf(user, sell.body.signal_id);
    expect(sold).toMatchObject({ outcome: 'accepted', side: 'sell', qty: 0.01, qty_pct: 0.5 });
    expect((await ordersOf(user.user.id)).map((order) => order.side).sort()).toEqual(['buy', 'sell']);
  });

  it('sizes qty_pct down to the lot: of buying power at the price for a buy, of the held quantity for a sell; below one lot is refused', async () => {
    const user = await trader('wh_pct');
    const hook = await makeHook(user);
    // 0.0012345 of 100,000 USDT at 50,000 is 0.002469 BTC: 0.00246 in lots of 0.00001.
    const res = await call(hook.url, { symbol: 'BTC/USDT', side: 'buy', qty_pct: 0.0012345 });
    expect(await outcomeOf(user, res.body.signal_id)).toMatchObject({ outcome: 'accepted', qty: 0.00246, qty_pct: 0.0012345 });
    await settle();
    // A third of 0.00246 is 0.00082.
    const third = await call(hook.url, { symbol: 'BTC/USDT', side: 'sell', qty_pct: 0.3333 });
    expect(await outcomeOf(user, third.body.signal_id)).toMatchObject({ outcome: 'accepted', qty: 0.00081 });
    const tiny = await call(hook.url, { symbol: 'BTC/USDT', side: 'buy', qty_pct: 0.000001 });
    const refused = await outcomeOf(user, tiny.body.signal_id);
    expect(refused).toMatchObject({ outcome: 'refused', error_code: 'VALIDATION_ERROR' });
    expect(refused.error_message).toMatch(/below one lot/);
    expect((await ordersOf(user.user.id)).map((order) => order.qty).sort()).toEqual(['0.00081', '0.00246']);
  });

  it('places a live hook’s orders on the live account only: refused by the live gates, never sent to paper', async () => {
    const user = await trader('wh_live');
    const hook = await makeHook(user, { mode: 'live' });
    const res = await call(hook.url, buy);
    expect(res.status).toBe(202);
    const outcome = await outcomeOf(user, res.body.signal_id);
    expect(outcome).toMatchObject({ outcome: 'refused', mode: 'live', error_code: 'FEATURE_DISABLED' });
    expect(await ordersOf(user.user.id)).toEqual([]);
  });

  it('answers 404 for an unknown token, a rotated token and a removed hook; another user’s hook is 404 as a missing one', async () => {
    const user = await trader('wh_rot');
    const other = await trader('wh_other');
    const hook = await makeHook(user);
    expect((await call('/hooks/wh_notatokenatall', buy)).body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((await call(`/hooks/wh_${'A'.repeat(43)}`, buy)).status).toBe(404);

    const asOther = await server.http('POST', `/api/signals/webhooks/${hook.id}/rotate`, { token: other.tokens.access_token, body: {} });
    expect(asOther.status).toBe(404);
    expect((await server.http('DELETE', `/api/signals/webhooks/${hook.id}`, { token: other.tokens.access_token })).status).toBe(404);
    expect((await signalsOf(other, `?webhook_id=${hook.id}`)).total).toBe(0);

    const rotated = await server.http('POST', `/api/signals/webhooks/${hook.id}/rotate`, { token: user.tokens.access_token, body: {} });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.token).not.toBe(hook.token);
    expect((await call(hook.url, buy)).status).toBe(404);
    expect((await call(rotated.body.url, buy)).status).toBe(202);

    expect((await server.http('DELETE', `/api/signals/webhooks/${hook.id}`, { token: user.tokens.access_token })).status).toBe(204);
    expect((await call(rotated.body.url, buy)).status).toBe(404);
    expect((await server.http('GET', '/api/signals/webhooks', { token: user.tokens.access_token })).body.items).toEqual([]);
    await settle();
    // The removed hook's signals stay listed.
    expect((await signalsOf(user)).items).toEqual([expect.objectContaining({ webhook_id: hook.id, outcome: 'accepted' })]);
  });

  it('takes personal API keys by scope: read lists, trade makes paper hooks, live besides for a live hook', async () => {
    const user = await trader('wh_keys');
    const keyWith = async (scopes: string[]) => (await server.http('POST', '/api/auth/api-keys', { token: user.tokens.access_token, body: { name: scopes.join('+'), scopes } })).body.key as string;
    const read = await keyWith(['read']);
    const trade = await keyWith(['trade']);
    const live = await keyWith(['trade', 'live']);
    expect((await server.http('GET', '/api/signals', { token: read })).status).toBe(200);
    expect((await server.http('GET', '/api/signals/webhooks', { token: read })).status).toBe(200);
    expect((await server.http('POST', '/api/signals/webhooks', { token: read, body: { name: 'k', asset_class: 'crypto' } })).status).toBe(403);
    expect((await server.http('POST', '/api/signals/webhooks', { token: trade, body: { name: 'k', asset_class: 'crypto' } })).status).toBe(201);
    const liveRefused = await server.http('POST', '/api/signals/webhooks', { token: trade, body: { name: 'k', asset_class: 'crypto', mode: 'live' } });
    expect(liveRefused.status).toBe(403);
    expect(liveRefused.body.message).toMatch(/live scope/);
    const liveHook = await server.http('POST', '/api/signals/webhooks', { token: live, body: { name: 'k', asset_class: 'crypto', mode: 'live' } });
    expect(liveHook.status).toBe(201);
    expect((await server.http('POST', `/api/signals/webhooks/${liveHook.body.id}/rotate`, { token: trade, body: {} })).status).toBe(403);
    expect((await server.http('POST', `/api/signals/webhooks/${liveHook.body.id}/rotate`, { token: live, body: {} })).status).toBe(200);
  });

  it('counts a user’s hook calls against SIGNAL_WEBHOOK_CALLS_PER_MIN, all hooks together', async () => {
    const user = await trader('wh_rate');
    const first = await makeHook(user);
    const second = await makeHook(user);
    const limit = server.config.SIGNAL_WEBHOOK_CALLS_PER_MIN;
    for (let i = 0; i < limit; i++) expect((await call(i % 2 ? first.url : second.url, 'not json', 'text/plain')).status).toBe(422);
    const over = await call(first.url, buy);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await signalsOf(user)).total).toBe(limit);
  });

  it('the sweep settles what a crash left pending: placed while still fresh, refused once older than max_lag_sec', async () => {
    const user = await trader('wh_sweep');
    const hook = await makeHook(user);
    const write = (id: string, receivedAt: Date) =>
      insertSignal(server.services.db, {
        id,
        userId: user.user.id,
        webhookId: hook.id,
        assetClass: 'crypto',
        mode: 'paper',
        receivedAt,
        status: 'pending',
        symbol: 'BTC/USDT',
        side: 'buy',
        orderType: 'market',
        qty: '0.01',
        payload: { symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market' },
        clientOrderId: webhookClientOrderId(hook.id, { signalId: id }),
      });
    const freshId = '00000000-0000-4000-8000-000000000001';
    const lateId = '00000000-0000-4000-8000-000000000002';
    await write(freshId, new Date(clock.now().getTime() - 90_000));
    await write(lateId, new Date(clock.now().getTime() - 200_000));
    expect(await server.services.signals.sweep()).toEqual({ placed: 1, late: 1 });
    const { items } = await signalsOf(user);
    expect(items.find((item) => item.id === freshId)).toMatchObject({ outcome: 'accepted', order_id: webhookClientOrderId(hook.id, { signalId: freshId }) });
    expect(items.find((item) => item.id === lateId)).toMatchObject({ outcome: 'refused', error_code: 'SERVICE_UNAVAILABLE' });
    // Again: nothing left to do.
    expect(await server.services.signals.sweep()).toEqual({ placed: 0, late: 0 });
    expect(await ordersOf(user.user.id)).toHaveLength(1);
  });
});
