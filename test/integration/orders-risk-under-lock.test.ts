// The risk gate of a paper order judged in the placement's transaction, on the account as read with
// its lock: decided atomically with the placement, never on a snapshot read before it.
// An account's first evaluation of the day is judged on a snapshot (it takes the day-start equity);
// every later one under the lock. Both answer alike, and the later sees what committed while it
// waited for the lock.
import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { rowsOf } from '../../server/db/client.ts';
import { auditEvents, orders, simAccounts } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

// Tuesday 2026-03-10, 11:00 in New York: NYSE open. AAPL at 200: no fee, no slippage (us_broker_zero).
const OPEN = '2026-03-10T15:00:00Z';
const clock = manualClock(OPEN);
let server: TestServer;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  const admin = await newUser(server, { role: 'admin', prefix: 'rul_admin' });
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'us_equity', symbol: 'AAPL', price: 200 } });
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { asset_class: 'us_equity', exchange: 'us_broker', api_key: `rul-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const place = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'us_equity', symbol: 'AAPL', ...body } });
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};
const ordersOf = (user: FactoryUser) => server.services.db.select().from(orders).where(eq(orders.userId, user.user.id));
const refusalsOf = async (user: FactoryUser) =>
  (
    await server.services.db
      .select({ data: auditEvents.data })
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.refused')))
      .orderBy(asc(auditEvents.id))
  ).map(({ data }) => ({ gate: data.gate, code: data.code, reason: data.reason }));

/** What a refused placement answers: status, code and words. */
const answerOf = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await place(user, body);
  return { status: res.status, code: (res.body as { code?: string }).code, message: (res.body as { message?: string }).message };
};

describe('a paper order judged under the account’s lock', () => {
  // Each case places the same order twice in a row on one account: the first is the account's first
  // evaluation of the day (judged on a snapshot), the second is judged under the lock. Refused, it
  // changes nothing, so both are judged on the same account. `holds`: AAPL bought the day before.
  const cases: { rule: string; body: Record<string, unknown>; code: string; holds?: number; at?: string }[] = [
    { rule: 'funds', body: { side: 'buy', qty: 1000, order_type: 'market' }, code: 'INSUFFICIENT_FUNDS' },
    { rule: 'funds, with a position held', body: { side: 'buy', qty: 1000, order_type: 'market' }, code: 'INSUFFICIENT_FUNDS', holds: 100 },
    { rule: 'no short selling', body: { side: 'sell', qty: 1, order_type: 'market' }, code: 'INSUFFICIENT_FUNDS' },
    { rule: 'no short selling, with a position held', body: { side: 'sell', qty: 101, order_type: 'market' }, code: 'INSUFFICIENT_FUNDS', holds: 100 },
    { rule: 'position sizing', body: { side: 'buy', qty: 300, order_type: 'market' }, code: 'RISK_RULE_VIOLATION' },
    { rule: 'position sizing, with a position held', body: { side: 'buy', qty: 200, order_type: 'market' }, code: 'RISK_RULE_VIOLATION', holds: 100 },
    { rule: 'tick size', body: { side: 'buy', qty: 1, order_type: 'limit', limit_price: 199.001, time_in_force: 'gtc' }, code: 'RISK_RULE_VIOLATION' },
    // Saturday 2026-03-14: NYSE closed.
    { rule: 'market hours', body: { side: 'buy', qty: 1, order_type: 'market' }, code: 'MARKET_CLOSED', at: '2026-03-14T15:00:00Z' },
  ];

  it.each(cases)('answers $rule ($code) as the gate does on a snapshot, and leaves no order', async ({ body, code, holds, at }) => {
    // Monday 2026-03-09, NYSE open: the day before's buy.
    clock.set(holds ? '2026-03-09T15:00:00Z' : (at ?? OPEN));
    const user = await trader('rul_case');
    try {
      if (holds) {
        expect((await place(user, { side: 'buy', qty: holds, order_type: 'market' })).status).toBe(201);
        await settle();
      }
      if (holds) {
        clock.set(at ?? OPEN);
        // A session of the new day: the day before's access token has run out.
        user.tokens = await server.services.auth.issueSession({ user: user.auth });
      }
      const before = await ordersOf(user);
      const onSnapshot = await answerOf(user, body);
      const underLock = await answerOf(user, body);
      expect(onSnapshot).toMatchObject({ status: 422, code });
      expect(underLock).toEqual(onSnapshot);
      await settle();
      expect(await ordersOf(user)).toEqual(before);
      expect(await refusalsOf(user)).toEqual([
        { gate: 'risk', code, reason: onSnapshot.message },
        { gate: 'risk', code, reason: onSnapshot.message },
      ]);
    } finally {
      clock.set(OPEN);
    }
  });

  it('passes what the gate passes: a buy after another fills, and a sell of what it holds', async () => {
    const user = await trader('rul_pass');
    expect((await place(user, { side: 'buy', qty: 10, order_type: 'market' })).status).toBe(201);
    expect((await place(user, { side: 'buy', qty: 10, order_type: 'market' })).status).toBe(201);
    await settle();
    expect((await place(user, { side: 'sell', qty: 20, order_type: 'market' })).status).toBe(201);
    await settle();
    expect((await ordersOf(user)).map((order) => order.status)).toEqual(['filled', 'filled', 'filled']);
  });

  // Two transactions at once need a server's database: PGlite is one session.
  it.runIf(process.env.DATABASE_URL)('sees what committed while it waited for the lock: cash gone meanwhile trips the daily loss limit', async () => {
    const user = await trader('rul_wait');
    // The day's first evaluation takes the day-start equity (100,000) on a snapshot.
    expect((await place(user, { side: 'buy', qty: 10, order_type: 'market' })).status).toBe(201);
    await settle();
    // Another writer of the account holds its lock and takes 10 % of its cash, as a fill would.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const other = server.services.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from ${simAccounts} where user_id = ${user.user.id} and asset_class = 'us_equity' for update`);
      await tx.execute(sql`update ${simAccounts} set cash = cash - 10000 where user_id = ${user.user.id} and asset_class = 'us_equity'`);
      locked();
      await released;
    });
    await lockTaken;
    // Passes every gate on what committed so far (P&L 0 %), then waits for the lock.
    const placing = place(user, { side: 'buy', qty: 1, order_type: 'market' });
    await waitFor(
      async () => (await rowsOf<{ n: number }>(server.services.db, sql`select count(*)::integer as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`))[0]!.n,
      (waiting) => waiting > 0,
    );
    release();
    await other;
    const res = await placing;
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('daily loss limit') });
    await settle();
    expect((await ordersOf(user)).map((order) => order.status)).toEqual(['filled']);
  });
});
