// `node test/bench/webhooks.ts`: a signal webhook's call to its order accepted, beside REST order
// placement (POST /api/equity/orders, the same order) measured in the same run, with many users.
//
// Each of BENCH_WH_USERS users (default 16) is made as a client makes one (register, log in, a
// crypto key) and gets a paper hook. Closed loop: one client per user, each sending its next
// request when its last one is done, crypto market buys of 0.0001 BTC (each a client order id or
// an alert id of its own). Measured time alternates between the targets (REST, hooks, hooks, REST,
// ... BENCH_WH_ROUNDS slices each of BENCH_WH_ORDERS orders), after a warm-up of each, so neither
// runs on a colder database or a colder JIT. Figures, p50 and p99:
// - REST: the request until its 201 (the broker has accepted the order);
// - hook answer: the call until its 202 (the signal is written; the order is not placed yet);
// - hook to accepted: the call until the signal records its order as accepted (its placement,
//   through the same order service, after the 202), seen by the signals area's onSettled hook.
// The clients run in this process beside the service (a few seconds of load: no child process is
// worth its start-up here); both targets share that handicap. PostgreSQL when DATABASE_URL is set
// (an admin URL: a fresh database is made and dropped), else PGlite in a temp dir. The exit code is
// 0 whatever the figures (a report, not a test); non-zero on a crash.
import { performance } from 'node:perf_hooks';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';

const settings = {
  users: positiveInt('BENCH_WH_USERS', 16),
  orders: positiveInt('BENCH_WH_ORDERS', 128),
  rounds: positiveInt('BENCH_WH_ROUNDS', 2),
  warmup: positiveInt('BENCH_WH_WARMUP', 32),
};
const ORDER = { symbol: 'BTC/USDT', side: 'buy', qty: 0.0001 } as const;
/** A bound on one settlement: a signal not settled by then counts as this long and the bench says so. */
const SETTLE_TIMEOUT_MS = 30_000;

const { cleanups, cleanUp } = createCleanups();

interface Samples {
  rest: number[];
  hookAnswer: number[];
  hookAccepted: number[];
  refused: number;
  timedOut: number;
}

const main = async () => {
  const { startBenchService, benchTrader, postJson } = await import('./service.ts');
  const { app } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-wh-',
    env: { SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_ORDERS_PER_MIN: '1000000', SIGNAL_WEBHOOK_CALLS_PER_MIN: '1000000' },
  });
  const users: { token: string; hookUrl: string }[] = [];
  for (let i = 0; i < settings.users; i++) {
    const { token } = await benchTrader(app, `bench_wh${i}`);
    const hook = await postJson(`${app.url}/api/signals/webhooks`, { name: `bench ${i}`, asset_class: 'crypto' }, token);
    if (hook.status !== 201) throw new Error(`hook creation failed: ${hook.status} ${hook.text}`);
    users.push({ token, hookUrl: `${app.url}${String(hook.json?.url)}` });
  }

  // Signals settled in this process, by id, with the instant each was: the placement may end
  // before its call's client has read the 202, so the instant is taken where it ends, not later.
  interface Settled {
    outcome: string;
    at: number;
  }
  const waiting = new Map<string, (settled: Settled) => void>();
  const settledEarly = new Map<string, Settled>();
  app.services.signals.onSettled(({ id, outcome }) => {
    const settled = { outcome, at: performance.now() };
    const wake = waiting.get(id);
    if (wake) wake(settled);
    else settledEarly.set(id, settled);
  });
  const settlementOf = (id: string) => {
    const early = settledEarly.get(id);
    if (early) {
      settledEarly.delete(id);
      return Promise.resolve(early);
    }
    return new Promise<Settled>((resolve) => {
      const timer = setTimeout(() => resolve({ outcome: 'timeout', at: performance.now() }), SETTLE_TIMEOUT_MS);
      waiting.set(id, (settled) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(settled);
      });
    });
  };

  let sent = 0;
  const restOrder = async (user: (typeof users)[number], into: Samples) => {
    const started = performance.now();
    const answer = await postJson(`${app.url}/api/equity/orders`, { ...ORDER, asset_class: 'crypto', order_type: 'market', client_order_id: `bench-rest-${process.pid}-${++sent}` }, user.token);
    into.rest.push(performance.now() - started);
    if (answer.status !== 201) into.refused++;
  };
  const hookOrder = async (user: (typeof users)[number], into: Samples) => {
    const started = performance.now();
    const answer = await postJson(user.hookUrl, { ...ORDER, alert_id: `bench-${process.pid}-${++sent}` });
    into.hookAnswer.push(performance.now() - started);
    const signalId = answer.json?.signal_id;
    if (answer.status !== 202 || typeof signalId !== 'string') {
      into.refused++;
      return;
    }
    const { outcome, at } = await settlementOf(signalId);
    into.hookAccepted.push(at - started);
    if (outcome === 'timeout') into.timedOut++;
    else if (outcome !== 'accepted') into.refused++;
  };

  /** `count` orders through `send`, one client per user, each sending its next when its last is done. */
  const slice = async (send: typeof restOrder, count: number, into: Samples) => {
    let left = count;
    await Promise.all(
      users.map(async (user) => {
        while (left > 0) {
          left--;
          await send(user, into);
        }
      }),
    );
    await app.services.signals.idle();
    await app.services.simulator.idle();
    await app.services.orders.idle();
  };

  const fresh = (): Samples => ({ rest: [], hookAnswer: [], hookAccepted: [], refused: 0, timedOut: 0 });
  await slice(restOrder, settings.warmup, fresh());
  await slice(hookOrder, settings.warmup, fresh());
  const measured = fresh();
  const started = performance.now();
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? [restOrder, hookOrder] : [hookOrder, restOrder];
    for (const send of order) await slice(send, settings.orders, measured);
  }
  const seconds = (performance.now() - started) / 1000;

  const line = (name: string, samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return `  ${name.padEnd(36)} p50 ${fixed(percentile(sorted, 50), 2).padStart(7)} ms   p99 ${fixed(percentile(sorted, 99), 2).padStart(7)} ms   (${sorted.length} orders)`;
  };
  console.log(`signal webhooks beside REST orders: ${settings.users} users, one client each, ${app.services.database.kind}, ${fixed(seconds, 1)} s measured`);
  console.log(line('REST POST /api/equity/orders → 201', measured.rest));
  console.log(line('hook POST /hooks/{token} → 202', measured.hookAnswer));
  console.log(line('hook call → order accepted', measured.hookAccepted));
  const restP50 = percentile([...measured.rest].sort((a, b) => a - b), 50);
  const hookP50 = percentile([...measured.hookAccepted].sort((a, b) => a - b), 50);
  console.log(`  a hook's order is accepted ${fixed(hookP50 - restP50, 2)} ms after a REST order would be, at the median (the 202, then the placement)`);
  if (measured.refused + measured.timedOut > 0) console.log(`  not accepted: ${measured.refused} refused, ${measured.timedOut} not settled within ${SETTLE_TIMEOUT_MS / 1000} s`);
};

await runBench(main, { cleanUp });
