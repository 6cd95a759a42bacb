// Funds, availability and sizing over HTTP, as a real broker would judge them: working buys hold
// buying power (the account shows it; a cancel gives it back), a bracket's two children hold the
// position once, and sizing holds per position, so stacking buys passes nothing one buy may not.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZPlaceOrderRequest } from '../../contracts/orders.ts';
import { simAccounts } from '../../server/db/schema/index.ts';
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
    // A replay of one refused under the lock answers the same.
    const rejected = await server.http('GET', '/api/equity/orders?asset_class=us_equity&status=rejected', { token: user.tokens.access_token });
    const items = (rejected.body as { items: { client_order_id: string }[] }).items;
    // Some were refused under the lock (the gate saw the whole buying power); a replay answers the same.
    expect(items.length).toBeGreaterThan(0);
    {
      const replay = await place(user, { ...restingBuy, client_order_id: items[0]!.client_order_id });
      expect([replay.status, replay.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    }
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
