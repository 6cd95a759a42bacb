// `node test/bench/brokers.ts`: the real broker adapters against their fakes on 127.0.0.1, beside
// the simulator in the same run. For each venue, BENCH_BROKERS_ORDERS market orders, one at a time:
//
// - the order's round trip: POST /api/equity/orders to its 201 (the five gates, the intent's
//   commit, the broker call, the answer recorded);
// - the fill's way back: from the same POST to the order's `fill` frame on /ws/equity/orders
//   (which can come before the 201 where the fill is recorded with the placement), through
//   whatever the venue uses (the simulator's own books; Alpaca's trade_updates stream, its
//   consumer under a lease and the order service's intake; KIS's fill inquiry, polled every
//   BROKER_KR_POLL_INTERVAL_MS, which bounds its figure from below; the ccxt exchange's events);
// - for a venue that streams its events: from the fake sending the fill on its stream to our
//   fill frame (the fakes run in this process, so both instants are on one clock).
//
// Two services in this process: one with BROKER_MODE=real whose keys name the fakes (an
// Alpaca-style US account, a KIS-style KR account, a ccxt account on the fake Binance), one
// simulated (a crypto key). Both on PGlite unless DATABASE_URL is set. The fakes answer at once:
// the figures are the adapters' and the service's own cost, not a network's (ccxt still paces
// its calls by the exchange's published request weights). The exit code is 0 whatever the figures.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startFakeAlpaca } from '../../server/fakes/alpaca.ts';
import { clientOrderIdRuleOf, toExchangeClientOrderId } from '../../server/brokers/ccxt/index.ts';
import { startFakeBinance } from '../../server/fakes/binance.ts';
import { startFakeKis } from '../../server/fakes/kis.ts';
import { createCleanups, fixed, percentile, positiveInt, runBench } from './common.ts';
import { benchTrader, measureMarketOrders, streamToFrameLine, type Venue } from './fill-latency.ts';
import { startBenchService } from './service.ts';

const settings = {
  orders: positiveInt('BENCH_BROKERS_ORDERS', 100),
  warmup: positiveInt('BENCH_BROKERS_WARMUP', 10),
  krPollMs: positiveInt('BENCH_BROKERS_KR_POLL_MS', 200),
};
const { cleanups, cleanUp } = createCleanups();

const main = async () => {
  const alpacaKey = { keyId: `PKBENCH${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
  const kisKey = { appKey: `PSBENCH${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000001', productCode: '01' };
  const alpacaFillSent = new Map<string, number>();
  const alpaca = await startFakeAlpaca({
    accounts: [{ ...alpacaKey, cash: '1000000000' }],
    prices: { AAPL: '200' },
    onStreamSend: (_keyId, update) => {
      if (update.event === 'fill' && update.order.client_order_id) alpacaFillSent.set(update.order.client_order_id, performance.now());
    },
  });
  cleanups.push({ what: 'fake Alpaca', run: () => alpaca.close() });
  const kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000000' }], prices: { '005930': '96500' } });
  cleanups.push({ what: 'fake KIS', run: () => kis.close() });
  const binanceKey = { apiKey: `bnbench${randomBytes(6).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };
  // The exchange holds a long client order id of ours in its digest form: the fills are found by it.
  const binanceFillSent = new Map<string, number>();
  const binance = await startFakeBinance({
    accounts: [{ ...binanceKey, balances: { USDT: '1000000000' } }],
    prices: { BTCUSDT: '50000' },
    onStreamSend: (change) => {
      if (change.execution === 'TRADE' && change.order.status === 'FILLED') binanceFillSent.set(change.order.clientOrderId, performance.now());
    },
  });
  const binanceIdRule = clientOrderIdRuleOf('binance');
  cleanups.push({ what: 'fake Binance', run: () => binance.close() });

  const common = { RISK_MARKET_HOURS: 'ignore', SIM_TICK_INTERVAL_MS: '0', RATE_LIMIT_ORDERS_PER_MIN: '1000000' };
  const real = await startBenchService({
    cleanups,
    prefix: 'ts-bench-brokers-real-',
    env: {
      ...common,
      BROKER_MODE: 'real',
      BROKER_BASE_URLS: `us_broker:paper=${alpaca.url},kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url}`,
      BROKER_US_DATA_URL: alpaca.url,
      BROKER_KR_POLL_INTERVAL_MS: String(settings.krPollMs),
      BROKER_KR_REQUESTS_PER_SEC: '50',
    },
  });
  const simulated = await startBenchService({ cleanups, prefix: 'ts-bench-brokers-sim-', env: { ...common, SIM_INITIAL_CASH_USDT: '1000000000' } });
  await simulated.app.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });

  const realToken = await benchTrader(real.app.url, 'bench_real', [
    { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true, api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url },
    { asset_class: 'kr_equity', exchange: 'kr_broker', paper_mode: true, api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url, account_no: `${kisKey.accountNo}-${kisKey.productCode}`, account_product_code: kisKey.productCode },
    { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, api_key: binanceKey.apiKey, api_secret: binanceKey.secret, base_url: binance.url },
  ]);
  const simToken = await benchTrader(simulated.app.url, 'bench_sim', [{ asset_class: 'crypto', exchange: 'crypto_exchange', api_key: `bench-sim-${process.pid}`, api_secret: 'bench-secret' }]);
  // The stream consumer of the Alpaca key is up before the first order (its lease taken, listening).
  for (let tries = 0; alpaca.listenerCount(alpacaKey.keyId) < 1; tries++) {
    if (tries > 500) throw new Error('the Alpaca stream consumer never started');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const venues: Venue[] = [
    { name: 'simulator (crypto, simulated mode)', url: simulated.app.url, token: simToken, order: { asset_class: 'crypto', symbol: 'BTC/USDT', qty: 0.0001 } },
    { name: 'Alpaca-style adapter (US, fake)', url: real.app.url, token: realToken, order: { asset_class: 'us_equity', symbol: 'AAPL', qty: 1 }, fillSentAt: (id) => alpacaFillSent.get(id) },
    { name: 'KIS-style adapter (KR, fake)', url: real.app.url, token: realToken, order: { asset_class: 'kr_equity', symbol: '005930', qty: 1 } },
    { name: 'ccxt adapter (crypto, fake Binance)', url: real.app.url, token: realToken, order: { asset_class: 'crypto', symbol: 'BTC/USDT', qty: 0.001 },
      fillSentAt: (id) => binanceFillSent.get(toExchangeClientOrderId(id, binanceIdRule)),
    },
  ];
  console.log(`${settings.orders} market orders per venue, one at a time (after ${settings.warmup} warm-up orders); KIS polled every ${settings.krPollMs} ms`);
  const results = [];
  for (const venue of venues) {
    await measureMarketOrders(venue, settings.warmup, 'warmup', cleanups);
    results.push({ venue, ...(await measureMarketOrders(venue, settings.orders, 'measured', cleanups)) });
  }
  console.log(`\n${'venue'.padEnd(38)} ${'201 p50'.padStart(9)} ${'201 p99'.padStart(9)} ${'fill frame p50'.padStart(15)} ${'p99'.padStart(8)}   (ms, from the POST)`);
  for (const { venue, roundTrips, fills } of results) {
    console.log(
      `${venue.name.padEnd(38)} ${fixed(percentile(roundTrips, 50), 1).padStart(9)} ${fixed(percentile(roundTrips, 99), 1).padStart(9)} ${fixed(percentile(fills, 50), 1).padStart(15)} ${fixed(percentile(fills, 99), 1).padStart(8)}`,
    );
  }
  console.log(`\nstream event to WebSocket frame: from the venue's stream sending the fill to our fill frame (the adapter, the consumer, the order service's intake, the fan-out)`);
  for (const { venue, streamToFrame } of results) {
    if (streamToFrame.length === 0) continue;
    console.log(streamToFrameLine(venue.name, streamToFrame));
  }
};

await runBench(main, { cleanUp });
