// `node test/bench/portfolio.ts`: an account's past read over REST on PostgreSQL, beside the
// order list's own read in the same run. One paper crypto account with a year of day-start
// snapshots, a reset, and BENCH_PORTFOLIO_FILLS (default 10,000) fills over four symbols, bought
// and sold in turn: GET /api/equity/performance over the year (every fill read, FIFO lots, the
// history, the broker's account and positions), GET /api/equity/activities?type=lot (the same
// lots, a page) and GET /api/equity/portfolio/history, each BENCH_PORTFOLIO_REQUESTS times one
// after another, against GET /api/equity/orders (page 1 of the same orders). The goal (issue 36):
// performance answers within a few tens of milliseconds (p50 <= 50 ms). The first request reads
// every fill; the later ones find them kept (server/portfolio/fill-cache.ts: one read of the
// fills' count and greatest id each): both are printed.
// The rows are written straight into the tables (the order path has its own bench).
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createCleanups, fixed, percentile, positiveInt, postgresAdminUrl, runBench } from './common.ts';

const GOAL_P50_MS = 50;
const SYMBOLS = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT'];
const PRICES = ['50000', '3000', '150', '600'];

const settings = {
  fills: positiveInt('BENCH_PORTFOLIO_FILLS', 10_000),
  requests: positiveInt('BENCH_PORTFOLIO_REQUESTS', 50),
};

const { cleanups, cleanUp } = createCleanups();

/** The first request (the user's fills not yet kept), then p50 and p99 of `count` one after another (after five more not counted). */
const timed = async (url: string, token: string, count: number) => {
  const times: number[] = [];
  let status = 0;
  let first = 0;
  for (let i = 0; i < count + 6; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await response.text();
    status = response.status;
    if (i === 0) first = performance.now() - started;
    if (i >= 6) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { status, first, p50: percentile(times, 50), p99: percentile(times, 99) };
};

const main = async () => {
  if (!postgresAdminUrl('portfolio', 'the reads are measured where they run in production')) return;
  const { startBenchService, postJson } = await import('./service.ts');
  const { app } = await startBenchService({ cleanups, prefix: 'ts-bench-portfolio-', env: { SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', LOG_LEVEL: 'warn' } });
  const { db, simulator } = app.services;
  for (const [i, symbol] of SYMBOLS.entries()) await simulator.setPrice({ assetClass: 'crypto', symbol, price: PRICES[i]! });

  const username = `bench_portfolio_${process.pid}`;
  const password = 'bench-portfolio-password';
  const registered = await postJson(`${app.url}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.text}`);
  const userId = (registered.json as { id: number }).id;
  const token = (await postJson(`${app.url}/api/auth/login`, { username, password })).json?.access_token as string;
  const key = await postJson(`${app.url}/api/exchange-keys`, { exchange: 'crypto_exchange', api_key: `bench-portfolio-${process.pid}`, api_secret: 's' }, token);
  if (key.status !== 201) throw new Error(`key failed: ${key.text}`);

  // A year of snapshots, the equity drifting; a reset half-way; the fills spread over the year,
  // each order filled at once: order i buys symbol i/2 mod 4 when i is even, sells it when odd.
  await db.execute(sql`insert into equity_snapshots (user_id, asset_class, mode, day, equity, cash, taken_at)
    select ${userId}, 'crypto', 'paper', current_date - d, 100000 + 1000 * sin(d / 10.0), 50000, now() - make_interval(days => d)
    from generate_series(1, 365) as d`);
  await db.execute(sql`insert into account_flows (user_id, asset_class, mode, day, kind, amount, equity_before, equity_after, at)
    values (${userId}, 'crypto', 'paper', current_date - 180, 'reset', 2500, 97500, 100000, now() - interval '180 days')`);
  const symbols = `{${SYMBOLS.map((s) => `"${s}"`).join(',')}}`;
  const prices = `{${PRICES.join(',')}}`;
  await db.execute(sql`insert into orders (user_id, client_order_id, broker_order_id, asset_class, live, broker, symbol, side, order_type, time_in_force, qty, filled_qty, avg_fill_price, status, metadata, submitted_at, updated_at)
    select ${userId}, 'bench-' || i, 'sim-bench-' || i, 'crypto', false, 'simulator', (${symbols}::text[])[1 + (i / 2) % 4],
      case when i % 2 = 0 then 'buy' else 'sell' end, 'market', 'gtc', 0.01, 0.01, (${prices}::numeric[])[1 + (i / 2) % 4], 'filled', '{}'::jsonb,
      now() - make_interval(secs => (${settings.fills} - i) * 3000), now() - make_interval(secs => (${settings.fills} - i) * 3000)
    from generate_series(0, ${settings.fills - 1}) as i`);
  await db.execute(sql`insert into order_fills (user_id, client_order_id, execution_id, qty, price, fee, tax, at)
    select user_id, client_order_id, 'bench-exec-' || client_order_id, qty, avg_fill_price, avg_fill_price * qty * 0.001, 0, submitted_at from orders where user_id = ${userId}`);
  await db.execute(sql`analyze`);

  const base = `${app.url}/api/equity`;
  const orders = await timed(`${base}/orders?asset_class=crypto`, token, settings.requests);
  const perf = await timed(`${base}/performance?asset_class=crypto`, token, settings.requests);
  const lots = await timed(`${base}/activities?asset_class=crypto&type=lot`, token, settings.requests);
  const history = await timed(`${base}/portfolio/history?asset_class=crypto`, token, settings.requests);
  for (const [name, result] of Object.entries({ orders, perf, lots, history })) if (result.status !== 200) throw new Error(`${name} answered ${result.status}`);

  console.log(`an account's past over REST on PostgreSQL: a year of snapshots, ${settings.fills} fills over ${SYMBOLS.length} symbols, ${settings.requests} requests each, one after another`);
  console.log(`  GET /api/equity/orders (page 1, the reference)      p50 ${fixed(orders.p50, 2)} ms   p99 ${fixed(orders.p99, 2)} ms`);
  console.log(`  GET /api/equity/performance (the year)              p50 ${fixed(perf.p50, 2)} ms   p99 ${fixed(perf.p99, 2)} ms   (${fixed(perf.p50 / orders.p50, 1)} x the order list; the first, every fill read: ${fixed(perf.first, 2)} ms)`);
  console.log(`  GET /api/equity/activities?type=lot (page 1)        p50 ${fixed(lots.p50, 2)} ms   p99 ${fixed(lots.p99, 2)} ms`);
  console.log(`  GET /api/equity/portfolio/history (the year)        p50 ${fixed(history.p50, 2)} ms   p99 ${fixed(history.p99, 2)} ms`);
  console.log(`${perf.p50 <= GOAL_P50_MS ? 'PASS' : 'FAIL'}  performance p50 ${fixed(perf.p50, 2)} ms (goal <= ${GOAL_P50_MS} ms: a few tens of milliseconds)`);
};

await runBench(main, { cleanUp });
