// Backtests from outside: the real GOOG series against the figures four independent engines
// agree on, the stored results (list, read, another user's 404), the crypto routes, the
// strategy list, and every documented refusal.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZBacktestResult, ZStrategyList } from '../../contracts/backtest.ts';
import { createBacktests } from '../../server/backtest/backtests.ts';
import type { BacktestPool } from '../../server/backtest/pool.ts';
import { runJob, summarizeJob } from '../../server/backtest/task.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
let server: TestServer;
let admin: FactoryUser;
let user: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  admin = await newUser(server, { role: 'admin', prefix: 'bt_admin' });
  user = await newUser(server, { prefix: 'bt_user' });
  const instrument = await server.http('POST', '/api/admin/instruments', {
    token: admin.tokens.access_token,
    body: { asset_class: 'us_equity', symbol: 'GOOG', exchange: 'NASDAQ', currency: 'USD', name: 'Alphabet Inc. Class C', reference_price: 100, tick_size: 0.01, lot_size: 1, fractional: true },
  });
  expect(instrument.status, instrument.text).toBe(201);
  const csv = readFileSync(path.join(FIXTURES, 'backtest', 'GOOG_1d.csv'), 'utf8');
  const imported = await server.http('POST', '/api/admin/market-data/ohlcv?asset_class=us_equity&symbol=GOOG', { token: admin.tokens.access_token, rawBody: csv, headers: { 'content-type': 'text/csv' } });
  expect(imported.status, imported.text).toBe(200);
  expect(imported.body.imported).toBe(2148);
  const btc = readFileSync(path.join(FIXTURES, 'ohlcv', 'btc-usd-reordered.csv'), 'utf8');
  const btcImported = await server.http('POST', '/api/admin/market-data/ohlcv?asset_class=crypto&symbol=BTC/USDT', { token: admin.tokens.access_token, rawBody: btc, headers: { 'content-type': 'text/csv' } });
  expect(btcImported.status, btcImported.text).toBe(200);
});
afterAll(() => server.stop());

const goog = { symbol: 'GOOG', asset_class: 'us_equity', strategy_name: 'sma_crossover', strategy_params: { fast: 10, slow: 30 }, start_date: '2004-08-19', end_date: '2013-03-01', initial_capital: 10_000, profile_name: 'us_broker_zero' };
const run = (body: unknown, token = user.tokens.access_token) => server.http('POST', '/api/equity/backtest', { token, body });

describe('POST /api/equity/backtest', () => {
  it('takes exits on any strategy: a trailing stop and a stop-loss sell within the bar, each sell saying why; out-of-range exits are 422', async () => {
    const res = await run({ ...goog, strategy_name: 'buy_and_hold', strategy_params: null, trail_pct: 8, stop_loss_pct: 5 });
    expect(res.status, res.text).toBe(200);
    const result = ZBacktestResult.strict().parse(res.body);
    expect(result).toMatchObject({ trail_pct: 8, stop_loss_pct: 5, take_profit_pct: null });
    const sells = result.trades.filter((trade) => trade.side === 'sell');
    // Buy and hold alone sells once, at the end; with a trail it is stopped out on the first 8 % fall.
    expect(sells[0]).toMatchObject({ reason: 'trail' });
    expect(sells.length).toBeGreaterThanOrEqual(1);
    for (const bad of [{ trail_pct: 60 }, { trail_pct: 0 }, { stop_loss_pct: 100 }, { take_profit_pct: -1 }]) {
      const refused = await run({ ...goog, ...bad });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
      expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });

  it('gives, on the real GOOG series, the figures four independent engines agree on', async () => {
    const res = await run(goog);
    expect(res.status, res.text).toBe(200);
    const result = ZBacktestResult.strict().parse(res.body);
    expect(result.total_return_pct).toBeCloseTo(4.82788, 5);
    expect(result.total_trades).toBe(33);
    expect(result.max_drawdown_pct).toBeCloseTo(-0.29716, 5);
    expect(result.sharpe_ratio).toBeCloseTo(1.0338, 4);
    expect(result.final_capital).toBeCloseTo(10_000 * 5.82788, 0);
    expect(result.buy_hold_return_pct).toBeCloseTo(806.19 / 100.34 - 1, 9);
    expect(result).toMatchObject({ asset_class: 'us_equity', currency: 'USD', profile_name: 'us_broker_zero', strategy_name: 'sma_crossover', symbol: 'GOOG', strategy_params: { fast: 10, slow: 30, size: 1 } });
    // Every bar is a point (2,148 is under the 4,000 cap); fills are each buy and each sell.
    expect(result.equity_curve).toHaveLength(2148);
    expect(result.equity_curve_total).toBe(2148);
    expect(result.trades).toHaveLength(66);
    expect(result.trades[0]).toMatchObject({ side: 'buy', symbol: 'GOOG', fee: 0 });
    // Two runs of the same request give the same figures.
    const again = await run(goog);
    expect({ ...again.body, result_id: undefined, created_at: undefined }).toEqual({ ...res.body, result_id: undefined, created_at: undefined });
  });

  it('fills historical (adjusted) prices as they are, not rounded onto today’s tick: ORCL gives the frictionless +448.959 %', async () => {
    // ORCL 1995-2014 (../shared/data, byte for byte): split-adjusted opens with six places
    // (2.123457), which today's $0.01 grid would move by up to half a cent on every fill.
    const csv = readFileSync(path.join(FIXTURES, 'backtest', 'ORCL_1d.csv'), 'utf8');
    const imported = await server.http('POST', '/api/admin/market-data/ohlcv?asset_class=us_equity&symbol=ORCL', { token: admin.tokens.access_token, rawBody: csv, headers: { 'content-type': 'text/csv' } });
    expect(imported.status, imported.text).toBe(200);
    const res = await run({ ...goog, symbol: 'ORCL', start_date: '1995-01-01', end_date: '2014-12-31' });
    expect(res.status, res.text).toBe(200);
    // The plain float loop of test/unit/backtest-real-series.test.ts gives the same figures.
    expect(res.body.total_return_pct).toBeCloseTo(4.48959, 5);
    expect(res.body.total_trades).toBe(97);
    expect(res.body.trades[0]).toMatchObject({ side: 'buy', price: expect.any(Number) });
    expect(res.body.trades.some((trade: { price: number }) => Math.round(trade.price * 100) / 100 !== trade.price)).toBe(true);
  });

  it('warms its indicators on the stored bars before start_date and trades from start_date, never during the warm-up', async () => {
    // sma 10/30 reads 30 bars before the start. The averages cross upward at the close of 2006-03-31,
    // the second bar from 2006-03-30: a warm run buys at the next open, 2006-04-03 (a cold one could
    // not see a cross before its 31st bar).
    const warm = await run({ ...goog, start_date: '2006-03-30', end_date: '2007-03-30' });
    expect(warm.status, warm.text).toBe(200);
    expect(warm.body.warmup_bars).toBe(30);
    expect(warm.body.equity_curve[0]).toEqual({ date: '2006-03-30', equity: 10_000 });
    expect(warm.body.trades[0]).toMatchObject({ side: 'buy', timestamp: '2006-04-03T00:00:00.000Z' });
    // That cross, seen during the warm-up of a run starting 2006-04-03, is not traded: the first
    // buy is at the next cross (2006-06-14), filled on 2006-06-15.
    const later = await run({ ...goog, start_date: '2006-04-03', end_date: '2007-03-30' });
    expect(later.body.trades[0]).toMatchObject({ side: 'buy', timestamp: '2006-06-15T00:00:00.000Z' });
    // With fewer stored bars than the warm-up, it warms on those there are.
    expect((await run({ ...goog, start_date: '2004-08-25' })).body.warmup_bars).toBe(4);
  });

  it('buy_and_hold ends at initial × (last close / the open it bought at)', async () => {
    const res = await run({ ...goog, strategy_name: 'buy_and_hold', strategy_params: undefined });
    expect(res.status, res.text).toBe(200);
    // Bought at the second bar's open (101.01), sold at the last close (806.19), no fees.
    expect(res.body.final_capital).toBeCloseTo((10_000 * 806.19) / 101.01, 4);
    expect(res.body.total_trades).toBe(1);
  });

  it('refuses what the interface refuses, with its codes', async () => {
    const cases: [unknown, number, string][] = [
      [{ ...goog, asset_class: 'crypto' }, 422, 'INVALID_ASSET_CLASS'],
      [{ ...goog, asset_class: 'forex' }, 422, 'INVALID_ASSET_CLASS'],
      [{ ...goog, strategy_name: 'no_such_strategy' }, 422, 'STRATEGY_NOT_FOUND'],
      [{ ...goog, strategy_params: { fast: 10, slow: 30, slwo: 40 } }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, strategy_params: { fast: 30, slow: 10 } }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, end_date: '2004-08-19' }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, start_date: '2004-02-30' }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, initial_capital: 0 }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, profile_name: 'kr_broker_default' }, 422, 'VALIDATION_ERROR'],
      [{ ...goog, start_date: '1990-01-01', end_date: '1990-12-31' }, 422, 'INSUFFICIENT_DATA'],
      [{ ...goog, symbol: 'NOSUCHCO' }, 422, 'INVALID_SYMBOL'],
    ];
    for (const [body, status, code] of cases) {
      const res = await run(body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect((await run(goog, 'garbage')).status).toBe(401);
    // A series priced under one tick is historical data like any other: its fills keep the bar's price (DESIGN: no rounding onto today's grid).
    const penny = { asset_class: 'us_equity', symbol: 'PNNY', exchange: 'NASDAQ', currency: 'USD', name: 'Penny', reference_price: 1, tick_size: 0.01, lot_size: 1, fractional: true };
    const created = await server.http('POST', '/api/admin/instruments', { token: admin.tokens.access_token, body: penny });
    expect(created.status, created.text).toBe(201);
    const bars = [1, 0.5, 0.3, 0.004].map((close, i) => ({ date: `2024-01-0${i + 2}`, open: close, high: close, low: close, close, volume: 1 }));
    expect((await server.http('POST', '/api/admin/market-data/ohlcv', { token: admin.tokens.access_token, body: { asset_class: 'us_equity', symbol: 'PNNY', bars } })).status).toBe(200);
    const pennyRun = await run({ ...goog, symbol: 'PNNY', strategy_name: 'buy_and_hold', strategy_params: undefined, start_date: '2024-01-01', end_date: '2024-01-31' });
    expect(pennyRun.status, pennyRun.text).toBe(200);
    expect(pennyRun.body.trades.map((trade: { price: number }) => trade.price)).toEqual([0.5, 0.004]);
  });
});

describe('stored results', () => {
  it('lists summaries newest first with filters, reads one in full, and answers 404 for another user and for the other family', async () => {
    const owner = await newUser(server, { prefix: 'bt_owner' });
    const first = await run({ ...goog, strategy_name: 'buy_and_hold', strategy_params: {} }, owner.tokens.access_token);
    const second = await run(goog, owner.tokens.access_token);
    expect([first.status, second.status]).toEqual([200, 200]);
    const list = await server.http('GET', '/api/equity/backtest?size=10', { token: owner.tokens.access_token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, page: 1, size: 10 });
    expect(list.body.items.map((item: { result_id: string }) => item.result_id)).toEqual([second.body.result_id, first.body.result_id]);
    expect(list.body.items[0]).not.toHaveProperty('equity_curve');
    expect(list.body.items[0]).not.toHaveProperty('trades');
    const filtered = await server.http('GET', '/api/equity/backtest?strategy=buy_and_hold&symbol=GOOG&asset_class=us_equity', { token: owner.tokens.access_token });
    expect(filtered.body.items.map((item: { result_id: string }) => item.result_id)).toEqual([first.body.result_id]);
    const one = await server.http('GET', `/api/equity/backtest/${second.body.result_id}`, { token: owner.tokens.access_token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(second.body);
    expect((await server.http('GET', `/api/equity/backtest/${second.body.result_id}`, { token: user.tokens.access_token })).status).toBe(404);
    expect((await server.http('GET', `/api/backtest/${second.body.result_id}`, { token: owner.tokens.access_token })).status).toBe(404);
    expect((await server.http('GET', '/api/equity/backtest?asset_class=crypto', { token: owner.tokens.access_token })).body.code).toBe('INVALID_ASSET_CLASS');
  });
});

describe('POST /api/equity/backtest/sweep', () => {
  it('runs every point of the grid, ranks them by the metric, skips what the strategy refuses, and stores the sweep', async () => {
    const body = { ...goog, strategy_params: undefined, grid: { fast: [5, 10, 30], slow: [30, 50] }, rank_by: 'total_return_pct' };
    const res = await server.http('POST', '/api/equity/backtest/sweep', { token: user.tokens.access_token, body });
    expect(res.status, res.text).toBe(200);
    // fast 30 with slow 30 is refused by the strategy (slow must be above fast); five points ran.
    expect(res.body.skipped).toEqual([{ strategy_params: { fast: 30, slow: 30 }, reason: expect.stringContaining('slow') }]);
    expect(res.body.points).toHaveLength(5);
    expect(res.body.points.map((point: { rank: number }) => point.rank)).toEqual([1, 2, 3, 4, 5]);
    const returns = res.body.points.map((point: { total_return_pct: number }) => point.total_return_pct);
    expect(returns).toEqual([...returns].sort((a, b) => b - a));
    // The 10/30 point is the single run checked above, to the digit.
    const reference = res.body.points.find((point: { strategy_params: { fast: number; slow: number } }) => point.strategy_params.fast === 10 && point.strategy_params.slow === 30);
    expect(reference.total_return_pct).toBeCloseTo(4.82788, 5);
    expect(reference.total_trades).toBe(33);
    const stored = await server.http('GET', `/api/equity/backtest/sweep/${res.body.sweep_id}`, { token: user.tokens.access_token });
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(res.body);
    expect((await server.http('GET', `/api/equity/backtest/sweep/${res.body.sweep_id}`, { token: admin.tokens.access_token })).status).toBe(404);
  });

  it('lists your sweeps newest first, as summaries with their best point, filtered by symbol and strategy', async () => {
    const owner = await newUser(server, { prefix: 'bt_sweeps' });
    const sweepOf = (body: unknown) => server.http('POST', '/api/equity/backtest/sweep', { token: owner.tokens.access_token, body });
    const first = await sweepOf({ ...goog, strategy_params: undefined, grid: { fast: [5, 10], slow: [30] }, rank_by: 'total_return_pct' });
    const second = await sweepOf({ ...goog, strategy_name: 'rsi_reversion', strategy_params: undefined, grid: { period: [10, 14] } });
    expect([first.status, second.status]).toEqual([200, 200]);
    const list = await server.http('GET', '/api/equity/backtest/sweep?size=10', { token: owner.tokens.access_token });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({ total: 2, page: 1, size: 10 });
    expect(list.body.items.map((item: { sweep_id: string }) => item.sweep_id)).toEqual([second.body.sweep_id, first.body.sweep_id]);
    expect(list.body.items[1]).toEqual({
      sweep_id: first.body.sweep_id,
      asset_class: 'us_equity',
      symbol: 'GOOG',
      strategy_name: 'sma_crossover',
      profile_name: 'us_broker_zero',
      start_date: goog.start_date,
      end_date: goog.end_date,
      initial_capital: 10_000,
      rank_by: 'total_return_pct',
      // No exits asked for: each echoed as null.
      stop_loss_pct: null,
      take_profit_pct: null,
      trail_pct: null,
      points_total: 2,
      skipped_total: 0,
      best: first.body.points[0],
      created_at: first.body.created_at,
    });
    expect(list.body.items[0]).not.toHaveProperty('points');
    const filtered = await server.http('GET', '/api/equity/backtest/sweep?strategy=SMA_CROSSOVER&symbol=GOOG', { token: owner.tokens.access_token });
    expect(filtered.body.items.map((item: { sweep_id: string }) => item.sweep_id)).toEqual([first.body.sweep_id]);
    // Another user's sweeps are not listed.
    expect((await server.http('GET', '/api/equity/backtest/sweep', { token: admin.tokens.access_token })).body).toMatchObject({ items: [], total: 0 });
  });

  it('refuses a grid key the strategy does not have, a grid over BACKTEST_SWEEP_MAX_POINTS, and what a single run refuses', async () => {
    const sweep = (body: unknown) => server.http('POST', '/api/equity/backtest/sweep', { token: user.tokens.access_token, body });
    const base = { ...goog, strategy_params: undefined, grid: { fast: [5, 10] } };
    expect((await sweep({ ...base, grid: { fats: [5] } })).body).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    const many = Array.from({ length: 15 }, (_, i) => i + 1);
    expect((await sweep({ ...base, grid: { fast: many, slow: many.map((n) => n + 100) } })).body).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' });
    expect((await sweep({ ...base, asset_class: 'crypto' })).body.code).toBe('INVALID_ASSET_CLASS');
    expect((await sweep({ ...base, strategy_name: 'nope' })).body.code).toBe('STRATEGY_NOT_FOUND');
    expect((await sweep({ ...base, rank_by: 'luck' })).body.code).toBe('VALIDATION_ERROR');
  });
});

describe('POST /api/equity/backtest/walk-forward', () => {
  const walkForward = (body: unknown) => server.http('POST', '/api/equity/backtest/walk-forward', { token: user.tokens.access_token, body });

  it('optimises on each train window, runs the best point on the next test window, and stitches the test windows', async () => {
    const res = await walkForward({ ...goog, strategy_params: undefined, grid: { fast: [5, 10], slow: [30, 50] }, rank_by: 'total_return_pct', train_bars: 500, test_bars: 250 });
    expect(res.status, res.text).toBe(200);
    // 2,148 bars: windows start at 0, 250, ... 1,500; the last test window is the 148 bars left (DESIGN keeps it).
    expect(res.body.windows).toHaveLength(7);
    expect(res.body.windows[0]).toMatchObject({ train_start: '2004-08-19', test_start: expect.any(String) });
    expect(res.body.windows.at(-1).test_end).toBe('2013-03-01');
    for (const window of res.body.windows) {
      expect([5, 10]).toContain(window.best_params.fast);
      expect([30, 50]).toContain(window.best_params.slow);
      expect(window.test_start > window.train_end).toBe(true);
    }
    // Each test window starts where the last one ended: the windows' returns compound to the whole.
    const compounded = res.body.windows.reduce((capital: number, window: { test: { total_return_pct: number } }) => capital * (1 + window.test.total_return_pct), 10_000);
    expect(res.body.final_capital).toBeCloseTo(compounded, 6);
    expect(res.body.final_capital).toBeCloseTo(res.body.windows.at(-1).test.final_capital, 9);
    expect(res.body.total_return_pct).toBeCloseTo(res.body.final_capital / 10_000 - 1, 9);
    expect(res.body.equity_curve_total).toBe(1648);
    expect(res.body.equity_curve[0]).toEqual({ date: res.body.windows[0].test_start, equity: 10_000 });
    expect(res.body.total_trades).toBe(res.body.windows.reduce((sum: number, window: { test: { total_trades: number } }) => sum + window.test.total_trades, 0));
  });

  it('with a one-point grid equals one backtest over the span its test windows cover, to the digit: the position carries across windows', async () => {
    // sma 10/100 in 125-bar windows: flat at every window's end and cold at every start, it would trade almost never.
    const res = await walkForward({ ...goog, strategy_params: undefined, grid: { fast: [10], slow: [100] }, train_bars: 250, test_bars: 125 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.windows).toHaveLength(16);
    const single = await run({ ...goog, strategy_params: { fast: 10, slow: 100 }, start_date: res.body.windows[0].test_start });
    expect(single.status, single.text).toBe(200);
    expect(single.body.warmup_bars).toBe(100);
    expect(res.body.total_trades).toBe(single.body.total_trades);
    expect(res.body.total_trades).toBeGreaterThan(5);
    expect(res.body.final_capital).toBe(single.body.final_capital);
    expect(res.body.total_return_pct).toBe(single.body.total_return_pct);
    expect(res.body.max_drawdown_pct).toBe(single.body.max_drawdown_pct);
    expect(res.body.sharpe_ratio).toBe(single.body.sharpe_ratio);
    expect(res.body.equity_curve).toEqual(single.body.equity_curve);
  });

  it('answers 422 INSUFFICIENT_DATA when the range leaves no test bar after one train window', async () => {
    const res = await walkForward({ ...goog, strategy_params: undefined, grid: { fast: [5] }, train_bars: 2148, test_bars: 500 });
    expect([res.status, res.body.code]).toEqual([422, 'INSUFFICIENT_DATA']);
    // One bar more is a window: the last test window may be shorter than test_bars.
    const one = await walkForward({ ...goog, strategy_params: undefined, grid: { fast: [5] }, train_bars: 2147, test_bars: 500 });
    expect(one.status, one.text).toBe(200);
    expect(one.body.equity_curve_total).toBe(1);
  });
});

describe('runs under way per user (BACKTEST_MAX_RUNNING_PER_USER)', () => {
  it('refuses a run, a sweep or a walk-forward past the bound with 429 until one of the user’s runs ends', async () => {
    // A pool that holds every job until the test lets them go: the runs stay under way.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const heldPool: BacktestPool = {
      run: async (job) => {
        await released;
        return runJob(job);
      },
      summarize: async (job, span) => {
        await released;
        return summarizeJob(job, span);
      },
      close: () => Promise.resolve(),
    };
    const { db, instruments, clock } = server.services;
    const backtests = createBacktests({ db, clock, instruments, pool: heldPool, config: { ...server.config, BACKTEST_INLINE_MAX_BARS: 0, BACKTEST_MAX_RUNNING_PER_USER: 2 } });
    const owner = { id: user.user.id };
    const request = { ...goog, timeframe: '1d' as const, asset_class: 'us_equity' as const };
    const first = backtests.run({ user: owner, request, family: 'equity' });
    const second = backtests.sweep({ user: owner, request: { ...request, strategy_params: undefined, grid: { fast: [5, 10] }, rank_by: 'total_return_pct' }, family: 'equity' });
    const refusals = await Promise.allSettled([
      backtests.run({ user: owner, request, family: 'equity' }),
      backtests.walkForward({ user: owner, request: { ...request, strategy_params: undefined, grid: { fast: [5] }, rank_by: 'total_return_pct', train_bars: 500, test_bars: 250 }, family: 'equity' }),
    ]);
    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      expect((refusal as PromiseRejectedResult).reason).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfterSec: 1 });
    }
    release();
    await expect(first).resolves.toMatchObject({ total_trades: 33 });
    await expect(second).resolves.toMatchObject({ points: expect.any(Array) });
    await expect(backtests.run({ user: owner, request, family: 'equity' })).resolves.toMatchObject({ total_trades: 33 });
  });
});

describe('crypto: /api/backtest', () => {
  it('runs at /api/backtest/run, lists at /api/backtest and reads at /api/backtest/{result_id}; stocks are refused there', async () => {
    const body = { symbol: 'BTC-USDT', asset_class: 'crypto', strategy_name: 'buy_and_hold', start_date: '2017-01-01', end_date: '2017-12-31' };
    const res = await server.http('POST', '/api/backtest/run', { token: user.tokens.access_token, body });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ asset_class: 'crypto', currency: 'USDT', profile_name: 'crypto_default', symbol: 'BTC/USDT', total_trades: 1 });
    // crypto_default charges fees: a round trip ends below the price move.
    expect(res.body.trades.every((trade: { fee: number }) => trade.fee > 0)).toBe(true);
    const list = await server.http('GET', '/api/backtest', { token: user.tokens.access_token });
    expect(list.body.items.map((item: { result_id: string }) => item.result_id)).toContain(res.body.result_id);
    expect((await server.http('GET', `/api/backtest/${res.body.result_id}`, { token: user.tokens.access_token })).status).toBe(200);
    expect((await server.http('GET', `/api/equity/backtest/${res.body.result_id}`, { token: user.tokens.access_token })).status).toBe(404);
    const stock = await server.http('POST', '/api/backtest/run', { token: user.tokens.access_token, body: goog });
    expect([stock.status, stock.body.code]).toEqual([422, 'INVALID_ASSET_CLASS']);
  });
});

describe('GET /api/strategy/list', () => {
  it('names the seven strategies with their parameters, defaults and bounds', async () => {
    const res = await server.http('GET', '/api/strategy/list', { token: user.tokens.access_token });
    expect(res.status).toBe(200);
    const { items } = ZStrategyList.parse(res.body);
    expect(items.map((item) => item.name)).toEqual(['buy_and_hold', 'sma_crossover', 'ema_crossover', 'rsi_reversion', 'bollinger_reversion', 'macd_crossover', 'donchian_breakout']);
    const sma = items.find((item) => item.name === 'sma_crossover')!;
    expect(sma.params.fast).toMatchObject({ default: 10 });
    expect(sma.params.slow).toMatchObject({ default: 30 });
    expect(sma.params.size).toMatchObject({ default: 1 });
    expect(sma.asset_classes).toEqual(expect.arrayContaining(['us_equity', 'kr_equity', 'crypto']));
  });
});
