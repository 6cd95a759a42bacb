// `node test/bench/emulator.ts`: the order emulator (DESIGN §6 "Advanced orders") at scale, beside
// the ccxt adapter's stream-to-frame figure in the same run. A BROKER_MODE=real service and the
// fake Binance on 127.0.0.1 (which holds no trailing stop, so the emulator holds them, and whose
// market stream carries every setPrice as a trade): BENCH_EMU_USERS users (default 100), each
// with its own exchange account, place BENCH_EMU_STOPS trailing sells between them (default 1,000;
// trail_price 10, 20, ... so each user's stops sit on one level each, 10 USDT apart under 50000).
// Then one quote per level, each reaching that level's stop of every user at once:
//
// - quote to trigger: from the fake sending the quote on its market stream to the trigger's market
//   order (`<id>.tr`) arriving at the fake (the account's trade stream through ccxt, the watch,
//   the trigger's transaction with its `triggered` event, the order to the exchange), p50/p99/max;
// - stream event to frame, measured as test/bench/brokers.ts measures it (fill-latency.ts): market
//   orders of one more user one at a time, from the fake sending the fill on its user stream to
//   our `fill` frame on /ws/equity/orders.
//
// Every quote is waited for until its triggers all came (BENCH_EMU_SECONDS a level at most, default
// 60; then it says so). PASS when every trigger sent its order exactly once and every order
// ended filled; the latencies are INFO (no goal is set). On PGlite unless DATABASE_URL is set.
// Exit code 0 whatever the figures; non-zero on a crash.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { and, count, eq } from 'drizzle-orm';
import { EMULATED_CHILD_SUFFIX } from '../../contracts/orders.ts';
import { clientOrderIdRuleOf, toExchangeClientOrderId } from '../../server/brokers/ccxt/index.ts';
import { orders } from '../../server/db/schema/index.ts';
import { startFakeBinance } from '../../server/fakes/binance.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench, sleep } from './common.ts';
import { benchTrader, measureMarketOrders, streamToFrameLine, type Venue } from './fill-latency.ts';
import { postJson, startBenchService } from './service.ts';

const settings = {
  users: positiveInt('BENCH_EMU_USERS', 100),
  stops: positiveInt('BENCH_EMU_STOPS', 1_000),
  seconds: positiveInt('BENCH_EMU_SECONDS', 60),
  orders: positiveInt('BENCH_EMU_ORDERS', 50),
};
const START = 50_000;
/** Each level's trail: level j's stops sit (j + 1) × STEP under START. */
const STEP = 10;
/** Users set up (and their stops placed) at once. */
const CONCURRENCY = 8;
const { cleanups, cleanUp } = createCleanups();

/** Runs `work` over the items, `limit` at a time. */
const eachLimited = async <T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
};

/** Polls until `done` holds or `seconds` pass: whether it held. */
const until = async (done: () => boolean | Promise<boolean>, seconds: number) => {
  const deadline = performance.now() + seconds * 1_000;
  while (!(await done())) {
    if (performance.now() > deadline) return false;
    await sleep(5);
  }
  return true;
};

const main = async () => {
  const levels = Math.ceil(settings.stops / settings.users);
  if (levels * STEP >= START) throw new Error(`BENCH_EMU_STOPS / BENCH_EMU_USERS levels must stay under ${START / STEP}`);
  const keys = Array.from({ length: settings.users }, () => ({ apiKey: `bnemu${randomBytes(6).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` }));
  const referenceKey = { apiKey: `bnemuref${randomBytes(6).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };
  /** When each trigger's market order reached the fake, and how many came under its id. */
  const childArrivals = new Map<string, number>();
  const childCounts = new Map<string, number>();
  const fillSent = new Map<string, number>();
  const binance = await startFakeBinance({
    accounts: [...keys.map((key) => ({ ...key, balances: { USDT: '1000000', BTC: '10' } })), { ...referenceKey, balances: { USDT: '1000000000' } }],
    prices: { BTCUSDT: String(START) },
    onStreamSend: (change) => {
      const id = change.order.clientOrderId;
      if (change.execution === 'NEW' && id.endsWith(EMULATED_CHILD_SUFFIX)) {
        childArrivals.set(id, performance.now());
        childCounts.set(id, (childCounts.get(id) ?? 0) + 1);
      }
      if (change.execution === 'TRADE' && change.order.status === 'FILLED') fillSent.set(id, performance.now());
    },
  });
  cleanups.push({ what: 'fake Binance', run: () => binance.close() });
  const service = await startBenchService({
    cleanups,
    prefix: 'ts-bench-emulator-',
    env: {
      BROKER_MODE: 'real',
      BROKER_BASE_URLS: `crypto_exchange:paper=${binance.url}`,
      RISK_MARKET_HOURS: 'ignore',
      SIM_TICK_INTERVAL_MS: '0',
      RATE_LIMIT_ORDERS_PER_MIN: '1000000',
      WORKERS_IN_PROCESS: 'false',
    },
  });
  const { url } = service.app;
  const keyBody = (key: { apiKey: string; secret: string }) => ({ asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, api_key: key.apiKey, api_secret: key.secret, base_url: binance.url });

  // Setup (timed, not measured): the users, their keys' order streams, their stops.
  const setupStarted = performance.now();
  const tokens: string[] = new Array<string>(settings.users);
  await eachLimited([...keys.keys()], CONCURRENCY, async (user) => {
    tokens[user] = await benchTrader(url, `bench_emu${user}`, [keyBody(keys[user]!)]);
  });
  if (!(await until(() => keys.every((key) => binance.userStreamSubscribers(key.apiKey) === 1), settings.seconds))) throw new Error('the accounts’ order streams did not all start');
  /** Level j's client order ids, one per user holding a stop there. */
  const byLevel: string[][] = Array.from({ length: levels }, () => []);
  const stops = Array.from({ length: settings.stops }, (_, index) => ({ user: index % settings.users, level: Math.floor(index / settings.users) }));
  await eachLimited([...keys.keys()], CONCURRENCY, async (user) => {
    for (const { level } of stops.filter((stop) => stop.user === user)) {
      const clientOrderId = `emu${user}-${level}`;
      const body = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: 0.001, order_type: 'trailing_stop', trail_price: (level + 1) * STEP, time_in_force: 'gtc', client_order_id: clientOrderId };
      const placed = await postJson(`${url}/api/equity/orders`, body, tokens[user]);
      if (placed.status !== 201 || placed.json?.metadata === undefined || (placed.json.metadata as { emulated?: unknown }).emulated !== true) throw new Error(`${clientOrderId}: ${placed.status} ${placed.text}`);
      byLevel[level]!.push(clientOrderId);
    }
  });
  // Each account watches its triggers on its own trade stream of the pair.
  if (!(await until(() => binance.marketStreamSubscribers() >= settings.users, settings.seconds))) throw new Error(`the accounts’ trade streams did not all start (${binance.marketStreamSubscribers()} of ${settings.users})`);
  const setupSeconds = (performance.now() - setupStarted) / 1_000;

  // The stream-to-frame figure as brokers.ts measures it, on the same service and fake.
  const referenceToken = await benchTrader(url, 'bench_emuref', [keyBody(referenceKey)]);
  if (!(await until(() => binance.userStreamSubscribers(referenceKey.apiKey) === 1, settings.seconds))) throw new Error('the reference account’s order stream did not start');
  const idRule = clientOrderIdRuleOf('binance');
  const venue: Venue = { name: 'ccxt adapter (crypto, fake Binance)', url, token: referenceToken, order: { asset_class: 'crypto', symbol: 'BTC/USDT', qty: 0.001 }, fillSentAt: (id) => fillSent.get(toExchangeClientOrderId(id, idRule)) };
  await measureMarketOrders(venue, 5, 'warmup', cleanups);
  const reference = await measureMarketOrders(venue, settings.orders, 'measured', cleanups);

  // One quote per level: each reaches that level's stop of every user holding one there.
  const quoteToTrigger: number[] = [];
  let missing = 0;
  const requestsBefore = binance.requests.length;
  const started = performance.now();
  for (let level = 0; level < levels; level++) {
    const ids = byLevel[level]!;
    const price = String(START - (level + 1) * STEP);
    const sentAt = performance.now();
    binance.setPrice('BTCUSDT', price);
    const all = await until(() => ids.every((id) => childArrivals.has(`${id}${EMULATED_CHILD_SUFFIX}`)), settings.seconds);
    if (!all) console.log(`level ${level} (price ${price}): not every trigger fired within ${settings.seconds} s`);
    for (const id of ids) {
      const at = childArrivals.get(`${id}${EMULATED_CHILD_SUFFIX}`);
      if (at === undefined) missing += 1;
      else quoteToTrigger.push(at - sentAt);
    }
  }
  const firingSeconds = (performance.now() - started) / 1_000;
  /** The calls the service made to the exchange while the quotes fired (each draws from the host's one request-weight budget). */
  const callsWhileFiring = new Map<string, number>();
  for (const request of binance.requests.slice(requestsBefore)) callsWhileFiring.set(`${request.method} ${request.path}`, (callsWhileFiring.get(`${request.method} ${request.path}`) ?? 0) + 1);
  quoteToTrigger.sort((a, b) => a - b);
  const filledTrailing = () =>
    service.app.services.db
      .select({ n: count() })
      .from(orders)
      .where(and(eq(orders.orderType, 'trailing_stop'), eq(orders.status, 'filled')))
      .then((rows) => rows[0]?.n ?? 0);
  const allFilled = await until(async () => (await filledTrailing()) === settings.stops, settings.seconds);
  const twice = [...childCounts.values()].filter((times) => times > 1).length;

  console.log(`${settings.stops} emulated trailing stops (trailing_stop, sell, trail_price) of ${settings.users} users, each with its own account on one fake Binance (through ccxt, on PostgreSQL: ${process.env.DATABASE_URL ? 'yes' : 'no, PGlite'})`);
  console.log(`setup ${fixed(setupSeconds, 1)} s (users, keys, order streams, placements); ${levels} quotes, each reaching ${settings.users} users' stops at once, in ${fixed(firingSeconds, 1)} s`);
  console.log(
    `\nquote to trigger (the fake's trade on its market stream to the trigger's market order at the fake): p50 ${fixed(percentile(quoteToTrigger, 50), 1)} ms, p99 ${fixed(percentile(quoteToTrigger, 99), 1)} ms, max ${fixed(quoteToTrigger.at(-1) ?? Number.NaN, 1)} ms (${quoteToTrigger.length} triggers)`,
  );
  console.log(`REST calls at the fake meanwhile: ${[...callsWhileFiring].sort((a, b) => b[1] - a[1]).map(([what, times]) => `${what} ${times}`).join(', ')} (one request-weight budget for the host, shared by every account: ccxt's pacer)`);
  console.log(`stream event to WebSocket frame (as test/bench/brokers.ts measures it, same run, ${settings.orders} market orders one at a time):`);
  console.log(streamToFrameLine(venue.name, reference.streamToFrame));
  const pass = missing === 0 && twice === 0 && childCounts.size === settings.stops && allFilled;
  console.log(
    `\n${pass ? 'PASS' : 'FAIL'}  every trigger fired once: ${childCounts.size} of ${settings.stops} market orders at the fake, ${twice} sent twice, ${missing} missing; ${allFilled ? 'every' : 'not every'} emulated order ended filled`,
  );
  console.log(
    `INFO  quote to trigger p99 ${fixed(percentile(quoteToTrigger, 99), 1)} ms with ${settings.users} users' stops on each quote, beside stream event to frame p99 ${fixed(percentile(reference.streamToFrame, 99), 1)} ms (no goal set)`,
  );
};

await runBench(main, { cleanUp });
