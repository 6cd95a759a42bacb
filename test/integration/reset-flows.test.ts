// A paper reset is a flow, not a result (DESIGN §6 "Rules a real broker enforces"): the day-start
// snapshot stays as it was, the reset's change of equity is a row of its own written with the
// reset, and the day's P&L is equity − day-start equity − today's flows for the kill switch, the
// risk gate's daily loss bound and the account's metadata alike. A reset after a winning day
// trips nothing; a reset cannot hide a loss.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { accountFlows, emergencyLocks, equitySnapshots } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { setBtcPrice, tradingSettled } from '../support/paper-days.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// A Tuesday afternoon (UTC): crypto trades around the clock.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  // No workers: the minute sweep runs when a test asks for it.
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', SIM_INITIAL_CASH_USDT: '100000' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'flows_admin' });
});
afterAll(() => server?.stop());

/** A new day: the clock moves on, and the sessions issued before (expired by then) are issued again. */
const nextDay = async (at: string, ...users: FactoryUser[]) => {
  clock.set(at);
  for (const user of [admin, ...users]) user.tokens = await server.services.auth.issueSession({ user: user.auth });
};

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `flows-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};
const settled = () => tradingSettled(server);
const setPrice = (price: number) => setBtcPrice(server, admin.tokens.access_token, price);
const buy = async (user: FactoryUser, qty: number) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty, order_type: 'market' } });
  await settled();
  return res;
};
const reset = async (user: FactoryUser) => {
  const res = await server.http('POST', '/api/equity/account/reset', { token: user.tokens.access_token, body: { asset_class: 'crypto' } });
  expect(res.status, res.text).toBe(200);
  return res.body as { equity: number };
};
const equityOf = async (user: FactoryUser) => {
  const res = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { equity: number; metadata: Record<string, unknown> };
};
const snapshotOf = async (userId: number, day: string) =>
  (await server.services.db.select().from(equitySnapshots).where(and(eq(equitySnapshots.userId, userId), eq(equitySnapshots.mode, 'paper'), eq(equitySnapshots.day, day))))[0]?.equity;
const flowsOf = (userId: number) => server.services.db.select().from(accountFlows).where(eq(accountFlows.userId, userId));
const lockOf = async (userId: number) => (await server.services.db.select().from(emergencyLocks).where(eq(emergencyLocks.userId, userId)))[0];

describe('a paper reset', () => {
  it('after a winning day trips nothing: the reset takes the day’s snapshot before it, its flow is a row of its own, and buys stay allowed', async () => {
    await setPrice(50_000);
    const user = await trader('flows_win');
    // 0.7 BTC: what position sizing lets a 100,000 account buy at once.
    expect((await buy(user, 0.7)).status).toBe(201);
    // BTC up 20 %: about 107,000 at the end of the day.
    await setPrice(60_000);
    const yesterday = await equityOf(user);
    expect(yesterday.equity).toBeGreaterThan(106_000);

    // The next day: the reset is the account's first evaluation, so the snapshot is the equity before it.
    await nextDay('2026-03-11T15:00:00Z', user);
    expect((await reset(user)).equity).toBe(100_000);
    const start = await snapshotOf(user.user.id, '2026-03-11');
    expect(Number(start)).toBe(yesterday.equity);
    const [flow, ...more] = await flowsOf(user.user.id);
    expect(more).toEqual([]);
    expect(flow).toMatchObject({ day: '2026-03-11', kind: 'reset', mode: 'paper', assetClass: 'crypto', equityAfter: '100000' });
    expect(Number(flow!.equityBefore)).toBe(yesterday.equity);
    expect(Number(flow!.amount)).toBeCloseTo(100_000 - yesterday.equity, 8);

    // Equity 100,000 against a day start of about 107,000 is −6.5 % without the flow: the daily
    // loss bound would refuse this buy and the kill switch would lock.
    expect((await buy(user, 0.1)).status).toBe(201);
    expect(await server.services.killSwitch.sweep()).toMatchObject({ warned: 0, locked: 0 });
    expect(await lockOf(user.user.id)).toBeUndefined();
    const { metadata } = await equityOf(user);
    expect(metadata.day_start_equity).toBe(start);
    expect(Number(metadata.day_flows)).toBeCloseTo(100_000 - yesterday.equity, 8);
    // Only the fee of the 0.1 BTC buy is lost today.
    expect(Number(metadata.day_pnl)).toBeLessThanOrEqual(0);
    expect(Number(metadata.day_pnl)).toBeGreaterThan(-50);
    // The snapshot was never rewritten.
    expect(await snapshotOf(user.user.id, '2026-03-11')).toBe(start);
  });

  it('cannot hide a loss: after a reset the daily loss bound still refuses buys and the kill switch still locks', async () => {
    await nextDay('2026-03-12T15:00:00Z');
    await setPrice(50_000);
    const user = await trader('flows_loss');
    // The buy is the day's first evaluation: its snapshot is the 100,000 of the fresh account.
    expect((await buy(user, 0.7)).status).toBe(201);
    expect(Number(await snapshotOf(user.user.id, '2026-03-12'))).toBe(100_000);
    // BTC down 18 %: about −6.3 % of the account, unseen until the next evaluation.
    await setPrice(41_000);
    await reset(user);
    expect(await lockOf(user.user.id)).toBeUndefined();

    const refused = await buy(user, 0.1);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({ code: 'RISK_RULE_VIOLATION' });
    expect(refused.body.message).toMatch(/daily loss limit/);
    expect(await server.services.killSwitch.sweep()).toMatchObject({ locked: 1 });
    expect(await lockOf(user.user.id)).toBeDefined();
    const { metadata } = await equityOf(user);
    expect(metadata.day_pnl_pct).toBeLessThan(-0.05);
    expect(Number(await snapshotOf(user.user.id, '2026-03-12'))).toBe(100_000);
  });
});
