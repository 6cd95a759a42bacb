// The lock, the close and the replace over HTTP (DESIGN §6 "Rules a real broker enforces", "Kill
// switch"): a lock refuses buys and never an exit; DELETE /api/equity/positions/{symbol} runs its
// gates, then cancels the symbol's working sells (bracket children included), then sells the whole
// position; PATCH /api/equity/orders/{id} is judged as the order it would become, by every gate.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { setLock } from '../../server/controls/queries.ts';
import { auditEvents } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Tuesday 2026-03-10, 10:00 in Seoul: KRX open (crypto trades around the clock).
const clock = manualClock('2026-03-10T01:00:00Z');
const RATE = 6;
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', RATE_LIMIT_ORDERS_PER_MIN: String(RATE) }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'exit_admin' });
  for (const [assetClass, symbol, price] of [
    ['crypto', 'BTC/USDT', 50000],
    ['kr_equity', '005930', 60000],
  ] as const) {
    const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: assetClass, symbol, price } });
    expect(res.status, res.text).toBe(200);
  }
  // The KRX band's base: yesterday's close of 60,000 puts the day's limits at 42,000 and 78,000.
  const bars = await server.http('POST', '/api/admin/market-data/ohlcv', {
    token: admin.tokens.access_token,
    body: { asset_class: 'kr_equity', symbol: '005930', bars: [{ date: '2026-03-09', open: 60000, high: 60000, low: 60000, close: 60000, volume: 1 }] },
  });
  expect(bars.status, bars.text).toBe(200);
});
afterAll(() => server.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  for (const body of [{ exchange: 'crypto_exchange' }, { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01' }]) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { ...body, api_key: `exits-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  return user;
};
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};
const place = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', ...body } });
  await settle();
  return res;
};
const replace = async (user: FactoryUser, brokerOrderId: string, body: Record<string, unknown>) => {
  const res = await server.http('PATCH', `/api/equity/orders/${brokerOrderId}`, { token: user.tokens.access_token, body: { asset_class: 'crypto', ...body } });
  await settle();
  return res;
};
const close = async (user: FactoryUser, path = 'BTC-USDT?asset_class=crypto') => {
  const res = await server.http('DELETE', `/api/equity/positions/${path}`, { token: user.tokens.access_token });
  await settle();
  return res;
};
const orderOf = async (user: FactoryUser, brokerOrderId: string, assetClass = 'crypto') =>
  (await server.http('GET', `/api/equity/orders/${brokerOrderId}?asset_class=${assetClass}`, { token: user.tokens.access_token })).body as Record<string, unknown>;
const openOrders = async (user: FactoryUser, assetClass = 'crypto') =>
  (await server.http('GET', `/api/equity/orders?asset_class=${assetClass}&status=open&size=100`, { token: user.tokens.access_token })).body.items as {
    broker_order_id: string;
    side: string;
    metadata: Record<string, unknown>;
  }[];
const positions = async (user: FactoryUser, assetClass = 'crypto') =>
  (await server.http('GET', `/api/equity/positions?asset_class=${assetClass}`, { token: user.tokens.access_token })).body.items as { symbol: string; qty: number }[];
/** The user's records of an action, in the order they were written (Postgres returns rows in no set order). */
const audited = (user: FactoryUser, action: string) =>
  server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, action))).orderBy(auditEvents.id);
/** A new minute window: each test starts with the whole per-minute allowance. */
const nextMinute = () => clock.advance(61_000);

describe('a lock refuses what adds risk, never an exit', () => {
  it('refuses buys (placed or replaced) with its end; accepts sells of what is held, their replaces and a close; a sell beyond it meets the funds rule', async () => {
    nextMinute();
    const user = await trader('exit_lock');
    expect((await place(user, { side: 'buy', qty: 0.02, order_type: 'market' })).status).toBe(201);
    const restingSell = await place(user, { side: 'sell', qty: 0.005, order_type: 'limit', limit_price: 90000, time_in_force: 'gtc' });
    const restingBuy = await place(user, { side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 30000, time_in_force: 'gtc' });
    expect([restingSell.status, restingBuy.status]).toEqual([201, 201]);
    const lockedUntil = new Date(clock.now().getTime() + 3_600_000);
    await setLock(server.services.db, { userId: user.user.id, assetClass: 'crypto', lockedUntil, reason: 'test', at: clock.now() });

    const buy = await place(user, { side: 'buy', qty: 0.001, order_type: 'market' });
    expect([buy.status, buy.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(buy.body.message).toContain(lockedUntil.toISOString());
    const grown = await replace(user, restingBuy.body.broker_order_id, { qty: 0.002 });
    expect([grown.status, grown.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(grown.body.message).toContain(lockedUntil.toISOString());
    expect(await orderOf(user, restingBuy.body.broker_order_id)).toMatchObject({ qty: 0.001, status: 'open' });

    // 0.02 held, 0.005 of it in a working sell: 0.015 is what a sell may use.
    nextMinute();
    const beyond = await place(user, { side: 'sell', qty: 0.02, order_type: 'market' });
    expect([beyond.status, beyond.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    const sell = await place(user, { side: 'sell', qty: 0.01, order_type: 'market' });
    expect(sell.status, sell.text).toBe(201);
    const repriced = await replace(user, restingSell.body.broker_order_id, { limit_price: 95000 });
    expect(repriced.status, repriced.text).toBe(200);

    nextMinute();
    const closed = await close(user);
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toMatchObject({ side: 'sell', qty: 0.01, order_type: 'market' });
    expect(await positions(user)).toEqual([]);
    // The working buy stays (the kill switch's cancels are its own); the sell went with the close.
    expect((await openOrders(user)).map((order) => order.broker_order_id)).toEqual([restingBuy.body.broker_order_id]);
  });
});

describe('PATCH /api/equity/orders/{broker_order_id}: judged as the order it would become', () => {
  const restingBuy = (user: FactoryUser) => place(user, { side: 'buy', qty: 0.01, order_type: 'limit', limit_price: 45000, time_in_force: 'gtc' });

  it('refuses a replace the funds or the sizing would refuse as a placement, and leaves the order as it was', async () => {
    nextMinute();
    const user = await trader('exit_replace_risk');
    const resting = await restingBuy(user);
    expect(resting.status, resting.text).toBe(201);
    // 3 × 45,000 is more than the 100,000 of cash: the gate answers, not the broker.
    const costly = await replace(user, resting.body.broker_order_id, { qty: 3 });
    expect([costly.status, costly.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    // 1 × 45,000 × the default stop of 5 % risks 2,250, more than 2 % of the equity.
    const risky = await replace(user, resting.body.broker_order_id, { qty: 1 });
    expect([risky.status, risky.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(await orderOf(user, resting.body.broker_order_id)).toMatchObject({ qty: 0.01, limit_price: 45000, status: 'open' });
    const refusals = await audited(user, 'order.replace_refused');
    expect(refusals.map((row) => [row.data.gate, row.data.code])).toEqual([
      ['risk', 'INSUFFICIENT_FUNDS'],
      ['risk', 'RISK_RULE_VIOLATION'],
    ]);
    expect((await replace(user, resting.body.broker_order_id, { qty: 0.02 })).status).toBe(200);
  });

  it('refuses a KRX price off the tick grid or outside the day’s band', async () => {
    nextMinute();
    const user = await trader('exit_replace_krx');
    const resting = await place(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 1, order_type: 'limit', limit_price: 59000, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    const krx = (body: Record<string, unknown>) => replace(user, resting.body.broker_order_id, { asset_class: 'kr_equity', ...body });
    const offGrid = await krx({ limit_price: 58950 });
    expect([offGrid.status, offGrid.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(offGrid.body.message).toContain('tick grid');
    const belowBand = await krx({ limit_price: 41000 });
    expect([belowBand.status, belowBand.body.code]).toEqual([422, 'RISK_RULE_VIOLATION']);
    expect(belowBand.body.message).toContain('lower price limit 42000');
    expect(await orderOf(user, resting.body.broker_order_id, 'kr_equity')).toMatchObject({ limit_price: 59000, status: 'open' });
    expect((await krx({ limit_price: 58000 })).status).toBe(200);
  });

  it('counts toward the per-minute limit, refused ones too; cancels do not', async () => {
    nextMinute();
    const user = await trader('exit_replace_rate');
    const [kept, dropped] = [await restingBuy(user), await restingBuy(user)];
    const cancel = await server.http('DELETE', `/api/equity/orders/${dropped.body.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(cancel.status, cancel.text).toBe(204);
    // Two placements, then four replaces (one refused): the window of six is full.
    for (const limit of [44000, 43000, 42000]) expect((await replace(user, kept.body.broker_order_id, { limit_price: limit })).status).toBe(200);
    expect((await replace(user, kept.body.broker_order_id, { qty: 3 })).body.code).toBe('INSUFFICIENT_FUNDS');
    const over = await replace(user, kept.body.broker_order_id, { limit_price: 41000 });
    expect([over.status, over.body.code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    expect(await orderOf(user, kept.body.broker_order_id)).toMatchObject({ limit_price: 42000 });
    expect((await place(user, { side: 'buy', qty: 0.001, order_type: 'market' })).status).toBe(429);
  });
});

describe('DELETE /api/equity/positions/{symbol}', () => {
  it("cancels the symbol's working sells (a bracket's children included), then sells the whole position at market (200, the sell)", async () => {
    nextMinute();
    const user = await trader('exit_close');
    expect((await place(user, { side: 'buy', qty: 0.01, order_type: 'market' })).status).toBe(201);
    expect((await place(user, { side: 'sell', qty: 0.005, order_type: 'limit', limit_price: 90000, time_in_force: 'gtc' })).status).toBe(201);
    expect((await place(user, { side: 'buy', qty: 0.01, order_type: 'market', bracket: { take_profit: 60000, stop_loss: 40000 } })).status).toBe(201);
    const working = await openOrders(user);
    expect(working.filter((order) => order.side === 'sell')).toHaveLength(3);

    const closed = await close(user);
    expect(closed.status, closed.text).toBe(200);
    expect(closed.body).toMatchObject({ side: 'sell', qty: 0.02, order_type: 'market', status: 'accepted' });
    expect(await positions(user)).toEqual([]);
    expect(await openOrders(user)).toEqual([]);
    // Canceling one leg of the OCO pair ends the other: two or three cancels, each by the close.
    const cancels = await audited(user, 'order.cancel_requested');
    expect(cancels.length).toBeGreaterThanOrEqual(2);
    expect(new Set(cancels.map((row) => row.data.by))).toEqual(new Set(['close']));
  });

  it('runs its gates first: a close refused for a broker outage, a full minute window or a closed market leaves the protective orders in place', async () => {
    nextMinute();
    const user = await trader('exit_refused');
    const entry = await place(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 2, order_type: 'market', bracket: { take_profit: 70000, stop_loss: 55000 } });
    expect(entry.status, entry.text).toBe(201);
    const children = () => openOrders(user, 'kr_equity').then((orders) => orders.filter((order) => order.metadata.parent_client_order_id !== undefined).length);
    expect(await children()).toBe(2);
    const closeKrx = () => close(user, '005930?asset_class=kr_equity');

    const outage = (down: boolean) => server.http('POST', '/api/admin/sim/outage', { token: admin.tokens.access_token, body: { asset_class: 'kr_equity', down } });
    expect((await outage(true)).status).toBe(200);
    try {
      const down = await closeKrx();
      expect([down.status, down.body.code]).toEqual([502, 'BROKER_UNAVAILABLE']);
    } finally {
      expect((await outage(false)).status).toBe(200);
    }
    expect(await children()).toBe(2);

    // The entry took one unit (the close above failed reading the position); refused orders fill the rest.
    for (let i = 1; i < RATE; i++) expect((await place(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 100_000, order_type: 'market' })).body.code).toBe('INSUFFICIENT_FUNDS');
    const limited = await closeKrx();
    expect([limited.status, limited.body.code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    expect(await children()).toBe(2);

    // 16:00 in Seoul: KRX has closed (and the tokens of the morning have run out: log in again).
    clock.set('2026-03-10T07:00:00Z');
    const login = await server.http('POST', '/api/auth/login', { body: { username: user.username, password: user.password } });
    expect(login.status, login.text).toBe(200);
    user.tokens = login.body;
    const closedMarket = await closeKrx();
    expect([closedMarket.status, closedMarket.body.code]).toEqual([422, 'MARKET_CLOSED']);
    expect(await children()).toBe(2);
    expect(await positions(user, 'kr_equity')).toMatchObject([{ symbol: '005930', qty: 2 }]);
    // A replace is judged by the calendar too.
    const [child] = await openOrders(user, 'kr_equity');
    const late = await replace(user, child!.broker_order_id, { asset_class: 'kr_equity', limit_price: 71000 });
    expect([late.status, late.body.code]).toEqual([422, 'MARKET_CLOSED']);
    clock.set('2026-03-11T01:00:00Z');
  });
});

describe('a stop_limit keeps its limit (DESIGN §6 "Advanced orders")', () => {
  const setEth = async (price: number) => {
    const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'ETH/USDT', price } });
    expect(res.status, res.text).toBe(200);
    await settle();
  };
  const orderOf = async (user: FactoryUser, brokerOrderId: string) =>
    (await server.http('GET', `/api/equity/orders/${brokerOrderId}?asset_class=crypto`, { token: user.tokens.access_token })).body as Record<string, unknown>;

  it('past a gap through its limit it does not fill and rests open; it fills at its limit or better when the price comes back', async () => {
    // The test before moved the clock a day on: the operator's session is issued again.
    admin.tokens = await server.services.auth.issueSession({ user: admin.auth });
    await setEth(3100);
    const user = await trader('exit_stop_limit');
    expect((await place(user, { symbol: 'ETH/USDT', side: 'buy', qty: 1, order_type: 'market' })).status).toBe(201);
    const placed = await place(user, { symbol: 'ETH/USDT', side: 'sell', qty: 1, order_type: 'stop_limit', stop_price: 3000, limit_price: 2990, time_in_force: 'gtc' });
    expect(placed.status, placed.text).toBe(201);
    const id = placed.body.broker_order_id as string;
    expect(placed.body).toMatchObject({ order_type: 'stop_limit', stop_price: 3000, metadata: { stop_limit_price: 2990 } });

    // The gap the issue names: a stop 3,000 limit 2,990 once filled at 2,498.75.
    await setEth(2498.75);
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', filled_qty: 0 });
    // Still beyond the limit: nothing.
    await setEth(2989.99);
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', filled_qty: 0 });
    await setEth(2995);
    const filled = await orderOf(user, id);
    expect(filled).toMatchObject({ status: 'filled', filled_qty: 1 });
    expect(filled.avg_fill_price as number).toBeGreaterThanOrEqual(2990);
    expect(filled.avg_fill_price as number).toBeLessThanOrEqual(2995);
  });
});
