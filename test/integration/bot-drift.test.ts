// The bot's runs and a run's drift report from outside (DESIGN §6): GET /api/bot/runs lists each
// start with its settings and how it ended; GET /api/bot/runs/{id}/drift replays the run's bars
// through the backtest engine with its strategy and lines each decision's fills up with the bot's.
// Where the bot filled as the replay did, nothing drifts; where one fill differs, the report names
// it, its gap and what it did to the return. Another user's run is 404.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZBotDrift, ZBotRunList } from '../../contracts/bot.ts';
import { manualClock } from '../../server/clock.ts';
import { botBars, botOrders, botRuns, orderFills } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');
let server: TestServer;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', BOT_SYNC_INTERVAL_MS: '50' }, undefined, { clock });
});
afterAll(() => server.stop());

const MINUTE = 60_000;
const FIRST_BAR = Date.parse('2026-03-09T10:00:00.000Z');
/**
 * Closes of a fast-2 / slow-4 SMA crossover path: flat (the warm-up), a dip, a rise (the fast mean
 * crosses above at bar 13: a buy at bar 14's open, 101), a fall (below at bar 18: a sell at 19's, 102), flat.
 */
const CLOSES = [...Array<number>(10).fill(100), 99.5, 99, 100, 101, 102, 103, 103, 103, 102, 101, 100, 99, ...Array<number>(8).fill(98)];
/** The run starts at the 11th bar: the ten before it only warm the indicators. */
const RUN_START = new Date(FIRST_BAR + 10 * MINUTE);
const RUN_END = new Date(FIRST_BAR + CLOSES.length * MINUTE);

const get = async (user: FactoryUser, path: string) => server.http('GET', path, { token: user.tokens.access_token });

/** A run as the bot leaves it: its row, the bars it built (each opening at the close before it) and nothing traded yet. */
const seedRun = async (user: FactoryUser, runId: string) => {
  const { db } = server.services;
  await db.insert(botRuns).values({
    userId: user.user.id,
    runId,
    assetClass: 'crypto',
    symbols: ['BTC/USDT'],
    strategyName: 'sma_crossover',
    strategyParams: { fast: 2, slow: 4 },
    liveMode: false,
    timeframe: '1m',
    startedAt: RUN_START,
    stoppedAt: RUN_END,
    stoppedBy: 'user',
  });
  await db.insert(botBars).values(
    CLOSES.map((close, i) => {
      const open = String(CLOSES[i - 1] ?? close);
      return { userId: user.user.id, assetClass: 'crypto' as const, symbol: 'BTC/USDT', timeframe: '1m' as const, start: new Date(FIRST_BAR + i * MINUTE), open, high: String(Math.max(close, Number(open))), low: String(Math.min(close, Number(open))), close: String(close) };
    }),
  );
};

/** The bot's order of a decision and its fill, as the bot and the order service write them. */
const seedFill = async (user: FactoryUser, runId: string, n: number, fill: { barStart: string; side: 'buy' | 'sell'; qty: number; price: number; fee: number; at: string }) => {
  const clientOrderId = `bot-${runId}-${n}`;
  const { db } = server.services;
  await db.insert(botOrders).values({ userId: user.user.id, clientOrderId, runId, assetClass: 'crypto', symbol: 'BTC/USDT', side: fill.side, qty: String(fill.qty), barStart: new Date(fill.barStart) });
  await db.insert(orderFills).values({ userId: user.user.id, clientOrderId, executionId: `${clientOrderId}-x`, qty: String(fill.qty), price: String(fill.price), fee: String(fill.fee), at: new Date(fill.at) });
  return clientOrderId;
};

describe('a bot run’s drift report', () => {
  it('replays the run’s bars: nothing drifts where the bot filled as the replay did; one dearer fill is named with its gap and its effect on the return', async () => {
    const user = await newUser(server, { prefix: 'drift' });
    await seedRun(user, 'run-a');
    const runs = await get(user, '/api/bot/runs');
    expect(runs.status, runs.text).toBe(200);
    expect(ZBotRunList.parse(runs.body).items).toEqual([
      expect.objectContaining({ run_id: 'run-a', strategy_name: 'sma_crossover', timeframe: '1m', started_at: RUN_START.toISOString(), stopped_at: RUN_END.toISOString(), is_running: false }),
    ]);

    // Before the bot traded: the replay's two decisions, each missing on the bot's side.
    const before = ZBotDrift.parse((await get(user, '/api/bot/runs/run-a/drift')).body);
    expect(before).toMatchObject({ run_id: 'run-a', symbol: 'BTC/USDT', warmup_bars: 10, bars: CLOSES.length - 10, compared: 0, differing: 2 });
    expect(before.rows.map((row) => [row.side, row.cause])).toEqual([
      ['buy', 'missing_live'],
      ['sell', 'missing_live'],
    ]);
    const [buy, sell] = before.rows.map((row) => ({ barStart: row.bar_start, side: row.side, ...row.backtest! }));
    // The buy was decided at the close of the bar where the fast mean crossed above the slow one, and filled at the next open.
    expect([buy!.barStart, buy!.at]).toEqual([new Date(FIRST_BAR + 13 * MINUTE).toISOString(), new Date(FIRST_BAR + 14 * MINUTE).toISOString()]);
    expect([sell!.barStart, sell!.at]).toEqual([new Date(FIRST_BAR + 18 * MINUTE).toISOString(), new Date(FIRST_BAR + 19 * MINUTE).toISOString()]);
    // At the opens, 101 and 102, moved 0.05 % against the taker onto the cent, with the 0.1 % fee both ways.
    expect([buy!.price, sell!.price]).toEqual([101.06, 101.94]);
    expect(before.backtest_return_pct).toBeGreaterThan(0.6);
    expect(before.live_return_pct).toBe(0);

    // The bot filled exactly as the replay did: no drift.
    const buyId = await seedFill(user, 'run-a', 1, buy!);
    const sellId = await seedFill(user, 'run-a', 2, sell!);
    const same = ZBotDrift.parse((await get(user, '/api/bot/runs/run-a/drift')).body);
    expect(same).toMatchObject({ compared: 2, differing: 0, return_gap_pct: 0, gap_by_cause: { price_pct: 0, fee_pct: 0, trades_pct: 0 } });
    expect(same.live_return_pct).toBe(same.backtest_return_pct);
    expect(same.rows.map((row) => [row.cause, row.live?.client_order_id, row.effect_pct])).toEqual([
      ['match', buyId, 0],
      ['match', sellId, 0],
    ]);

    // One fill 1 % dearer: named, with its gap; the return falls by about as much.
    const { db } = server.services;
    await db.update(orderFills).set({ price: String(buy!.price * 1.01) }).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, buyId)));
    const drifted = ZBotDrift.parse((await get(user, '/api/bot/runs/run-a/drift')).body);
    const named = drifted.rows.filter((row) => row.cause !== 'match');
    expect(named).toHaveLength(1);
    expect(named[0]).toMatchObject({ cause: 'price', side: 'buy', live: { client_order_id: buyId }, price_gap_pct: 1 });
    // The same fee on a dearer fill is a slightly lower rate: a thousandth of a point back.
    expect(named[0]!.effect_pct).toBeCloseTo(-0.999, 3);
    expect(drifted.differing).toBe(1);
    expect(drifted.gap_by_cause.price_pct).toBe(-1);
    expect(drifted.return_gap_pct).toBeLessThan(-0.9);
    expect(drifted.return_gap_pct).toBeGreaterThan(-1.1);
  });

  it('is 404 for another user’s run and for a run that does not exist; lists none of another user’s runs', async () => {
    const owner = await newUser(server, { prefix: 'drift_owner' });
    const other = await newUser(server, { prefix: 'drift_other' });
    await seedRun(owner, 'run-owned');
    for (const path of ['/api/bot/runs/run-owned/drift', '/api/bot/runs/no-such-run/drift', '/api/bot/runs/run-owned/drift?symbol=ETH-USDT']) {
      const res = await get(other, path);
      expect([res.status, res.body.code], `${path}: ${res.text}`).toEqual([404, 'NOT_FOUND']);
    }
    expect((await get(owner, '/api/bot/runs/run-owned/drift?symbol=ETH-USDT')).status).toBe(404);
    expect((await get(other, '/api/bot/runs')).body).toMatchObject({ items: [], total: 0 });
  });

  it('keeps each start as a run, and its end, through the bot’s own routes', async () => {
    const user = await newUser(server, { prefix: 'drift_runs' });
    const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `drift-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(key.status, key.text).toBe(201);
    const start = () => server.http('POST', '/api/bot/start', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbols: ['BTC/USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 2, slow: 4 } } });
    const stop = () => server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
    expect((await start()).status).toBe(200);
    clock.advance(60_000);
    expect((await stop()).status).toBe(200);
    clock.advance(60_000);
    expect((await start()).status).toBe(200);
    const runs = ZBotRunList.parse((await get(user, '/api/bot/runs')).body);
    expect(runs.total).toBe(2);
    expect(runs.items.map((run) => [run.is_running, run.stopped_by])).toEqual([
      [true, null],
      [false, 'user'],
    ]);
    expect(runs.items[0]!.run_id).not.toBe(runs.items[1]!.run_id);
    expect((await stop()).status).toBe(200);
  });
});
