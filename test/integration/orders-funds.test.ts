// Funds, availability and sizing over HTTP, as a real broker would judge them: working buys hold
// buying power (the account shows it; a cancel gives it back), a bracket's two children hold the
// position once, and sizing holds per position, so stacking buys passes nothing one buy may not.
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ZPlaceOrderRequest } from '../../contracts/orders.ts';
import { auditTally } from '../../server/audit/queries.ts';
import { auditEvents, orders, outboxEvents, simAccounts, simOrders } from '../../server/db/schema/index.ts';
import { tallyTotal } from '../../server/db/tallies.ts';
import { countListedOrders } from '../../server/orders/queries.ts';
import { AppError } from '../../server/errors.ts';
import { manualClock } from '../../server/clock.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Tuesday 2026-03-10, 11:00 in New York: NYSE open. AAPL at 200: no fee, no slippage (us_broker_zero).
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  const admin = await newUser(server, { role: 'admin', prefix: 'fnd_admin' });
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'us_equity', symbol: 'AAPL', price: 200 } });
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { asset_class: 'us_equity', exchange: 'us_broker', api_key: `funds-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const place = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'us_equity', symbol: 'AAPL', ...body } });
const account = async (user: FactoryUser) => (await server.http('GET', '/api/equity/account?asset_class=us_equity', { token: user.tokens.access_token })).body as { cash: number; buying_power: number };
/** Holds the account's row lock in a transaction of its own until released. */
const holdAccount = (userId: number) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const done = server.services.db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from ${simAccounts} where user_id = ${userId} for update`);
    locked();
    await released;
  });
  return { lockTaken, release: async () => (release(), await done) };
};
const ordersOf = (user: FactoryUser) => server.services.db.select().from(orders).where(eq(orders.userId, user.user.id));
const auditOf = (user: FactoryUser, action: string) =>
  server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, action))).orderBy(asc(auditEvents.id));
/** The audit log's kept count of an action, and its count over the rows: equal while the triggers keep it right. */
const auditCountsOf = async (action: string) => ({
  kept: await tallyTotal(server.services.db, auditTally, sql`action = ${action}`),
  rows: (await server.services.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.action, action)))[0]!.n,
});
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};

describe('buying power reserves working buys', () => {
  it('ten resting buys of 37.6k on 100k: two are taken, the rest 422 INSUFFICIENT_FUNDS; the account shows the reservation; a cancel gives it back', async () => {
    const user = await trader('fnd_bp');
    // 189 × 199 = 37,611 each, resting below the price; a tight bracket keeps sizing out of the way.
    const restingBuy = { side: 'buy', qty: 189, order_type: 'limit', limit_price: 199, bracket: { take_profit: 220, stop_loss: 198.9 } };
    const answers = [];
    for (let n = 0; n < 10; n++) answers.push(await place(user, restingBuy));
    expect(answers.map((res) => res.status)).toEqual([201, 201, 422, 422, 422, 422, 422, 422, 422, 422]);
    expect(answers[2]!.body).toMatchObject({ code: 'INSUFFICIENT_FUNDS', message: 'The buy costs 37611 (189 × 199 + fee 0), more than the buying power 24778' });
    await settle();
    expect(await account(user)).toMatchObject({ cash: 100000, buying_power: 24778 });

    const first = answers[0]!.body as { broker_order_id: string };
    const canceled = await server.http('DELETE', `/api/equity/orders/${first.broker_order_id}?asset_class=us_equity`, { token: user.tokens.access_token });
    expect(canceled.status, canceled.text).toBe(204);
    expect((await account(user)).buying_power).toBe(62389);
    expect((await place(user, restingBuy)).status).toBe(201);
  });
});

describe('decided under the account\'s lock', () => {
  it('buys sent at once all pass the gate on their snapshots; those the books cannot pay answer as the gate would, 422 INSUFFICIENT_FUNDS', async () => {
    const user = await trader('fnd_race');
    const restingBuy = { side: 'buy', qty: 189, order_type: 'limit', limit_price: 199, bracket: { take_profit: 220, stop_loss: 198.9 } };
    // The first buy opens the account; then its row is held while six more are sent, so that
    // each reads its snapshot before any of them is placed.
    expect((await place(user, { side: 'buy', qty: 1, order_type: 'limit', limit_price: 1, bracket: { take_profit: 220, stop_loss: 0.5 } })).status).toBe(201);
    const hold = holdAccount(user.user.id);
    await hold.lockTaken;
    // Started in one turn, so each reads its snapshot (queued behind the held row) before any is placed.
    const request = ZPlaceOrderRequest.parse({ asset_class: 'us_equity', symbol: 'AAPL', ...restingBuy });
    const sent = Promise.allSettled(Array.from({ length: 6 }, () => server.services.orders.place({ user: { id: user.user.id }, request })));
    await hold.release();
    const answers = await sent;
    expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(2);
    for (const answer of answers) {
      if (answer.status === 'fulfilled') continue;
      expect(answer.reason).toBeInstanceOf(AppError);
      expect((answer.reason as AppError).code).toBe('INSUFFICIENT_FUNDS');
      expect((answer.reason as AppError).message).toMatch(/^The buy costs 37611 \(189 × 199 \+ fee 0\), more than the buying power (24777|0)$/);
    }
    await settle();
    expect((await account(user)).buying_power).toBe(24777);
    // Refused under the lock as at the gate: no order is left of them (DESIGN: refusals at gates 1-4 create no order).
    const rejected = await server.http('GET', '/api/equity/orders?asset_class=us_equity&status=rejected', { token: user.tokens.access_token });
    expect(rejected.body).toMatchObject({ items: [], total: 0 });
    expect(await ordersOf(user)).toHaveLength(3);
  });
});

describe('refused under the account\'s lock: no order, as at the gate', () => {
  it('ten buys of 37.6k on 100k sent at once over HTTP, all past the gate: 2×201 and 8×422; only the two are orders, the eight are audited as gate refusals and their ids stay unused', async () => {
    const user = await trader('fnd_lock_http');
    const token = user.tokens.access_token;
    const restingBuy = { side: 'buy', qty: 189, order_type: 'limit', limit_price: 199, bracket: { take_profit: 220, stop_loss: 198.9 } };
    // Opens the account (1 of its 100,000 reserved).
    expect((await place(user, { side: 'buy', qty: 1, order_type: 'limit', limit_price: 1, bracket: { take_profit: 220, stop_loss: 0.5 } })).status).toBe(201);
    const before = { placed: await auditCountsOf('order.placed'), refused: await auditCountsOf('order.refused') };
    // The books take none of them until all ten have passed the gate (each on the whole buying
    // power): whatever is refused is refused under the account's lock.
    const books = server.services.simulator;
    const placeForReal = books.placeInBooks.bind(books);
    let arrived = 0;
    let allPassed!: () => void;
    const passed = new Promise<void>((resolve) => (allPassed = resolve));
    const spy = vi.spyOn(books, 'placeInBooks').mockImplementation(async (account, request, steps) => {
      if (++arrived === 10) allPassed();
      await passed;
      return placeForReal(account, request, steps);
    });
    const ids = Array.from({ length: 10 }, (_, n) => `lock-http-${n}`);
    const answers = await Promise.all(ids.map((id) => place(user, { ...restingBuy, client_order_id: id }))).finally(() => spy.mockRestore());
    expect(arrived).toBe(10);
    expect(answers.map((res) => res.status).sort()).toEqual([201, 201, 422, 422, 422, 422, 422, 422, 422, 422]);
    const taken = ids.filter((_, n) => answers[n]!.status === 201);
    const refused = ids.filter((_, n) => answers[n]!.status === 422);
    for (const res of answers.filter((answer) => answer.status === 422)) {
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_FUNDS', message: 'The buy costs 37611 (189 × 199 + fee 0), more than the buying power 24777' });
    }
    await settle();

    // Only the accepted orders exist: in our table, at the broker, in the list (its kept total too) and by GET.
    const rows = await ordersOf(user);
    expect(rows.map((row) => row.clientOrderId).filter((id) => id.startsWith('lock-http-')).sort()).toEqual([...taken].sort());
    expect(rows.map((row) => row.status).filter((status) => status === 'rejected')).toEqual([]);
    expect(await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), inArray(simOrders.clientOrderId, refused)))).toEqual([]);
    const listed = await server.http('GET', '/api/equity/orders?asset_class=us_equity&size=1', { token });
    expect(listed.body.total).toBe(3);
    expect(await countListedOrders(server.services.db, { userId: user.user.id, assetClass: 'us_equity' })).toBe(3);
    expect((await server.http('GET', '/api/equity/orders?asset_class=us_equity&status=rejected', { token })).body.total).toBe(0);
    // No order event was written for them.
    const frames = await server.services.db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.user.id));
    expect(frames.filter((row) => refused.includes(row.frame.client_order_id as string))).toEqual([]);

    // Audited as a refusal at the gate is: `order.refused`, and no `order.placed` of theirs.
    const placements = await auditOf(user, 'order.placed');
    expect(placements.map((row) => row.data.client_order_id).filter((id) => refused.includes(id as string))).toEqual([]);
    const underLock = await auditOf(user, 'order.refused');
    expect(underLock.map((row) => row.data.client_order_id).sort()).toEqual([...refused].sort());
    for (const record of underLock) {
      expect(record.data).toMatchObject({ gate: 'risk', code: 'INSUFFICIENT_FUNDS', reason: 'The buy costs 37611 (189 × 199 + fee 0), more than the buying power 24777', symbol: 'AAPL', broker_order_id: null, asset_class: 'us_equity', live: false });
    }
    // The same shape as the gate's own refusal of the same buy, now that the gate sees the reservations.
    expect((await place(user, { ...restingBuy, client_order_id: 'lock-http-gate' })).status).toBe(422);
    const atGate = (await auditOf(user, 'order.refused')).find((row) => row.data.client_order_id === 'lock-http-gate')!;
    const shape = (record: typeof atGate) => ({ keys: Object.keys(record.data).sort(), actor: record.actorUserId, subject: record.subjectUserId, origin: [typeof record.requestId, typeof record.address] });
    expect(shape(underLock[0]!)).toEqual(shape(atGate));
    // The audit log's kept counts moved as its rows did: two placements (the two taken), nine
    // refusals (eight under the lock, one at the gate).
    const after = { placed: await auditCountsOf('order.placed'), refused: await auditCountsOf('order.refused') };
    expect(after.placed).toEqual({ kept: before.placed.kept + 2, rows: before.placed.rows + 2 });
    expect(after.refused).toEqual({ kept: before.refused.kept + 9, rows: before.refused.rows + 9 });

    // Their ids are unused: a different request with one is a new order, not 409.
    const reused = await place(user, { side: 'buy', qty: 1, order_type: 'market', client_order_id: refused[0] });
    expect(reused.status, reused.text).toBe(201);
    const got = await server.http('GET', `/api/equity/orders/${reused.body.broker_order_id as string}?asset_class=us_equity`, { token });
    expect(got.body).toMatchObject({ client_order_id: refused[0], qty: 1, order_type: 'market' });
  });
});

describe('sizing decided under the account\'s lock', () => {
  it('two buys sent at once, each within the cap alone: the second is refused on the position the books hold, as the gate would', async () => {
    const user = await trader('fnd_size_race');
    expect((await place(user, { side: 'buy', qty: 1, order_type: 'limit', limit_price: 1 })).status).toBe(201);
    const hold = holdAccount(user.user.id);
    await hold.lockTaken;
    // 120 × 200 × 5 % = 1,200 each on the gate's snapshot; 2,400 together, over 2,000.
    const request = ZPlaceOrderRequest.parse({ asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 120, order_type: 'market' });
    const sent = Promise.allSettled([0, 1].map(() => server.services.orders.place({ user: { id: user.user.id }, request })));
    await hold.release();
    const answers = await sent;
    expect(answers.map((answer) => answer.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = answers.find((answer) => answer.status === 'rejected')!.reason as AppError;
    expect(refused.code).toBe('RISK_RULE_VIOLATION');
    expect(refused.message).toMatch(/^The position would risk 2400(\.\d+)? with the buy \(the buy 1200: 120 × 200 × default stop 5 %/);
    // No order is left of it, and its refusal is audited as the gate's.
    await settle();
    expect((await ordersOf(user)).map((row) => row.status).sort()).toEqual(['filled', 'open']);
    expect((await auditOf(user, 'order.refused')).map((row) => row.data)).toEqual([expect.objectContaining({ gate: 'risk', code: 'RISK_RULE_VIOLATION', reason: refused.message })]);
  });
});

describe('quantity available to sell', () => {
  it("a bracket's two children hold the position once: what is held beyond them can be sold, and a refusal never says a negative quantity", async () => {
    const user = await trader('fnd_sell');
    expect((await place(user, { side: 'buy', qty: 10, order_type: 'market', bracket: { take_profit: 220, stop_loss: 190 } })).status).toBe(201);
    await settle();
    const refused = await place(user, { side: 'sell', qty: 5, order_type: 'market' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_FUNDS', message: 'The sell of 5 AAPL exceeds the 0 available to sell: 10 held, 10 in working sells; short selling is not allowed' });
    expect((await place(user, { side: 'buy', qty: 5, order_type: 'market' })).status).toBe(201);
    await settle();
    expect((await place(user, { side: 'sell', qty: 5, order_type: 'market' })).status).toBe(201);
  });
});

describe('position sizing per position', () => {
  it('a second buy that one buy of both could not pass is refused: the held quantity counts', async () => {
    const user = await trader('fnd_size');
    // 120 × 200 × 5 % = 1,200 alone; with the 120 held, 2,400: over 2 % of 100,000.
    expect((await place(user, { side: 'buy', qty: 120, order_type: 'market' })).status).toBe(201);
    await settle();
    const second = await place(user, { side: 'buy', qty: 120, order_type: 'market' });
    expect(second.status).toBe(422);
    expect(second.body.code).toBe('RISK_RULE_VIOLATION');
    expect(second.body.message).toContain('The position would risk 2400 with the buy');
    // A working buy counts too: a resting 50 (500) leaves room for no more than 30 (300).
    expect((await place(user, { side: 'buy', qty: 50, order_type: 'limit', limit_price: 199 })).status).toBe(201);
    expect((await place(user, { side: 'buy', qty: 31, order_type: 'market' })).body.code).toBe('RISK_RULE_VIOLATION');
    expect((await place(user, { side: 'buy', qty: 30, order_type: 'market' })).status).toBe(201);
  });
});
