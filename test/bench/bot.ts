// `node test/bench/bot.ts`: the bot's latency from a price tick to the `trade` frame of the order
// it causes, beside the REST baseline of the same service in the same run.
//
// - Ours: one user's bot runs sma_crossover (fast 1, slow 2) on BTC/USDT 1-minute bars. The
//   service's clock is a manual one: each sample moves it to a new minute and sets a price through
//   the simulator (as POST /api/admin/sim/prices does, without the HTTP): that tick closes the bar
//   before it, whose close the previous sample's second tick set, zigzagging so that every closed
//   bar crosses (a buy, then a sell, ...). Measured per sample: from just before the price is set
//   to the moment the bot's `trade` frame for it has been read off the user's /ws/live socket: the
//   tick's NOTIFY, the bar closed and stored, the strategy run, the signal recorded (bar, frame,
//   audit), the account or position read, the order through the five gates, the simulator's fill,
//   the fill recorded, the outbox read and the frame sent. Fills are at the opening ticks, priced
//   so that each round trip gains a little (the daily loss bound never refuses a buy).
// - The order path alone: the same user's market order of 0.01 BTC over REST (buys and sells in
//   turn), from sending the request to reading its `trade` frame: what the bot's trade costs
//   without the bot.
// - Baseline: GET /api/auth/me the same number of times, one after another.
// The three alternate in halves, so drift on a shared machine falls on both. The WebSocket client runs
// in this process (as the HTTP client does for the baseline). With DATABASE_URL it runs on
// PostgreSQL (a fresh database), else on PGlite.
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { manualClock } from '../../server/clock.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';

const settings = { samples: positiveInt('BENCH_BOT_SAMPLES', 100), warmup: positiveInt('BENCH_BOT_WARMUP', 10) };
const { cleanups, cleanUp } = createCleanups();

const main = async () => {
  const { startBenchService, benchTrader, postJson } = await import('./service.ts');
  // Ticks come at :05 (a bar's opening tick) and :35 (its closing tick) of each minute.
  const clock = manualClock('2026-03-10T00:00:35.000Z');
  const { app } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-bot-',
    clock,
    // The clock moves a minute per sample: tokens live a day (the setting's maximum).
    env: { SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'true', RATE_LIMIT_ORDERS_PER_MIN: '1000000', AUTH_ACCESS_TOKEN_TTL_MIN: '1440' },
  });
  const { token } = await benchTrader(app, 'bench_bot');
  const started = await postJson(`${app.url}/api/bot/start`, { asset_class: 'crypto', symbols: ['BTC/USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } }, token);
  if (started.status !== 200) throw new Error(`bot start answered ${started.status} ${started.text}`);
  const socket = new WebSocket(`${app.url.replace(/^http/, 'ws')}/ws/live?token=${token}`);
  cleanups.push({ what: 'socket', run: () => socket.terminate() });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let waiting: ((frame: { side: string }) => void) | undefined;
  socket.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { type: string; side: string };
    if (frame.type === 'trade') waiting?.(frame);
  });
  // Wait until this instance's runner holds the bot.
  const deadline = performance.now() + 30_000;
  while (!app.services.botRunner.held().length && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!app.services.botRunner.held().length) throw new Error('the bot did not start running');

  const price = (value: number) => app.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: String(value) });
  // Closes alternate 45,000 / 55,000; a buy fills at an open of 49,500, a sell at 50,500.
  let up = true;
  // Bars closing at 50,000, 45,000 and 55,000: the first sample's opening tick buys.
  for (const [open, close] of [[50_000, 50_000], [50_000, 45_000], [50_000, 55_000]] as const) {
    clock.advance(30_000);
    await price(open);
    clock.advance(30_000);
    await price(close);
  }
  const sample = async (): Promise<number> => {
    clock.advance(30_000);
    const side = up ? 'buy' : 'sell';
    const traded = new Promise<{ side: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${side} trade frame within 10 s`)), 10_000);
      waiting = (frame) => {
        clearTimeout(timer);
        resolve(frame);
      };
    });
    const t0 = performance.now();
    await price(up ? 49_500 : 50_500);
    const frame = await traded;
    const elapsed = performance.now() - t0;
    waiting = undefined;
    if (frame.side !== side) throw new Error(`expected a ${side} trade, got ${frame.side}`);
    await app.services.botRunner.idle();
    // The bar's close: down after a buy (a sell follows), up after a sell.
    clock.advance(30_000);
    await price(up ? 45_000 : 55_000);
    up = !up;
    return elapsed;
  };
  // The order path alone: the same user's market order over REST, from the request to its trade frame.
  let manualBuy = true;
  const manual = async () => {
    const side = manualBuy ? 'buy' : 'sell';
    const traded = new Promise<{ side: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no manual ${side} trade frame within 10 s`)), 10_000);
      waiting = (frame) => {
        clearTimeout(timer);
        resolve(frame);
      };
    });
    const t0 = performance.now();
    const res = await postJson(`${app.url}/api/equity/orders`, { asset_class: 'crypto', symbol: 'BTC/USDT', side, qty: 0.01, order_type: 'market' }, token);
    if (res.status !== 201) throw new Error(`manual order answered ${res.status} ${res.text}`);
    await traded;
    const elapsed = performance.now() - t0;
    waiting = undefined;
    manualBuy = !manualBuy;
    return elapsed;
  };
  const me = async () => {
    const t0 = performance.now();
    const response = await fetch(`${app.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    await response.text();
    if (response.status !== 200) throw new Error(`/api/auth/me answered ${response.status}`);
    return performance.now() - t0;
  };
  const timed = async (call: () => Promise<number>, n: number) => {
    const samples: number[] = [];
    for (let i = 0; i < n; i++) samples.push(await call());
    return samples;
  };
  await timed(sample, settings.warmup);
  await timed(me, settings.warmup);
  const half = Math.ceil(settings.samples / 2);
  const ours: number[] = [];
  const orderPath: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < 2; round++) {
    ours.push(...(await timed(sample, half)));
    // Between bars, with the bot flat or long: manual buys and sells in pairs leave it as it was.
    orderPath.push(...(await timed(manual, half - (half % 2))));
    baseline.push(...(await timed(me, half)));
  }
  for (const list of [ours, orderPath, baseline]) list.sort((a, b) => a - b);
  console.log(`Bot: price tick -> bar closed -> signal -> order (five gates) -> fill -> trade frame on /ws/live, ${ours.length} trades one after another (${app.services.database.kind})`);
  console.log(`  bot tick -> trade frame        p50 ${fixed(percentile(ours, 50), 1)} ms   p99 ${fixed(percentile(ours, 99), 1)} ms`);
  console.log(`  REST order -> trade frame      p50 ${fixed(percentile(orderPath, 50), 1)} ms   p99 ${fixed(percentile(orderPath, 99), 1)} ms   (POST /api/equity/orders, market, ${orderPath.length} one after another)`);
  console.log(`  REST baseline GET /api/auth/me p50 ${fixed(percentile(baseline, 50), 1)} ms   p99 ${fixed(percentile(baseline, 99), 1)} ms`);
};

await runBench(main, { cleanUp });
