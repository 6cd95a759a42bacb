// `node test/bench/trailing.ts`: resting trailing stops re-evaluated on a price tick, beside the
// simulator's own tick-to-fill of plain resting stops in the same run. BENCH_TRAIL_USERS paper
// crypto accounts each buy BENCH_TRAIL_PER_USER lots of one bench symbol and rest as many
// trailing sell stops of one lot (trail 2 %) on it, and the same again as plain sell stops on a
// second symbol. Then, each a single operator price (Simulator.setPrice, the walk off):
//   A "follow"  a new high (+1 %): every trailing stop moves its stop (a `replaced` event);
//   B "trigger" a fall through every stop: every trailing stop triggers and fills (a `fill` event);
//   reference   the plain stops' symbol falls through them: each fills.
// Each order's time runs from the setPrice call to its event on the simulator's hub; p50/p99/max
// and the time until the last are printed, with the longest the event loop was held during the
// tick (a 10 ms heartbeat's longest gap). Placing the orders is setup: timed, not measured.
//
// Settings: BENCH_TRAIL_USERS (default 1000), BENCH_TRAIL_PER_USER (default 10),
// BENCH_TRAIL_SECONDS (a bound on each phase, default 120: it stops waiting and says so; PGlite
// runs a whole tick without yielding, so there it can only say so after the tick has ended).
// DATABASE_URL selects Postgres (a fresh database, dropped afterwards); without it, PGlite in a
// temp dir. Exit code 0 whatever the figures (a report, not a test); non-zero on a crash.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { openMigratedDatabase } from '../../server/app.ts';
import { createSimulator } from '../../server/brokers/simulator/index.ts';
import type { Broker } from '../../server/brokers/types.ts';
import { systemClock } from '../../server/clock.ts';
import { loadConfig } from '../../server/config.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { startChangeFeed } from '../../server/events/changes.ts';
import { upsertInstrument } from '../../server/instruments/queries.ts';
import { createLogger } from '../../server/observability/logger.ts';
import { createTestDatabase } from '../support/server.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';

const settings = {
  users: positiveInt('BENCH_TRAIL_USERS', 1_000),
  perUser: positiveInt('BENCH_TRAIL_PER_USER', 10),
  seconds: positiveInt('BENCH_TRAIL_SECONDS', 120),
};
/** Users set up at once: each places its orders one after another, so this many placements are in flight. */
const CONCURRENCY = 32;
// Two bench instruments of their own, so one phase's price never meets the other's orders.
const TRAILING = 'BENCHTRAIL/USDT';
const PLAIN = 'BENCHSTOP/USDT';
const START = '100';
const HIGH = '101';
const LOW = '95';
const TRAIL_PERCENT = '2';
/** The plain stops rest just below the starting price; LOW is through both kinds. */
const PLAIN_STOP = '99.5';
const TICK = '0.01';
/** A sell trail's stop from HIGH, onto the cent downwards as the broker puts it: what phase A should move every stop to. */
const MOVED_STOP = new ExactDecimal(HIGH).times(new ExactDecimal(100).minus(TRAIL_PERCENT)).dividedBy(100).toDecimalPlaces(2, ExactDecimal.ROUND_DOWN).toFixed();

const { cleanups, cleanUp } = createCleanups();

/** The work's value, or undefined when `ms` passes first (the timer is cleared either way). */
const within = <T>(work: Promise<T>, ms: number): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([work, bound]).finally(() => clearTimeout(timer));
};

interface PhaseResult {
  /** ms from the setPrice call to each order's expected event, ascending. */
  times: number[];
  /** Orders that ended some other way (canceled, rejected), or moved to another stop than expected. */
  otherwise: number;
  /** ms until setPrice returned (it matches the symbol's orders before it does); undefined at the bound. */
  returned: number | undefined;
  /** The longest the event loop was held during the phase, ms: a timer (the bound's too) waits that long. */
  loopHeld: number;
}

const main = async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-bench-trail-'));
  cleanups.push({ what: 'temp dir', run: () => rmSync(dir, { recursive: true, force: true }) });
  const testDatabase = await createTestDatabase();
  cleanups.push({ what: 'test database', run: () => testDatabase.drop() });
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dir,
    DATABASE_URL: testDatabase.url,
    LOG_LEVEL: 'silent',
    SIM_TICK_INTERVAL_MS: '0',
    AUTH_SECRET_KEY: randomBytes(48).toString('base64url'),
    ENCRYPTION_SALT: randomBytes(48).toString('base64url'),
  });
  const logger = createLogger('silent');
  const clock = systemClock();
  const database = await openMigratedDatabase(config);
  cleanups.push({ what: 'database', run: () => database.close() });
  const changes = await startChangeFeed(database, logger);
  cleanups.push({ what: 'change feed', run: () => changes.close() });
  const { db } = database;

  const sim = await createSimulator({
    db,
    clock,
    logger,
    changes,
    initialCash: { crypto: config.SIM_INITIAL_CASH_USDT, us_equity: config.SIM_INITIAL_CASH_USD, kr_equity: config.SIM_INITIAL_CASH_KRW },
    // The walk is off: prices move only when the bench sets them, so each phase is one tick.
    tickIntervalMs: 0,
    liquidityLotsPerTick: 0,
    marketHours: 'enforce',
  });
  cleanups.push({ what: 'simulator', run: () => sim.stop() });
  for (const [n, symbol] of [TRAILING, PLAIN].entries()) {
    await upsertInstrument(db, {
      assetClass: 'crypto',
      symbol,
      exchange: 'BINANCE',
      currency: 'USDT',
      name: `Trailing bench ${n + 1}`,
      referencePrice: START,
      tickRule: 'fixed',
      tickSize: TICK,
      lotSize: '1',
      fractional: false,
      at: clock.now(),
    });
    await sim.setPrice({ assetClass: 'crypto', symbol, price: START });
  }

  // Every account's events from the hub, handed to the phase under way.
  let watch: ((event: TBrokerEvent) => void) | undefined;
  cleanups.push({ what: 'event listener', run: sim.onEvent((event) => watch?.(event)) });
  // A tick that outlived its bound is still matching: it finishes (bounded) before the books close.
  let sweeping: Promise<unknown> | undefined;
  cleanups.push({
    what: 'the last tick',
    run: async () => {
      if (sweeping && (await within(sweeping.then(() => true), settings.seconds * 1000)) === undefined) console.log(`the last tick was still matching ${settings.seconds} s after its bound; closing under it`);
    },
  });

  console.log(
    `database: ${database.kind}${database.kind === 'postgres' ? ' (DATABASE_URL, fresh database)' : ' (temp dir)'}; ${settings.users} users × ${settings.perUser} trailing sell stops (trail ${TRAIL_PERCENT} %) on ${TRAILING}, as many plain sell stops on ${PLAIN}; bound ${settings.seconds} s per phase`,
  );

  // Setup: per user, a market buy of each symbol (filled in its placement's transaction, so the
  // sells that follow find the position), then the stops of one lot each.
  const trailingIds = new Set<string>();
  const plainIds = new Set<string>();
  const qty = String(settings.perUser);
  const setUpUser = async (userId: number) => {
    const broker: Broker = sim.brokerFor({ userId, assetClass: 'crypto', mode: 'paper' });
    for (const symbol of [TRAILING, PLAIN]) await broker.placeOrder({ clientOrderId: `buy-${symbol}-${userId}`, symbol, side: 'buy', qty, orderType: 'market', timeInForce: 'gtc' });
    for (let i = 0; i < settings.perUser; i++) {
      const trailing = await broker.placeOrder({ clientOrderId: `trail-${userId}-${i}`, symbol: TRAILING, side: 'sell', qty: '1', orderType: 'trailing_stop', timeInForce: 'gtc', metadata: { trail_percent: TRAIL_PERCENT } });
      trailingIds.add(trailing.brokerOrderId);
      const plain = await broker.placeOrder({ clientOrderId: `stop-${userId}-${i}`, symbol: PLAIN, side: 'sell', qty: '1', orderType: 'stop', stopPrice: PLAIN_STOP, timeInForce: 'gtc' });
      plainIds.add(plain.brokerOrderId);
    }
  };
  const setupStart = performance.now();
  let nextUser = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, settings.users) }, async () => {
      while (nextUser < settings.users) await setUpUser(++nextUser);
    }),
  );
  await sim.idle();
  const setupMs = performance.now() - setupStart;
  const placements = settings.users * 2 * (1 + settings.perUser);
  console.log(`setup: ${placements} orders placed (${settings.users * 2} market buys, ${trailingIds.size} trailing and ${plainIds.size} plain stops) in ${fixed(setupMs / 1000, 1)} s, ${CONCURRENCY} users at a time = ${fixed((placements / setupMs) * 1000)} placements/s`);

  /** One tick of `symbol` to `price`; waits for each of `ids` to see an event of `type` (a `replaced` to `stopPrice`, when given). */
  const phase = async (symbol: string, price: string, ids: ReadonlySet<string>, type: 'replaced' | 'fill', stopPrice?: string): Promise<PhaseResult> => {
    const times: number[] = [];
    const seen = new Set<string>();
    let otherwise = 0;
    const started = performance.now();
    // A heartbeat: the longest gap between its beats (the last to the end included) is the
    // longest the event loop was held, which is also how late the bound's timer can be.
    let lastBeat = started;
    let loopHeld = 0;
    const beat = setInterval(() => {
      loopHeld = Math.max(loopHeld, performance.now() - lastBeat);
      lastBeat = performance.now();
    }, 10);
    watch = (event) => {
      if (!ids.has(event.broker_order_id) || seen.has(event.broker_order_id)) return;
      if (event.type === type && (stopPrice === undefined || event.stop_price === stopPrice)) times.push(performance.now() - started);
      else if (event.type === 'open' || event.type === 'accepted') return;
      else otherwise++;
      seen.add(event.broker_order_id);
    };
    // setPrice matches every resting order of the symbol before it returns, and each order's
    // events reach the hub as its own transaction commits: once it returns, every event is in.
    const tick = sim.setPrice({ assetClass: 'crypto', symbol, price }).then(() => performance.now() - started);
    sweeping = tick;
    const returned = await within(tick, settings.seconds * 1000);
    watch = undefined;
    clearInterval(beat);
    loopHeld = Math.max(loopHeld, performance.now() - lastBeat);
    return { times: times.sort((a, b) => a - b), otherwise, returned, loopHeld };
  };

  const report = (label: string, what: string, ids: ReadonlySet<string>, { times, otherwise, returned, loopHeld }: PhaseResult) => {
    const last = times.at(-1) ?? Number.NaN;
    console.log(`${label}: ${times.length} of ${ids.size} ${what}${otherwise > 0 ? `, ${otherwise} otherwise` : ''}`);
    console.log(`  tick→${what === 'moved' ? 'replaced' : 'fill'} p50 ${fixed(percentile(times, 50), 1)} ms, p99 ${fixed(percentile(times, 99), 1)} ms, max ${fixed(last, 1)} ms; all ${what} after ${fixed(last / 1000, 2)} s (${fixed(last / Math.max(1, times.length), 3)} ms per order)`);
    if (returned === undefined) console.log(`  stopped waiting at the ${settings.seconds} s bound: the tick was still matching`);
    else console.log(`  setPrice returned after ${fixed(returned / 1000, 2)} s${returned > settings.seconds * 1000 ? `, past the ${settings.seconds} s bound: the event loop was held, so waiting could not stop` : ''}`);
    console.log(`  event loop held at most ${fixed(loopHeld, 0)} ms at a time during the tick`);
  };

  console.log('');
  const follow = await phase(TRAILING, HIGH, trailingIds, 'replaced', MOVED_STOP);
  report(`trailing stops, A follow (${START} → ${HIGH}, each stop to ${MOVED_STOP})`, 'moved', trailingIds, follow);
  // A phase that ran past its bound leaves its tick matching: the next would interleave with it.
  const trigger = follow.returned === undefined ? undefined : await phase(TRAILING, LOW, trailingIds, 'fill');
  if (trigger) report(`trailing stops, B trigger (${HIGH} → ${LOW})`, 'filled', trailingIds, trigger);
  else console.log('trailing stops, B trigger: skipped (A ran past its bound)');
  const plain = trigger?.returned === undefined ? undefined : await phase(PLAIN, LOW, plainIds, 'fill');
  if (plain) report(`plain stops, reference (${START} → ${LOW}, stops at ${PLAIN_STOP})`, 'filled', plainIds, plain);
  else console.log('plain stops, reference: skipped (an earlier phase ran past its bound)');

  const trailingP99 = trigger ? percentile(trigger.times, 99) : Number.NaN;
  const plainP99 = plain ? percentile(plain.times, 99) : Number.NaN;
  console.log('');
  console.log(`trailing tick-to-trigger p99 ${fixed(trailingP99, 1)} ms beside plain stop tick-to-fill p99 ${fixed(plainP99, 1)} ms (ratio ${fixed(trailingP99 / plainP99, 2)})`);
};

await runBench(main, { cleanUp });
