// GET /api/equity/account's metadata: the day-start equity snapshot of the account for the current
// UTC day (the one the daily loss bound and the kill switch share), today's P&L as an exact
// decimal and as a fraction, and the kill switch's alert and lock lines.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { equitySnapshots } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
const TODAY = '2026-03-10';
let server: TestServer;
let keyCount = 0;

beforeAll(async () => {
  // No workers: the kill switch's minute sweep would take snapshots of its own.
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', SIM_INITIAL_CASH_USDT: '100000' }, undefined, { clock });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(() => server?.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `pnl-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};
const account = async (user: FactoryUser, mode = 'paper') => {
  const res = await server.http('GET', `/api/equity/account?asset_class=crypto&mode=${mode}`, { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { equity: number; metadata: Record<string, unknown> };
};
const snapshot = (userId: number, day: string, equity: string, mode: 'paper' | 'live' = 'paper') =>
  server.services.db.insert(equitySnapshots).values({ userId, assetClass: 'crypto', mode, day, equity, takenAt: clock.now() });

const LINES = { day_pnl_alert_pct: -0.04, day_pnl_lock_pct: -0.05 };

describe('GET /api/equity/account metadata', () => {
  it('is null before the day’s snapshot (yesterday’s does not count), with the lines', async () => {
    const user = await trader('pnl_none');
    await snapshot(user.user.id, '2026-03-09', '90000');
    const { metadata } = await account(user);
    expect(metadata).toEqual({ day_start_equity: null, day_flows: '0', day_pnl: null, day_pnl_pct: null, ...LINES });
  });

  it('measures today from the day-start snapshot, exactly: day_pnl a decimal string, day_pnl_pct a fraction', async () => {
    const user = await trader('pnl_exact');
    // 0.3 above the account's 100000: a float sum would leave -0.30000000000291...
    await snapshot(user.user.id, TODAY, '100000.3');
    await snapshot(user.user.id, TODAY, '125000', 'live');
    const paper = await account(user);
    expect(paper.equity).toBe(100000);
    expect(paper.metadata).toEqual({ day_start_equity: '100000.3', day_flows: '0', day_pnl: '-0.3', day_pnl_pct: expect.closeTo(-0.3 / 100000.3, 15), ...LINES });
  });

  it('shows the snapshot the order gate took at the day’s first evaluation, and the loss since as the kill switch measures it', async () => {
    const user = await trader('pnl_gate');
    const buy = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.5, order_type: 'market' } });
    expect(buy.status, buy.text).toBe(201);
    const [taken] = await server.services.db
      .select()
      .from(equitySnapshots)
      .where(and(eq(equitySnapshots.userId, user.user.id), eq(equitySnapshots.mode, 'paper'), eq(equitySnapshots.day, TODAY)));
    expect(taken).toBeDefined();
    await server.services.simulator.idle();
    // BTC falls 18 %: half a BTC held, 4500 (4.5 % of the account) below its price at the snapshot, fees aside.
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '41000' });
    try {
      const { equity, metadata } = await account(user);
      expect(metadata.day_start_equity).toBe(String(Number(taken!.equity)));
      expect(Number(metadata.day_pnl)).toBeCloseTo(equity - Number(taken!.equity), 6);
      expect(Number(metadata.day_pnl)).toBeLessThan(-4500);
      expect(metadata.day_pnl_pct).toBeCloseTo((equity - Number(taken!.equity)) / Number(taken!.equity), 12);
      expect(metadata.day_pnl_pct).toBeLessThan(LINES.day_pnl_alert_pct);
      expect(metadata.day_pnl_pct).toBeGreaterThan(LINES.day_pnl_lock_pct);
    } finally {
      await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
    }
  });

  it('starts over the next UTC day: no snapshot yet, so null again', async () => {
    const user = await trader('pnl_midnight');
    await snapshot(user.user.id, TODAY, '100000');
    expect((await account(user)).metadata.day_start_equity).toBe('100000');
    clock.advance(9 * 3_600_000);
    const tomorrow = { ...user, tokens: await server.services.auth.issueSession({ user: user.auth }) };
    expect((await account(tomorrow)).metadata).toMatchObject({ day_start_equity: null, day_pnl: null, day_pnl_pct: null });
  });
});
