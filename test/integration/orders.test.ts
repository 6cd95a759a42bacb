// /api/equity/orders, positions and account over HTTP: the five gates in order, idempotent
// client order ids, fills arriving as broker events, cancel, reads, and the audit trail.
import diagnosticsChannel from 'node:diagnostics_channel';
import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, orderFills, orders, outboxEvents, simOrders } from '../../server/db/schema/index.ts';
import { setLock } from '../../server/controls/queries.ts';
import { PLACEMENT_STEPS_CHANNEL, type PlacementStep } from '../../server/observability/placement-steps.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Tuesday 2026-03-10, 11:00 in New York and 00:00 in Seoul (the next day): NYSE open, KRX closed.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', RATE_LIMIT_ORDERS_PER_MIN: '8' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'ord_admin' });
  for (const [assetClass, symbol, price] of [
    ['crypto', 'BTC/USDT', 50000],
    ['us_equity', 'AAPL', 200],
    ['kr_equity', '005930', 60000],
  ] as const) {
    const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: assetClass, symbol, price } });
    expect(res.status, res.text).toBe(200);
  }
});
afterAll(() => server.stop());

/** A user with a key for each asset class. */
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  for (const body of [
    { exchange: 'crypto_exchange' },
    { asset_class: 'us_equity', exchange: 'us_broker' },
    { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01' },
  ]) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { ...body, api_key: `orders-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  return user;
};
const place = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};
const buyBtc = { asset_class: 'crypto', symbol: 'BTC-USDT', side: 'buy', qty: 0.01, order_type: 'market' };

describe('POST /api/equity/orders', () => {
  it('answers 201 with the order as accepted; the fill arrives as a broker event and shows in GET, positions and account', async () => {
    const user = await trader('ord_basic');
    const res = await place(user, { ...buyBtc, client_order_id: 'basic-1' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ order_id: 'basic-1', client_order_id: 'basic-1', asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, filled_qty: 0, status: 'accepted', exchange: 'simulator', currency: 'USDT', order_type: 'market', bracket: null, metadata: { live: false } });
    expect(res.body.broker_order_id).toEqual(expect.any(String));
    await settle();
    const got = await server.http('GET', `/api/equity/orders/${res.body.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: 'filled', filled_qty: 0.01, avg_fill_price: expect.any(Number) });
    const positions = await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token });
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', qty: 0.01, side: 'LONG', exchange: 'simulator', currency: 'USDT', unrealized_pnl_pct: expect.any(Number) })]);
    const account = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: user.tokens.access_token });
    expect(account.body).toMatchObject({ asset_class: 'crypto', paper: true, currency: 'USDT', broker: 'simulator' });
    expect(account.body.cash).toBeLessThan(100000 - 500);
    // The order service's fills equal the broker's position, and every step is audited.
    const fills = await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, 'basic-1')));
    expect(fills.map((fill) => fill.qty)).toEqual(['0.01']);
    const actions = (await server.services.db.select().from(auditEvents).where(eq(auditEvents.subjectUserId, user.user.id))).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(['order.placed', 'order.accepted', 'order.fill']));
  });

  it('records each step once: one placed, one accepted, one fill in the audit log; a late event takes back nothing', async () => {
    const user = await trader('ord_once');
    const res = await place(user, { ...buyBtc, client_order_id: 'once-1' });
    expect(res.status, res.text).toBe(201);
    await settle();
    const { db } = server.services;
    const actions = (await db.select().from(auditEvents).where(eq(auditEvents.subjectUserId, user.user.id)))
      .filter((row) => row.data.client_order_id === 'once-1')
      .map((row) => row.action)
      .sort();
    // The broker's `accepted` comes while the placement records the same answer: it adds nothing.
    expect(actions).toEqual(['order.accepted', 'order.fill', 'order.placed']);
    // A stale event (the order as it stood before its fill) neither reopens nor unfills it.
    const [row] = await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'once-1')));
    await server.services.orders.ingest({
      type: 'partial_fill',
      user_id: user.user.id,
      asset_class: 'crypto',
      mode: 'paper',
      broker: 'simulator',
      broker_order_id: row!.brokerOrderId!,
      client_order_id: 'once-1',
      symbol: 'BTC/USDT',
      status: 'partially_filled',
      filled_qty: '0.004',
      avg_fill_price: '1',
      fill: null,
      reason: null,
      at: clock.now().toISOString(),
    });
    const [after] = await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'once-1')));
    expect(after).toMatchObject({ status: 'filled', filledQty: '0.01', avgFillPrice: row!.avgFillPrice });
  });

  it('reads an instrument changed by the operator at once: a new lot size holds for the next order', async () => {
    const user = await trader('ord_lot');
    const body = { asset_class: 'crypto', symbol: 'LOTQ/USDT', exchange: 'BINANCE', currency: 'USDT', name: 'Lot test', reference_price: 10, tick_size: 0.01, lot_size: 0.001, fractional: true };
    expect((await server.http('POST', '/api/admin/instruments', { token: admin.tokens.access_token, body })).status).toBe(201);
    const order = { asset_class: 'crypto', symbol: 'LOTQ/USDT', side: 'buy', qty: 0.005, order_type: 'market' };
    expect((await place(user, order)).status).toBe(201);
    expect((await server.http('POST', '/api/admin/instruments', { token: admin.tokens.access_token, body: { ...body, lot_size: 0.01 } })).status).toBe(200);
    const refused = await place(user, order);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    await settle();
  });

  it('keeps report_uuid and a stop_limit price in metadata, sends the broker a stop, and echoes the bracket', async () => {
    const user = await trader('ord_meta');
    const report = '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b';
    const res = await place(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'stop_limit', stop_price: 60000, limit_price: 60100, report_uuid: report, time_in_force: 'gtc' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.metadata).toMatchObject({ report_uuid: report, stop_limit_price: 60100 });
    const [atBroker] = await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), eq(simOrders.clientOrderId, res.body.client_order_id)));
    expect(atBroker?.orderType).toBe('stop');
    const bracket = await place(user, { ...buyBtc, bracket: { take_profit: 60000, stop_loss: 45000 } });
    expect(bracket.status, bracket.text).toBe(201);
    expect(bracket.body.bracket).toEqual({ take_profit: 60000, stop_loss: 45000, stop_loss_limit: null });
  });

  it('publishes the steps of a paper placement on its diagnostics channel, in order, to whoever listens', async () => {
    const user = await trader('ord_steps');
    const heard: PlacementStep[] = [];
    const onStep = (message: unknown) => heard.push(message as PlacementStep);
    diagnosticsChannel.subscribe(PLACEMENT_STEPS_CHANNEL, onStep);
    try {
      const res = await place(user, { ...buyBtc, client_order_id: 'steps-1' });
      expect(res.status, res.text).toBe(201);
    } finally {
      diagnosticsChannel.unsubscribe(PLACEMENT_STEPS_CHANNEL, onStep);
    }
    const own = heard.filter((step) => step.userId === user.user.id && step.clientOrderId === 'steps-1');
    expect(own.map((step) => step.step)).toEqual(['received', 'gated', 'queued', 'began', 'committed', 'answered']);
    const times = own.map((step) => step.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    await settle();
  });

  it('generates a 32-hex client_order_id when none is given', async () => {
    const user = await trader('ord_autoid');
    const res = await place(user, buyBtc);
    expect(res.body.client_order_id).toMatch(/^[0-9a-f]{32}$/);
    expect(res.body.order_id).toBe(res.body.client_order_id);
  });
});

describe('idempotency', () => {
  it('the same request again answers the same order with no second broker order; a different one is 409', async () => {
    const user = await trader('ord_idem');
    const first = await place(user, { ...buyBtc, client_order_id: 'idem-1' });
    await settle();
    const again = await place(user, { ...buyBtc, symbol: 'BTC/USDT', client_order_id: 'idem-1' });
    expect(again.status).toBe(201);
    expect(again.body.broker_order_id).toBe(first.body.broker_order_id);
    expect(again.body.status).toBe('filled');
    const conflict = await place(user, { ...buyBtc, qty: 0.02, client_order_id: 'idem-1' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await server.services.db.select().from(simOrders).where(eq(simOrders.userId, user.user.id))).toHaveLength(1);
  });

  it('20 concurrent copies make exactly one broker order and all answer it', async () => {
    const user = await trader('ord_race');
    const answers = await Promise.all(Array.from({ length: 20 }, () => place(user, { ...buyBtc, client_order_id: 'race-1' })));
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 20 }, () => 201));
    expect(new Set(answers.map((res) => res.body.broker_order_id)).size).toBe(1);
    await settle();
    expect(await server.services.db.select().from(simOrders).where(eq(simOrders.userId, user.user.id))).toHaveLength(1);
  });
});

describe('the gates', () => {
  it('gate 1: a live order is 503 FEATURE_DISABLED while live trading is off, and creates no order', async () => {
    const user = await trader('ord_live');
    const res = await place(user, { ...buyBtc, live_mode: true, client_order_id: 'live-1' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('FEATURE_DISABLED');
    expect(await server.services.db.select().from(orders).where(eq(orders.userId, user.user.id))).toEqual([]);
    const [refused] = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.refused')));
    expect(refused?.data).toMatchObject({ gate: 'flags', code: 'FEATURE_DISABLED', client_order_id: 'live-1', live: true });
  });

  it('gate 2: the per-minute limit answers 429 with Retry-After, and comes before the risk answer', async () => {
    const user = await trader('ord_rate');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await place(user, { ...buyBtc, qty: 0.001 })).status);
    expect(statuses).toEqual(Array.from({ length: 8 }, () => 201));
    // This one would also fail the funds check: the rate limit answers first.
    const over = await place(user, { ...buyBtc, qty: 100 });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    clock.advance(61_000);
    expect((await place(user, { ...buyBtc, qty: 0.001 })).status).toBe(201);
  });

  it('gate 2: refused attempts count, and an order that passes every other gate in a full window is 429 with nothing written', async () => {
    const user = await trader('ord_rate_full');
    for (let i = 0; i < 7; i++) expect((await place(user, { ...buyBtc, qty: 0.001 })).status).toBe(201);
    // Refused by the risk manager (funds): it still takes the window's last unit.
    expect((await place(user, { ...buyBtc, qty: 100 })).status).toBe(422);
    const over = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'rate-full-over' });
    expect(over.status, over.text).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const { db } = server.services;
    expect(await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'rate-full-over')))).toEqual([]);
    // The intent withdrew its placement in the broker's transaction: the broker took nothing either.
    expect(await db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), eq(simOrders.clientOrderId, 'rate-full-over')))).toEqual([]);
    const refusals = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.refused')))
      .orderBy(asc(auditEvents.id));
    expect(refusals.map((row) => row.data.gate)).toEqual(['risk', 'rate_limit']);
    expect(refusals[1]!.data.client_order_id).toBe('rate-full-over');
    // The id stayed unused: once the window has passed, the same request is a new order.
    clock.advance(61_000);
    expect((await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'rate-full-over' })).status).toBe(201);
  });

  it('gate 3: without a key for the asset class, 403 BROKER_NOT_CONFIGURED', async () => {
    const user = await newUser(server, { prefix: 'ord_nokey' });
    const res = await place(user, buyBtc);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('BROKER_NOT_CONFIGURED');
  });

  it('gate 4: funds, no shorting, market hours and KRX ticks answer their codes', async () => {
    const user = await trader('ord_risk');
    expect((await place(user, { ...buyBtc, qty: 10 })).body.code).toBe('INSUFFICIENT_FUNDS');
    expect((await place(user, { ...buyBtc, side: 'sell' })).body.code).toBe('INSUFFICIENT_FUNDS');
    // KRX is closed at midnight in Seoul.
    const krx = await place(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 1, order_type: 'market' });
    expect(krx.status).toBe(422);
    expect(krx.body.code).toBe('MARKET_CLOSED');
    // Position sizing: a buy risking more than 2 % of equity with a tight stop missing.
    const sizing = await place(user, { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 300, order_type: 'market' });
    expect(sizing.body.code).toBe('RISK_RULE_VIOLATION');
  });

  it('gate 4: a running emergency lock answers first, found with the intent or behind another rule; a copy of an earlier order still answers as its replay', async () => {
    const user = await trader('ord_lock');
    const { db } = server.services;
    const before = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'lock-before' });
    expect(before.status, before.text).toBe(201);
    const lockedUntil = new Date(clock.now().getTime() + 30_000);
    await setLock(db, { userId: user.user.id, assetClass: 'crypto', lockedUntil, reason: 'test', at: clock.now() });
    // Every other rule passes: the statement that would write the intent finds the lock.
    const locked = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'lock-small' });
    expect(locked.status, locked.text).toBe(422);
    expect(locked.body).toMatchObject({ code: 'RISK_RULE_VIOLATION' });
    expect(locked.body.message).toContain(`emergency lock until ${lockedUntil.toISOString()}`);
    // Funds would refuse this one too: the lock, the first rule, is the answer.
    const both = await place(user, { ...buyBtc, qty: 100, client_order_id: 'lock-big' });
    expect(both.body.code).toBe('RISK_RULE_VIOLATION');
    expect(both.body.message).toContain('emergency lock');
    for (const id of ['lock-small', 'lock-big']) {
      expect(await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, id)))).toEqual([]);
      expect(await db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), eq(simOrders.clientOrderId, id)))).toEqual([]);
    }
    const refusals = await db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.refused'))).orderBy(asc(auditEvents.id));
    expect(refusals.map((row) => [row.data.client_order_id, row.data.gate])).toEqual([
      ['lock-small', 'risk'],
      ['lock-big', 'risk'],
    ]);
    // The order made before the lock is still its own replay.
    const replay = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'lock-before' });
    expect(replay.status).toBe(201);
    expect(replay.body.broker_order_id).toBe(before.body.broker_order_id);
    // Once the lock has run out, the same request is a new order.
    clock.advance(31_000);
    expect((await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'lock-small' })).status).toBe(201);
  });

  it('gate 2 before gate 4: with the window full, a running lock found with the intent still answers 429', async () => {
    const user = await trader('ord_lock_rate');
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil: new Date(clock.now().getTime() + 30_000), reason: 'test', at: clock.now() });
    // Each refusal by the lock takes a unit of the window (RATE_LIMIT_ORDERS_PER_MIN=8).
    for (let i = 0; i < 8; i++) expect((await place(user, { ...buyBtc, qty: 0.001 })).body.code).toBe('RISK_RULE_VIOLATION');
    const over = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'lock-rate-over' });
    expect(over.status, over.text).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_EXCEEDED');
    const [refusal] = await server.services.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), sql`${auditEvents.data}->>'client_order_id' = 'lock-rate-over'`));
    expect(refusal?.data).toMatchObject({ gate: 'rate_limit', code: 'RATE_LIMIT_EXCEEDED' });
  });

  it('gate 2: in a full window, a copy of an order already made answers as its replay, not 429', async () => {
    clock.advance(61_000);
    const user = await trader('ord_rate_replay');
    const first = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'full-replay' });
    expect(first.status, first.text).toBe(201);
    for (let i = 0; i < 7; i++) expect((await place(user, { ...buyBtc, qty: 0.001 })).status).toBe(201);
    expect((await place(user, { ...buyBtc, qty: 0.001 })).status).toBe(429);
    const again = await place(user, { ...buyBtc, qty: 0.001, client_order_id: 'full-replay' });
    expect(again.status, again.text).toBe(201);
    expect(again.body.broker_order_id).toBe(first.body.broker_order_id);
  });

  it('gate 5: an unknown symbol is 422 BROKER_REJECTED, kept as a rejected order that a replay answers the same', async () => {
    const user = await trader('ord_unknown');
    const res = await place(user, { ...buyBtc, symbol: 'NOPE/USDT', client_order_id: 'unknown-1' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('BROKER_REJECTED');
    const replay = await place(user, { ...buyBtc, symbol: 'NOPE/USDT', client_order_id: 'unknown-1' });
    expect(replay.status).toBe(422);
    expect(replay.body.code).toBe('BROKER_REJECTED');
    const list = await server.http('GET', '/api/equity/orders?asset_class=crypto&status=rejected', { token: user.tokens.access_token });
    expect(list.body.items.map((order: { client_order_id: string }) => order.client_order_id)).toEqual(['unknown-1']);
  });

  it('gate 5: a broker transaction that fails is 502 BROKER_UNAVAILABLE; the intent is kept as a rejected order with its audit trail', async () => {
    const user = await trader('ord_sim_fail');
    const { db } = server.services;
    // The simulator's write of this one order fails (a trigger of the test's own), which fails the
    // transaction that holds the intent too: the intent is then written on its own, and marked.
    await db.execute(sql`create or replace function test_fail_sim_order() returns trigger language plpgsql as $$
      begin if new.client_order_id = 'sim-fail-1' then raise exception 'test: the simulator cannot write this order'; end if; return new; end $$`);
    await db.execute(sql`create trigger test_fail_sim_order before insert on sim_orders for each row execute function test_fail_sim_order()`);
    try {
      const res = await place(user, { ...buyBtc, client_order_id: 'sim-fail-1' });
      expect(res.status, res.text).toBe(502);
      expect(res.body.code).toBe('BROKER_UNAVAILABLE');
    } finally {
      await db.execute(sql`drop trigger test_fail_sim_order on sim_orders`);
    }
    const [row] = await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'sim-fail-1')));
    expect(row).toMatchObject({ status: 'rejected', reason: 'broker_unavailable' });
    expect(await db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), eq(simOrders.clientOrderId, 'sim-fail-1')))).toEqual([]);
    const trail = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), sql`${auditEvents.data}->>'client_order_id' = 'sim-fail-1'`))
      .orderBy(asc(auditEvents.id));
    expect(trail.map((event) => event.action)).toEqual(['order.placed', 'order.rejected']);
    // The id is used: a replay answers the same failure, and nothing reaches the broker.
    expect((await place(user, { ...buyBtc, client_order_id: 'sim-fail-1' })).body.code).toBe('BROKER_UNAVAILABLE');
    expect(await db.select().from(simOrders).where(eq(simOrders.userId, user.user.id))).toEqual([]);
  });

  it('gate 5: a broker outage is 502 BROKER_UNAVAILABLE, and the order is marked so and audited', async () => {
    const user = await trader('ord_outage');
    await server.services.simulator.setOutage({ assetClass: 'us_equity', down: true });
    try {
      const res = await place(user, { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'market', client_order_id: 'outage-1' });
      // The risk gate reads the account through the broker too: the outage answers there or at the call.
      expect(res.status).toBe(502);
      expect(res.body.code).toBe('BROKER_UNAVAILABLE');
    } finally {
      await server.services.simulator.setOutage({ assetClass: 'us_equity', down: false });
    }
  });

  it('a quantity that breaks the lot size is 422 VALIDATION_ERROR', async () => {
    const user = await trader('ord_lot');
    const res = await place(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 0.5, order_type: 'market' });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ path: 'qty', message: expect.any(String) }]);
  });

  it('counts each gate outcome in orders_gate_outcomes_total', async () => {
    const metrics = await server.http('GET', '/metrics');
    expect(metrics.text).toMatch(/orders_gate_outcomes_total\{asset_class="crypto",gate="broker_configured",outcome="refused"\} \d+/);
    expect(metrics.text).toMatch(/orders_gate_outcomes_total\{asset_class="crypto",gate="broker",outcome="passed"\} \d+/);
  });
});

describe('cancel and reads', () => {
  it('cancels a resting order (204); a finished one is 422 ORDER_NOT_CANCELABLE; another user’s is 404 ORDER_NOT_FOUND', async () => {
    const user = await trader('ord_cancel');
    const other = await trader('ord_cancel_other');
    const resting = await place(user, { ...buyBtc, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    await settle();
    const path = `/api/equity/orders/${resting.body.broker_order_id}?asset_class=crypto`;
    expect((await server.http('DELETE', path, { token: other.tokens.access_token })).body.code).toBe('ORDER_NOT_FOUND');
    expect((await server.http('GET', path, { token: other.tokens.access_token })).status).toBe(404);
    const canceled = await server.http('DELETE', path, { token: user.tokens.access_token });
    expect(canceled.status, canceled.text).toBe(204);
    await settle();
    expect((await server.http('GET', path, { token: user.tokens.access_token })).body.status).toBe('canceled');
    const again = await server.http('DELETE', path, { token: user.tokens.access_token });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('ORDER_NOT_CANCELABLE');
    expect((await server.http('GET', `/api/equity/orders/nope?asset_class=crypto`, { token: user.tokens.access_token })).body.code).toBe('ORDER_NOT_FOUND');
  });

  it('lists newest first with the status filter mapped (open = accepted, open, partially filled)', async () => {
    const user = await trader('ord_list');
    await place(user, { ...buyBtc, client_order_id: 'list-filled' });
    clock.advance(1000);
    await place(user, { ...buyBtc, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc', client_order_id: 'list-open' });
    await settle();
    const all = await server.http('GET', '/api/equity/orders?asset_class=crypto', { token: user.tokens.access_token });
    expect(all.body).toMatchObject({ total: 2, page: 1, size: 20 });
    expect(all.body.items.map((order: { client_order_id: string }) => order.client_order_id)).toEqual(['list-open', 'list-filled']);
    const open = await server.http('GET', '/api/equity/orders?asset_class=crypto&status=open', { token: user.tokens.access_token });
    expect(open.body.items.map((order: { client_order_id: string }) => order.client_order_id)).toEqual(['list-open']);
    const filled = await server.http('GET', '/api/equity/orders?asset_class=crypto&status=filled&size=1', { token: user.tokens.access_token });
    expect(filled.body.items.map((order: { client_order_id: string }) => order.client_order_id)).toEqual(['list-filled']);
    expect((await server.http('GET', '/api/equity/orders?asset_class=crypto&status=done', { token: user.tokens.access_token })).status).toBe(422);
    expect((await server.http('GET', '/api/equity/orders', { token: user.tokens.access_token })).status).toBe(422);
  });
});

describe('beyond the interface', () => {
  it('DELETE /api/equity/orders?asset_class cancels every open order of that asset class, and nothing else', async () => {
    const user = await trader('ord_cancel_all');
    for (const price of [40000, 41000]) await place(user, { ...buyBtc, order_type: 'limit', limit_price: price, time_in_force: 'gtc' });
    const aapl = await place(user, { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'limit', limit_price: 100, time_in_force: 'gtc' });
    expect(aapl.status, aapl.text).toBe(201);
    await settle();
    const res = await server.http('DELETE', '/api/equity/orders?asset_class=crypto', { token: user.tokens.access_token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.canceled).toHaveLength(2);
    expect(res.body.failed).toEqual([]);
    await settle();
    expect((await server.http('GET', '/api/equity/orders?asset_class=crypto&status=open', { token: user.tokens.access_token })).body.total).toBe(0);
    expect((await server.http('GET', '/api/equity/orders?asset_class=us_equity&status=open', { token: user.tokens.access_token })).body.total).toBe(1);
  });

  it('DELETE /api/equity/positions/{symbol} closes the position at market through the gates; no position is 404', async () => {
    const user = await trader('ord_close');
    await place(user, { ...buyBtc, qty: 0.003 });
    await settle();
    const closed = await server.http('DELETE', '/api/equity/positions/BTC-USDT?asset_class=crypto', { token: user.tokens.access_token });
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toMatchObject({ side: 'sell', qty: 0.003, order_type: 'market', status: 'accepted' });
    await settle();
    expect((await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token })).body.items).toEqual([]);
    const none = await server.http('DELETE', '/api/equity/positions/BTC-USDT?asset_class=crypto', { token: user.tokens.access_token });
    expect(none.status).toBe(404);
  });
});

describe('the reconciler', () => {
  const intent = (userId: number, clientOrderId: string) => ({
    userId,
    clientOrderId,
    brokerOrderId: null,
    assetClass: 'crypto' as const,
    live: false,
    broker: 'simulator',
    symbol: 'BTC/USDT',
    side: 'buy' as const,
    orderType: 'market' as const,
    timeInForce: 'gtc' as const,
    qty: '0.002',
    status: 'pending' as const,
    requestHash: 'x',
    submittedAt: clock.now(),
    updatedAt: clock.now(),
  });

  it('links an intent the broker took (with its fill), and settles one it never got only once it is old enough', async () => {
    const user = await trader('ord_reconcile');
    const { db, orders: service } = server.services;
    // A crash after the broker call: the broker has the order, our row is still the intent.
    await db.insert(orders).values(intent(user.user.id, 'crashed-after'));
    const delivered: TBrokerEvent[] = [];
    const stopListening = server.services.simulator.onEvent((event) => {
      if (event.client_order_id === 'crashed-after') delivered.push(event);
    });
    const broker = await server.services.brokers.forUser({ userId: user.user.id, assetClass: 'crypto', mode: 'paper' });
    await broker.placeOrder({ clientOrderId: 'crashed-after', symbol: 'BTC/USDT', side: 'buy', qty: '0.002', orderType: 'market', timeInForce: 'gtc' });
    await server.services.simulator.idle();
    await service.idle();
    // What the crash lost: the broker's answer and its events never reached our records.
    await db.update(orders).set({ status: 'pending', filledQty: '0', avgFillPrice: null, brokerOrderId: null }).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'crashed-after')));
    await db.delete(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, 'crashed-after')));
    // A crash before the broker call: the broker never heard of it.
    await db.insert(orders).values(intent(user.user.id, 'crashed-before'));

    const first = await service.reconcile();
    expect(first).toMatchObject({ linked: 1, settled: 0 });
    const rowOf = async (id: string) => (await db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, id))))[0]!;
    expect(await rowOf('crashed-after')).toMatchObject({ status: 'filled', filledQty: '0.002' });
    expect((await rowOf('crashed-after')).brokerOrderId).toEqual(expect.any(String));
    const fillsOf = async () => (await db.select().from(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, 'crashed-after')))).map((fill) => fill.qty);
    expect(await fillsOf()).toEqual(['0.002']);
    // The broker's own fill event arriving after the reconciler recorded it adds nothing.
    stopListening();
    const fill = delivered.find((event) => event.type === 'fill');
    expect(fill).toBeDefined();
    await service.ingest(fill!);
    expect(await fillsOf()).toEqual(['0.002']);
    // Too young to be settled: it may still be on its way to the broker from another instance.
    expect((await rowOf('crashed-before')).status).toBe('pending');

    clock.advance(61_000);
    await service.reconcile();
    expect(await rowOf('crashed-before')).toMatchObject({ status: 'rejected', reason: 'not_at_broker' });
    const decisions = await db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.reconciled')));
    expect(decisions.map((row) => [row.data.client_order_id, row.data.decision]).sort()).toEqual([
      ['crashed-after', 'linked'],
      ['crashed-before', 'settled'],
    ]);
    // Each decision reached the user as its broker event would have: the order's event in the
    // outbox (the link's fill with its trade, the settled intent's rejection).
    const written = await db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.user.id)).orderBy(asc(outboxEvents.id));
    const reconciled = written.filter(({ frame }) => (frame.payload as { reconciled?: unknown } | undefined)?.reconciled === true);
    expect(reconciled.map(({ frame }) => [frame.client_order_id, frame.event_type, frame.status])).toEqual([
      ['crashed-after', 'fill', 'filled'],
      ['crashed-before', 'rejected', 'rejected'],
    ]);
    const linkId = written.indexOf(reconciled[0]!);
    expect(written[linkId + 1]).toMatchObject({ channel: 'live', frame: { type: 'trade', symbol: 'BTC/USDT', side: 'buy', amount: 0.002 } });
  });
});

describe('PATCH /api/equity/orders/{broker_order_id}', () => {
  it('replaces qty and limit of an open order (200, event replaced), fills when the new limit is marketable, and refuses a finished one', async () => {
    const user = await trader('ord_replace');
    const resting = await place(user, { ...buyBtc, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc' });
    await settle();
    const path = `/api/equity/orders/${resting.body.broker_order_id}`;
    const events: string[] = [];
    const stop = server.services.orders.onEvent((event) => {
      if (event.client_order_id === resting.body.client_order_id) events.push(event.event_type);
    });
    try {
      const replaced = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', qty: 0.02, limit_price: 41000 } });
      expect(replaced.status, replaced.text).toBe(200);
      expect(replaced.body).toMatchObject({ qty: 0.02, limit_price: 41000, status: 'open' });
      await settle();
      expect(events).toContain('replaced');
      const marketable = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', limit_price: 60000 } });
      expect(marketable.status, marketable.text).toBe(200);
      await settle();
      expect((await server.http('GET', `${path}?asset_class=crypto`, { token: user.tokens.access_token })).body).toMatchObject({ status: 'filled', filled_qty: 0.02 });
      const finished = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', qty: 0.03 } });
      expect(finished.status).toBe(422);
      expect(finished.body.code).toBe('ORDER_NOT_CANCELABLE');
      expect((await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto' } })).status).toBe(422);
    } finally {
      stop();
    }
  });
});
