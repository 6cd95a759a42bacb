// `node test/bench/backtest.ts`: the backtest engine beside a plain typed-array loop, and a
// ten-year backtest over HTTP.
//
// - Engine: sma_crossover (fast 10, slow 30, all-in, us_broker_zero) over BENCH_BT_BARS synthetic
//   daily bars (a seeded random walk), bars per second, the median of BENCH_BT_ROUNDS runs after
//   BENCH_BT_WARMUP runs of each (so both are compiled by the optimising compiler, which works in
//   the background and is slow to finish on a busy machine). The reference, in the same process
//   and run alternately with ours: a plain loop over the same typed arrays computing the same
//   two moving averages (fresh running sums), the same strict crossovers, the same next-open
//   fills with float cash and units, and the equity at every close. Ours does more per run
//   (exact fills through the simulator's fill model, drift-free averages, round trips, a
//   look-back view per bar); the goal is >= 50 % of the plain loop. Besides wall-clock time it
//   prints the main thread's CPU time per run (Linux), which other processes on a shared machine
//   disturb far less.
// - HTTP: POST /api/equity/backtest for ten years of AAPL's demo bars (about 2,500 bars),
//   BENCH_BT_REQUESTS requests one after another after a warm-up; p50 and p99 of the round trip,
//   beside the same run done in-process (the engine and metrics without HTTP, storage or bars
//   read). The goal is p50 <= 30 ms. With DATABASE_URL it runs on PostgreSQL, else on PGlite.
// - Sweep: a 100-point grid over the same ten years over HTTP, across the worker pool, the median
//   of BENCH_BT_SWEEPS sweeps after a warm-up one; its bar throughput per worker thread (100 ×
//   the bars / the sweep's wall time over HTTP / BACKTEST_WORKERS: the bars read, the runs, the
//   ranking, the storing and the answer all count) against the single in-process run's (the
//   p50 of the in-process runs above, engine + metrics: bars / its time). Goal >= 50 %. Beside
//   it, a stricter count: the same bars per CPU-second of the whole process during the sweeps
//   (every thread's: the worker's, the event loop's with the database and HTTP, the garbage
//   collector's, the bench's own HTTP client's).
import { seededRandom } from '../../server/brokers/simulator/prices.ts';
import { Decimal } from 'decimal.js';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { profileByName } from '../../server/brokers/fees.ts';
import { runEngine } from '../../server/backtest/engine.ts';
import { smaCrossover } from '../../server/backtest/strategies/sma-crossover.ts';
import type { Bars } from '../../server/backtest/types.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';

const GOAL_ENGINE_RATIO = 0.5;
const GOAL_HTTP_P50_MS = 30;
const FAST = 10;
const SLOW = 30;

const settings = {
  bars: positiveInt('BENCH_BT_BARS', 1_000_000),
  rounds: positiveInt('BENCH_BT_ROUNDS', 5),
  warmup: positiveInt('BENCH_BT_WARMUP', 3),
  requests: positiveInt('BENCH_BT_REQUESTS', 50),
  sweeps: positiveInt('BENCH_BT_SWEEPS', 5),
};

/**
 * Seeded synthetic daily bars (mulberry32) whose log price reverts slowly to 100, so a million
 * bars neither vanish nor explode; opens near the previous close, on a cent grid.
 */
const syntheticBars = (n: number): Bars => {
  const random = seededRandom(0x5eed);
  const bars = { length: n, dates: Array.from({ length: n }, () => '2000-01-01'), open: new Float64Array(n), high: new Float64Array(n), low: new Float64Array(n), close: new Float64Array(n), volume: new Float64Array(n).fill(1_000) };
  let logPrice = Math.log(100);
  for (let i = 0; i < n; i++) {
    const open = Math.round(Math.exp(logPrice + (random() - 0.5) * 0.004) * 100) / 100;
    logPrice += 0.002 * (Math.log(100) - logPrice) + (random() - 0.5) * 0.04;
    const close = Math.round(Math.exp(logPrice) * 100) / 100;
    bars.open[i] = open;
    bars.close[i] = close;
    bars.high[i] = Math.max(open, close);
    bars.low[i] = Math.min(open, close);
  }
  return bars;
};

/** The reference: the same strategy and fills as plainly as they can be written. */
const plainLoop = (bars: Bars, initialCapital: number): { equity: Float64Array; trades: number } => {
  const n = bars.length;
  const { open, close } = bars;
  const fast = new Float64Array(n).fill(Number.NaN);
  const slow = new Float64Array(n).fill(Number.NaN);
  let fastSum = 0;
  let slowSum = 0;
  for (let i = 0; i < n; i++) {
    fastSum += close[i]!;
    slowSum += close[i]!;
    if (i >= FAST) fastSum -= close[i - FAST]!;
    if (i >= SLOW) slowSum -= close[i - SLOW]!;
    if (i >= FAST - 1) fast[i] = fastSum / FAST;
    if (i >= SLOW - 1) slow[i] = slowSum / SLOW;
  }
  const equity = new Float64Array(n);
  let cash = initialCapital;
  let units = 0;
  let pending = 0;
  let trades = 0;
  for (let i = 0; i < n; i++) {
    if (pending === 1) {
      units = cash / open[i]!;
      cash = 0;
    } else if (pending === -1) {
      cash += units * open[i]!;
      units = 0;
      trades++;
    }
    pending = 0;
    equity[i] = cash + units * close[i]!;
    if (i > 0) {
      const up = fast[i - 1]! < slow[i - 1]! && fast[i]! > slow[i]!;
      const down = fast[i - 1]! > slow[i - 1]! && fast[i]! < slow[i]!;
      if (units === 0 && up && i < n - 1) pending = 1;
      else if (units > 0 && down && i < n - 1) pending = -1;
    }
  }
  if (units > 0) {
    cash += units * close[n - 1]!;
    equity[n - 1] = cash;
    trades++;
  }
  return { equity, trades };
};

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** The CPU time this thread (the main one) has used, in ms, from Linux's schedstat; NaN elsewhere. */
const threadCpuMs = (): number => {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
};

const benchEngine = () => {
  const bars = syntheticBars(settings.bars);
  const profile = profileByName('us_broker_zero')!;
  const params = smaCrossover.params.parse({ fast: FAST, slow: SLOW });
  const ours = () => runEngine({ bars, strategy: smaCrossover.create(params), size: 1, initialCapital: '10000', profile, tickSize: new Decimal('0.01'), fractional: true });
  const plain = () => plainLoop(bars, 10_000);
  // Warm-up (compiles both), then alternate.
  const oursCheck = ours();
  const plainCheck = plain();
  for (let round = 1; round < settings.warmup; round++) {
    ours();
    plain();
  }
  const times = { ours: { wall: [] as number[], cpu: [] as number[] }, plain: { wall: [] as number[], cpu: [] as number[] } };
  for (let round = 0; round < settings.rounds; round++) {
    for (const [run, into] of round % 2 === 0 ? ([[plain, times.plain], [ours, times.ours]] as const) : ([[ours, times.ours], [plain, times.plain]] as const)) {
      const cpu = threadCpuMs();
      const started = performance.now();
      run();
      into.wall.push(performance.now() - started);
      into.cpu.push(threadCpuMs() - cpu);
    }
  }
  const oursMs = median(times.ours.wall);
  const plainMs = median(times.plain.wall);
  const oursRate = settings.bars / (oursMs / 1000);
  const plainRate = settings.bars / (plainMs / 1000);
  const cpuRatio = median(times.plain.cpu) / median(times.ours.cpu);
  console.log(`Engine: sma_crossover ${FAST}/${SLOW} over ${settings.bars.toLocaleString('en-US')} synthetic bars, median of ${settings.rounds} runs each (alternating, after ${settings.warmup} of each)`);
  console.log(`  plain typed-array loop   ${fixed(plainRate / 1e6, 1).padStart(7)} M bars/s   (${fixed(plainMs, 1)} ms per run, main-thread CPU ${fixed(median(times.plain.cpu), 1)} ms; ${plainCheck.trades} round trips)`);
  console.log(`  ours (runEngine)         ${fixed(oursRate / 1e6, 1).padStart(7)} M bars/s   (${fixed(oursMs, 1)} ms per run, main-thread CPU ${fixed(median(times.ours.cpu), 1)} ms; ${oursCheck.trips.length} round trips)`);
  console.log(`  by main-thread CPU time: ours ${fixed(cpuRatio * 100, 0)} % of the plain loop's speed`);
  const lastOurs = oursCheck.equity[settings.bars - 1]!;
  const lastPlain = plainCheck.equity[settings.bars - 1]!;
  console.log(`  final equity: ours ${lastOurs.toPrecision(6)}, plain ${lastPlain.toPrecision(6)} (a whipsaw on noise; ours buys 9-decimal units and keeps exact cash, the plain loop's averages are running float sums)`);
  return { ratio: oursRate / plainRate, oursRate, plainRate, cpuRatio };
};

const benchHttp = async (cleanups: ReturnType<typeof createCleanups>['cleanups']) => {
  const { startBenchService, postJson } = await import('./service.ts');
  const { app } = await startBenchService({ cleanups, prefix: 'ts-bench-backtest-', env: { DEMO_DATA: 'true', SIM_TICK_INTERVAL_MS: '0' } });
  const username = `bench_bt_${process.pid}`;
  const password = 'bench-backtest-password';
  const registered = await postJson(`${app.url}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.text}`);
  const login = await postJson(`${app.url}/api/auth/login`, { username, password });
  const token = login.json?.access_token;
  if (typeof token !== 'string') throw new Error(`login failed: ${login.text}`);
  const bars = await app.services.marketData.read({ query: { asset_class: 'us_equity', symbol: 'AAPL' } });
  const last = bars.bars.at(-1)!.date;
  const first = `${Number(last.slice(0, 4)) - 10}${last.slice(4)}`;
  const request = { symbol: 'AAPL', asset_class: 'us_equity', strategy_name: 'sma_crossover', strategy_params: { fast: FAST, slow: SLOW }, start_date: first, end_date: last };
  const once = async () => {
    const started = performance.now();
    const res = await postJson(`${app.url}/api/equity/backtest`, request, token);
    if (res.status !== 200) throw new Error(`backtest answered ${res.status}: ${res.text}`);
    return { ms: performance.now() - started, bars: Number(res.json?.equity_curve_total) };
  };
  for (let i = 0; i < 5; i++) await once();
  const samples: number[] = [];
  let barCount = 0;
  for (let i = 0; i < settings.requests; i++) {
    const sample = await once();
    samples.push(sample.ms);
    barCount = sample.bars;
  }
  samples.sort((a, b) => a - b);
  // The same run in-process: the engine and the metrics, no HTTP, storage or bar read.
  const { computeMetrics } = await import('../../server/backtest/metrics.ts');
  const rows = bars.bars.filter((bar) => bar.date >= first && bar.date <= last);
  const typed: Bars = {
    length: rows.length,
    dates: rows.map((bar) => bar.date),
    open: Float64Array.from(rows.map((bar) => bar.open)),
    high: Float64Array.from(rows.map((bar) => bar.high)),
    low: Float64Array.from(rows.map((bar) => bar.low)),
    close: Float64Array.from(rows.map((bar) => bar.close)),
    volume: Float64Array.from(rows.map((bar) => bar.volume)),
  };
  const inProcess: number[] = [];
  for (let i = 0; i < settings.requests; i++) {
    const started = performance.now();
    const result = runEngine({ bars: typed, strategy: smaCrossover.create(smaCrossover.params.parse({ fast: FAST, slow: SLOW })), size: 1, initialCapital: '10000', profile: profileByName('us_broker_zero')!, tickSize: new Decimal('0.01'), fractional: true });
    computeMetrics({ initialCapital: 10_000, equity: result.equity, dates: typed.dates, tripPnls: result.tripPnls, firstClose: typed.close[0]!, lastClose: typed.close[typed.length - 1]!, assetClass: 'us_equity' });
    inProcess.push(performance.now() - started);
  }
  inProcess.sort((a, b) => a - b);
  console.log(`HTTP: POST /api/equity/backtest, AAPL ${first} to ${last} (${barCount} bars), ${settings.requests} requests one after another (${app.services.database.kind})`);
  console.log(`  over HTTP (bars read, run, metrics, stored, answered)   p50 ${fixed(percentile(samples, 50), 1)} ms   p99 ${fixed(percentile(samples, 99), 1)} ms`);
  console.log(`  the run alone, in-process (engine + metrics)              p50 ${fixed(percentile(inProcess, 50), 2)} ms   p99 ${fixed(percentile(inProcess, 99), 2)} ms`);
  // A 100-point sweep of the same ten years: fast 1-10 × slow 31-40, across the worker pool.
  const grid = { fast: Array.from({ length: 10 }, (_, i) => i + 1), slow: Array.from({ length: 10 }, (_, i) => i + 31) };
  const sweepBody = { ...request, strategy_params: undefined, grid, rank_by: 'sharpe_ratio' };
  // A warm-up sweep first (it starts the worker threads and compiles their code), as the single run had its warm-up.
  await postJson(`${app.url}/api/equity/backtest/sweep`, sweepBody, token);
  // The median of several, as the single run's is: one sweep's wall time on a shared machine is a single draw.
  const sweepTimes: number[] = [];
  const sweepCpuTimes: number[] = [];
  for (let i = 0; i < settings.sweeps; i++) {
    const cpuBefore = process.cpuUsage();
    const sweepStarted = performance.now();
    const swept = await postJson(`${app.url}/api/equity/backtest/sweep`, sweepBody, token);
    sweepTimes.push((performance.now() - sweepStarted) / 1000);
    const cpu = process.cpuUsage(cpuBefore);
    sweepCpuTimes.push((cpu.user + cpu.system) / 1e6);
    if (swept.status !== 200) throw new Error(`sweep answered ${swept.status}: ${swept.text}`);
  }
  const sweepSeconds = median(sweepTimes);
  const sweepCpuSeconds = median(sweepCpuTimes);
  const workers = app.services.config.BACKTEST_WORKERS;
  const singleRate = barCount / (percentile(inProcess, 50) / 1000);
  const perCoreRate = (100 * barCount) / sweepSeconds / Math.max(1, workers);
  const perCpuSecondRate = (100 * barCount) / sweepCpuSeconds;
  console.log(`Sweep: 100 points of the same ten years over HTTP, ${workers} worker thread(s), median of ${settings.sweeps} sweeps (after one)`);
  console.log(`  ${fixed(sweepSeconds * 1000, 1)} ms (fastest ${fixed(Math.min(...sweepTimes) * 1000, 1)} ms); per core ${fixed(perCoreRate / 1e6, 2)} M bars/s against the single run's ${fixed(singleRate / 1e6, 2)} M bars/s`);
  console.log(`  the whole process's CPU time per sweep ${fixed(sweepCpuSeconds * 1000, 1)} ms (every thread: HTTP both ends, the database, the worker): ${fixed(perCpuSecondRate / 1e6, 2)} M bars per CPU-second`);
  return { p50: percentile(samples, 50), sweepRatio: perCoreRate / singleRate, sweepCpuRatio: perCpuSecondRate / singleRate };
};

const { cleanups, cleanUp } = createCleanups();
const main = async () => {
  const engine = benchEngine();
  const http = await benchHttp(cleanups);
  console.log('');
  console.log(`${engine.ratio >= GOAL_ENGINE_RATIO ? 'PASS' : 'FAIL'}  engine: ours ${fixed(engine.oursRate / 1e6, 1)} M bars/s = ${fixed(engine.ratio * 100, 0)} % of the plain loop's ${fixed(engine.plainRate / 1e6, 1)} M (goal >= ${GOAL_ENGINE_RATIO * 100} %; by main-thread CPU time ${fixed(engine.cpuRatio * 100, 0)} %)`);
  console.log(`${http.p50 <= GOAL_HTTP_P50_MS ? 'PASS' : 'FAIL'}  http: a ten-year backtest p50 ${fixed(http.p50, 1)} ms (goal <= ${GOAL_HTTP_P50_MS} ms)`);
  console.log(`${http.sweepRatio >= 0.5 ? 'PASS' : 'FAIL'}  sweep: per-core throughput ${fixed(http.sweepRatio * 100, 0)} % of the single run's (goal >= 50 %; by the process's CPU time ${fixed(http.sweepCpuRatio * 100, 0)} %)`);
};
await runBench(main, { cleanUp });
