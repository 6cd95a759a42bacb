// `node test/bench/simulator.ts`: simulated fills per second through the Broker interface (place
// a market order, wait for its fill event: the accepted order, its fill, fill row, position and
// cash each written in their transaction) beside a plain in-memory loop doing the same fill
// arithmetic (computeFill + applyFill on decimals in a Map), in the same run and process.
//
// Settings: BENCH_SIM_ORDERS (measured orders, default 2000), BENCH_SIM_WARMUP (default 100),
// BENCH_SIM_SECONDS (a bound on the measured phase, default 60: it stops early and says so).
// DATABASE_URL selects Postgres (a fresh database, dropped afterwards); without it, PGlite in a
// temp dir. Exit code 0 whatever the figures (a report, not a test); non-zero on a crash.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { openMigratedDatabase } from '../../server/app.ts';
import { defaultProfileFor } from '../../server/brokers/fees.ts';
import { applyFill, computeFill, type Position } from '../../server/brokers/fills.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { createSimulator } from '../../server/brokers/simulator/index.ts';
import { systemClock } from '../../server/clock.ts';
import { loadConfig } from '../../server/config.ts';
import { startChangeFeed } from '../../server/events/changes.ts';
import { createInstruments } from '../../server/instruments/instruments.ts';
import { findInstrument } from '../../server/instruments/queries.ts';
import { createLogger } from '../../server/observability/logger.ts';
import { createTestDatabase } from '../support/server.ts';
import { positiveInt } from './common.ts';


const settings = {
  orders: positiveInt('BENCH_SIM_ORDERS', 2_000),
  warmup: positiveInt('BENCH_SIM_WARMUP', 100),
  seconds: positiveInt('BENCH_SIM_SECONDS', 60),
};
const SYMBOL = 'BTC/USDT';
const PRICE = '91250.37';
const QTY = '0.001';
/** The reference loop runs at least this long, so its figure is not a rounding error. */
const REFERENCE_MIN_MS = 500;

const cleanups: Array<() => Promise<void> | void> = [];
const cleanUp = async () => {
  for (const step of cleanups.reverse()) {
    try {
      await step();
    } catch (error) {
      console.error('cleanup failed:', error);
    }
  }
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

const main = async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-bench-sim-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const testDatabase = await createTestDatabase();
  cleanups.push(() => testDatabase.drop());
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dir,
    DATABASE_URL: testDatabase.url,
    LOG_LEVEL: 'silent',
    AUTH_SECRET_KEY: randomBytes(48).toString('base64url'),
    ENCRYPTION_SALT: randomBytes(48).toString('base64url'),
  });
  const logger = createLogger('silent');
  const clock = systemClock();
  const database = await openMigratedDatabase(config);
  cleanups.push(() => database.close());
  const changes = await startChangeFeed(database, logger);
  cleanups.push(() => changes.close());
  const { db } = database;
  await createInstruments({ db, clock, logger }).seedIfEmpty();

  const sim = await createSimulator({
    db,
    clock,
    logger,
    changes,
    initialCash: { crypto: config.SIM_INITIAL_CASH_USDT, us_equity: config.SIM_INITIAL_CASH_USD, kr_equity: config.SIM_INITIAL_CASH_KRW },
    // The walk is off: the figure is the order path, not the loop.
    tickIntervalMs: 0,
    liquidityLotsPerTick: 0,
    marketHours: 'enforce',
  });
  cleanups.push(() => sim.stop());
  await sim.setPrice({ assetClass: 'crypto', symbol: SYMBOL, price: PRICE });
  const broker = sim.brokerFor({ userId: 1, assetClass: 'crypto', mode: 'paper' });

  // Fill events through the Broker's own stream; a fill that lands before its waiter is kept.
  const fills = new Map<string, TBrokerEvent>();
  const waiters = new Map<string, (event: TBrokerEvent) => void>();
  const controller = new AbortController();
  cleanups.push(() => controller.abort());
  const stream = broker.events(controller.signal);
  void (async () => {
    for await (const event of stream) {
      if (event.type !== 'fill' && event.type !== 'rejected') continue;
      const waiter = waiters.get(event.broker_order_id);
      if (waiter) waiter(event);
      else fills.set(event.broker_order_id, event);
    }
  })();
  const filled = (brokerOrderId: string) =>
    new Promise<TBrokerEvent>((resolve) => {
      const early = fills.get(brokerOrderId);
      if (early) {
        fills.delete(brokerOrderId);
        resolve(early);
      } else {
        waiters.set(brokerOrderId, (event) => {
          waiters.delete(brokerOrderId);
          resolve(event);
        });
      }
    });

  let sequence = 0;
  /** One market order, buy and sell in turn so cash and position stay level; returns ms from place to fill. */
  const roundTrip = async (): Promise<number> => {
    const n = sequence++;
    const started = performance.now();
    const order = await broker.placeOrder({ clientOrderId: `bench-${n}`, symbol: SYMBOL, side: n % 2 === 0 ? 'buy' : 'sell', qty: QTY, orderType: 'market', timeInForce: 'gtc' });
    const event = await filled(order.brokerOrderId);
    if (event.type !== 'fill') throw new Error(`order ${n} ended ${event.type}: ${event.reason}`);
    return performance.now() - started;
  };

  console.log(`database: ${database.kind}${database.kind === 'postgres' ? ' (DATABASE_URL, fresh database)' : ' (temp dir)'}; ${settings.warmup} warm-up orders, then ${settings.orders} measured (bound ${settings.seconds} s)`);
  for (let i = 0; i < settings.warmup; i++) await roundTrip();

  const latencies: number[] = [];
  const deadline = performance.now() + settings.seconds * 1000;
  const simStart = performance.now();
  while (latencies.length < settings.orders && performance.now() < deadline) latencies.push(await roundTrip());
  const simMs = performance.now() - simStart;
  if (latencies.length < settings.orders) console.log(`stopped at the ${settings.seconds} s bound after ${latencies.length} orders`);
  // An even count leaves the position where it started; the books must agree with the fills.
  const account = await broker.account();

  // The reference: the same fills, the same arithmetic, on decimals in a Map.
  const instrument = (await findInstrument(db, { assetClass: 'crypto', symbol: SYMBOL }))!;
  const profile = defaultProfileFor('crypto');
  const tickSize = new ExactDecimal(instrument.tickSize);
  const referencePrice = new ExactDecimal(PRICE);
  const qty = new ExactDecimal(QTY);
  const positions = new Map<string, Position>();
  let cash = new ExactDecimal(config.SIM_INITIAL_CASH_USDT);
  let referenceFills = 0;
  const refStart = performance.now();
  do {
    for (let i = 0; i < latencies.length; i++) {
      const fill = computeFill({ side: i % 2 === 0 ? 'buy' : 'sell', qty, referencePrice, tickSize, profile });
      positions.set(SYMBOL, applyFill(positions.get(SYMBOL), fill));
      cash = cash.plus(fill.cashDelta);
      referenceFills++;
    }
  } while (performance.now() - refStart < REFERENCE_MIN_MS);
  const refMs = performance.now() - refStart;

  const simRate = (latencies.length / simMs) * 1000;
  const refRate = (referenceFills / refMs) * 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log('');
  console.log(`simulator (Broker interface, ${database.kind}): ${latencies.length} fills in ${(simMs / 1000).toFixed(2)} s = ${simRate.toFixed(0)} fills/s; place→fill p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`);
  console.log(`in-memory loop (computeFill + applyFill, Map): ${referenceFills} fills in ${(refMs / 1000).toFixed(2)} s = ${refRate.toFixed(0)} fills/s`);
  console.log(`ratio simulator / in-memory = ${(simRate / refRate).toFixed(5)} (the in-memory loop is ${(refRate / simRate).toFixed(0)}× faster: the rest is the database)`);
  console.log(`books after the run: cash ${account.cash} USDT, equity ${account.equity} USDT (started at ${config.SIM_INITIAL_CASH_USDT})`);
};

try {
  await main();
} catch (error) {
  console.error('bench crashed:', error);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
