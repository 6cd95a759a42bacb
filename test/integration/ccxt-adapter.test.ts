// The ccxt adapter against the fake Binance on 127.0.0.1 (ccxt's own binance class, its URLs
// pointed at the fake): orders, cancels, refusals, faults, rate limits, fills by polling, and
// client order ids longer than Binance takes.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLimiter } from '../../server/brokers/alpaca/limiter.ts';
import { createCcxtBroker, createHostPacing, type CcxtBrokerOptions } from '../../server/brokers/ccxt/index.ts';
import { BrokerRejectedError, BrokerUnavailableError, type TBrokerEvent } from '../../server/brokers/types.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { waitFor } from '../support/wait.ts';

const key = { apiKey: `bn-${randomBytes(6).toString('hex')}`, secret: `bn-secret-${randomBytes(16).toString('hex')}` };
let fake: FakeBinance;

beforeAll(async () => {
  fake = await startFakeBinance({ accounts: [{ ...key, balances: { USDT: '10000' } }], prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });
});
afterAll(async () => {
  await fake?.close();
});

const broker = (overrides: Partial<CcxtBrokerOptions> = {}) =>
  createCcxtBroker({ userId: 1, mode: 'paper', exchangeId: 'binance', apiKey: key.apiKey, secret: key.secret, baseUrl: fake.url, timeoutMs: 1_000, limiter: createRequestLimiter({ requestsPerMinute: 60_000, burst: 100 }), pollIntervalMs: 50, ...overrides });

describe('ccxt adapter on the fake Binance', () => {
  let adapter: ReturnType<typeof broker>;
  beforeAll(() => {
    adapter = broker();
  });

  it('reads the account in USDT', async () => {
    const account = await adapter.account();
    expect(account).toMatchObject({ broker: 'binance', paper: true, currency: 'USDT', cash: '10000', equity: '10000' });
  });

  it('places a market order (filled at the price), then holds the position and values it', async () => {
    const order = await adapter.placeOrder({ clientOrderId: 'c-market-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    expect(order).toMatchObject({ clientOrderId: 'c-market-1', status: 'accepted', symbol: 'BTC/USDT', qty: '0.01' });
    expect(order.brokerOrderId).toMatch(/^BTCUSDT~\d+$/);
    const read = await adapter.getOrder({ brokerOrderId: order.brokerOrderId });
    expect(read).toMatchObject({ status: 'filled', filledQty: '0.01', avgFillPrice: '50000', clientOrderId: 'c-market-1' });
    expect(await adapter.getOrder({ clientOrderId: 'c-market-1' })).toMatchObject({ brokerOrderId: order.brokerOrderId });
    expect(await adapter.positions()).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', qty: '0.01', currentPrice: '50000' })]);
    // 500 spent and 0.5 commission: cash 9499.5, equity the same plus 0.01 × 50000.
    expect(await adapter.account()).toMatchObject({ cash: '9499.5', equity: '9999.5' });
  });

  it('rests a limit order, lists it open, and cancels it', async () => {
    const order = await adapter.placeOrder({ clientOrderId: 'c-limit-1', symbol: 'ETH/USDT', side: 'buy', qty: '0.5', orderType: 'limit', limitPrice: '2500.005', timeInForce: 'gtc' });
    expect(order.limitPrice).toBe('2500');
    const open = await adapter.listOpenOrders();
    expect(open).toEqual([expect.objectContaining({ brokerOrderId: order.brokerOrderId, status: 'open', limitPrice: '2500' })]);
    const canceled = await adapter.cancelOrder({ brokerOrderId: order.brokerOrderId });
    expect(canceled.status).toBe('canceled');
    await expect(adapter.cancelOrder({ brokerOrderId: order.brokerOrderId })).rejects.toBeInstanceOf(BrokerRejectedError);
  });

  it('refuses an order beyond the funds with the exchange’s reason; a stop on a market without stops is refused clearly', async () => {
    const refused = adapter.placeOrder({ clientOrderId: 'c-funds', symbol: 'BTC/USDT', side: 'buy', qty: '10', orderType: 'market', timeInForce: 'gtc' });
    await expect(refused).rejects.toBeInstanceOf(BrokerRejectedError);
    await expect(refused).rejects.toThrow(/insufficient balance/);
    const stop = adapter.placeOrder({ clientOrderId: 'c-stop', symbol: 'BTC/USDT', side: 'sell', qty: '0.01', orderType: 'stop', stopPrice: '40000', timeInForce: 'gtc' });
    await expect(stop).rejects.toThrow(/triggerPrice parameter is not allowed/);
  });

  it('answers a 5xx and a timeout as unavailable', async () => {
    fake.failNext(503, '<html>down</html>', { path: '/api/v3/account' });
    await expect(adapter.account()).rejects.toBeInstanceOf(BrokerUnavailableError);
    fake.hangNext({ path: '/api/v3/account' });
    await expect(adapter.account()).rejects.toBeInstanceOf(BrokerUnavailableError);
  });

  it('waits out a 429 (Retry-After) and succeeds; keeps failing past the retries as unavailable', async () => {
    fake.rateLimitNext(1, 0, { path: '/api/v3/account' });
    expect((await adapter.account()).currency).toBe('USDT');
    fake.rateLimitNext(5, 0, { path: '/api/v3/account' });
    await expect(broker({ maxRateLimitRetries: 2 }).account()).rejects.toBeInstanceOf(BrokerUnavailableError);
    // What the retries did not use up is cleared for the tests after this one.
    while (fake.requests.length >= 0) {
      try {
        await adapter.account();
        break;
      } catch {
        // another 429 left over
      }
    }
  });

  it('refuses a wrong secret with Binance’s reason and no secret in the message', async () => {
    const wrong = `wrong-${key.secret}`;
    const error = await broker({ secret: wrong }).account().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect((error as Error).message).toMatch(/Signature for this request is not valid/);
    expect((error as Error).message).not.toContain(wrong);
    expect((error as Error).message).not.toContain(key.secret);
  });

  it('refuses a paper key on an exchange without a sandbox', async () => {
    await expect(broker({ exchangeId: 'bitflyer', baseUrl: undefined }).account()).rejects.toThrow(/no sandbox/);
  });

  it('reports a fill seen by the poller exactly once', async () => {
    const events: TBrokerEvent[] = [];
    const controller = new AbortController();
    let polls = 0;
    const consumer = broker({ stream: 'poll', onPoll: () => void (polls += 1) });
    const running = (async () => {
      for await (const event of consumer.events(controller.signal)) events.push(event);
    })();
    await waitFor(() => Promise.resolve(polls), (count) => count >= 1);
    const order = await adapter.placeOrder({ clientOrderId: 'c-poll-1', symbol: 'ETH/USDT', side: 'buy', qty: '0.1', orderType: 'limit', limitPrice: '2900', timeInForce: 'gtc' });
    fake.setPrice('ETHUSDT', '2890');
    await waitFor(() => Promise.resolve(events.filter((event) => event.broker_order_id === order.brokerOrderId)), (seen) => seen.length >= 1);
    const after = polls;
    await waitFor(() => Promise.resolve(polls), (count) => count >= after + 3);
    controller.abort();
    await running;
    const fills = events.filter((event) => event.broker_order_id === order.brokerOrderId);
    expect(fills).toEqual([expect.objectContaining({ type: 'fill', status: 'filled', client_order_id: 'c-poll-1', filled_qty: '0.1', fill: expect.objectContaining({ qty: '0.1', price: '2900' }) })]);
    // The market fill of the earlier test was replayed once too (the service drops it by execution id).
    expect(new Set(events.map((event) => event.fill?.execution_id)).size).toBe(events.length);
  });

  it('places an order under a 64-character client order id (Binance takes 36): found by that id, filled, its fill carrying that id', async () => {
    const ours = `long-${'0123456789'.repeat(6)}`.slice(0, 64);
    expect(ours).toHaveLength(64);
    const order = await adapter.placeOrder({ clientOrderId: ours, symbol: 'ETH/USDT', side: 'buy', qty: '0.2', orderType: 'limit', limitPrice: '2800', timeInForce: 'gtc' });
    expect(order).toMatchObject({ clientOrderId: ours, status: 'accepted' });
    // The exchange holds the digest form, not ours.
    const held = fake.books.orders(key.apiKey).find((candidate) => `ETHUSDT~${candidate.orderId}` === order.brokerOrderId);
    expect(held?.clientOrderId).toMatch(/^[.A-Z:/a-z0-9_-]{1,36}$/);
    expect(held?.clientOrderId).not.toBe(ours);
    // Reconciliation asks by our id; listing and reading by broker id answer with ours too.
    expect(await adapter.getOrder({ clientOrderId: ours })).toMatchObject({ brokerOrderId: order.brokerOrderId, clientOrderId: ours, status: 'open' });
    expect(await adapter.listOpenOrders()).toEqual(expect.arrayContaining([expect.objectContaining({ brokerOrderId: order.brokerOrderId, clientOrderId: ours })]));
    // Another process knows our id from the orders table (by broker order id), not from its placements.
    const elsewhere = broker({ clientIds: { put: () => undefined, find: (_sent, brokerOrderId) => Promise.resolve(brokerOrderId === order.brokerOrderId ? ours : undefined) } });
    expect(await elsewhere.getOrder({ brokerOrderId: order.brokerOrderId })).toMatchObject({ clientOrderId: ours });

    const events: TBrokerEvent[] = [];
    const controller = new AbortController();
    let polls = 0;
    const running = (async () => {
      for await (const event of broker({ stream: 'poll', onPoll: () => void (polls += 1), clientIds: { put: () => undefined, find: (_sent, brokerOrderId) => Promise.resolve(brokerOrderId === order.brokerOrderId ? ours : undefined) } }).events(controller.signal)) events.push(event);
    })();
    await waitFor(() => Promise.resolve(polls), (count) => count >= 1);
    fake.setPrice('ETHUSDT', '2790');
    await waitFor(() => Promise.resolve(events.filter((event) => event.broker_order_id === order.brokerOrderId)), (seen) => seen.length >= 1);
    controller.abort();
    await running;
    expect(events.filter((event) => event.broker_order_id === order.brokerOrderId)).toEqual([expect.objectContaining({ type: 'fill', client_order_id: ours, filled_qty: '0.2' })]);
    expect(await adapter.getOrder({ clientOrderId: ours })).toMatchObject({ status: 'filled', clientOrderId: ours });
  });

  it('is refused by the fake as Binance refuses a client order id over 36 characters (-1100)', async () => {
    const body = new URLSearchParams({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.001', newClientOrderId: 'x'.repeat(37), timestamp: String(Date.now()) }).toString();
    const signature = createHmac('sha256', key.secret).update(body).digest('hex');
    const res = await fetch(`${fake.url}/api/v3/order`, { method: 'POST', headers: { 'x-mbx-apikey': key.apiKey, 'content-type': 'application/x-www-form-urlencoded' }, body: `${body}&signature=${signature}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: -1100, msg: "Illegal characters found in parameter 'newClientOrderId'; legal range is '^[\\.A-Z\\:/a-z0-9_-]{1,36}$'." });
  });
});

describe('ccxt pacing by request weight, per exchange host', () => {
  const other = { apiKey: `bn-${randomBytes(6).toString('hex')}`, secret: `bn-secret-${randomBytes(16).toString('hex')}` };
  let shared: FakeBinance;
  beforeAll(async () => {
    shared = await startFakeBinance({ accounts: [{ ...key, balances: { USDT: '10000' } }, { ...other, balances: { USDT: '10000' } }], prices: { BTCUSDT: '50000' } });
  });
  afterAll(async () => {
    await shared?.close();
  });

  it('paces two accounts on one host by one budget: each call weighs on the pacer both share', async () => {
    const hostPacing = createHostPacing();
    const first = broker({ baseUrl: shared.url, hostPacing });
    await first.account();
    const pacer = hostPacing.pacerOf('binance', new URL(shared.url).origin);
    expect(pacer).toBeDefined();
    // From here on, count what is weighed on the host's pacer.
    const weighed: number[] = [];
    const throttle = pacer!.throttle.bind(pacer);
    pacer!.throttle = (cost?: number) => {
      weighed.push(cost ?? 1);
      return throttle(cost);
    };
    const second = broker({ userId: 2, apiKey: other.apiKey, secret: other.secret, baseUrl: shared.url, hostPacing });
    await second.account();
    // The second account's read was weighed on the first one's pacer (its markets came from the first load).
    expect(weighed).toHaveLength(1);
    await first.account();
    expect(weighed).toHaveLength(2);
    // An account read weighs what ccxt knows Binance charges for it (more than an order's 0.2).
    expect(weighed.at(-1)).toBeGreaterThan(1);
  });

  it('loads the markets once per host, and an instance on the shared markets trades', async () => {
    const hostPacing = createHostPacing();
    const loads = () => shared.requests.filter((request) => request.path === '/api/v3/exchangeInfo').length;
    const before = loads();
    const first = broker({ baseUrl: shared.url, hostPacing });
    const second = broker({ userId: 2, apiKey: other.apiKey, secret: other.secret, baseUrl: shared.url, hostPacing });
    await Promise.all([first.account(), second.account()]);
    expect(loads()).toBe(before + 1);
    const order = await second.placeOrder({ clientOrderId: 'c-shared-markets', symbol: 'BTC/USDT', side: 'buy', qty: '0.001', orderType: 'market', timeInForce: 'gtc' });
    expect(await second.getOrder({ brokerOrderId: order.brokerOrderId })).toMatchObject({ status: 'filled', filledQty: '0.001' });
    expect(loads()).toBe(before + 1);
  });

  it('polls open orders symbol by symbol, and sweeps the whole account (every symbol, the holdings) only every few readings', async () => {
    const hostPacing = createHostPacing();
    const watched = new Set<string>();
    const polling = broker({ baseUrl: shared.url, hostPacing, watched, stream: 'poll', pollIntervalMs: 10, pollSweepEvery: 3 });
    await polling.placeOrder({ clientOrderId: 'c-sweep-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.001', orderType: 'market', timeInForce: 'gtc' });
    const pacer = hostPacing.pacerOf('binance', new URL(shared.url).origin)!;
    const throttle = pacer.throttle.bind(pacer);
    const weights: number[][] = [[]];
    pacer.throttle = (cost?: number) => {
      weights.at(-1)!.push(cost ?? 1);
      return throttle(cost);
    };
    const readings = 7;
    const stop = new AbortController();
    const events: TBrokerEvent[] = [];
    const run = broker({ baseUrl: shared.url, hostPacing, watched, stream: 'poll', pollIntervalMs: 10, pollSweepEvery: 3, onPoll: () => {
      if (weights.length === readings) stop.abort();
      else weights.push([]);
    } });
    for await (const event of run.events(stop.signal)) events.push(event);
    expect(weights).toHaveLength(readings);
    // Binance's open orders of every symbol weigh 80 (ccxt's cost 16): only the sweeps, readings 0, 3 and 6, pay it.
    const swept = weights.map((costs) => costs.includes(16));
    expect(swept).toEqual([true, false, false, true, false, false, true]);
    const heaviest = Math.max(...weights.filter((_, index) => !swept[index]).map((costs) => costs.reduce((sum, cost) => sum + cost, 0)));
    expect(heaviest).toBeLessThan(16);
    // The market order placed before the first reading still comes in, once.
    expect(events.filter((event) => event.client_order_id === 'c-sweep-1' && event.type === 'fill')).toHaveLength(1);
  });

  it('reads a snapshot focused on one symbol with the open orders of that symbol only (the light read), and still lists them', async () => {
    const hostPacing = createHostPacing();
    const focused = broker({ baseUrl: shared.url, hostPacing });
    const resting = await focused.placeOrder({ clientOrderId: 'c-focus-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.001', orderType: 'limit', limitPrice: '40000', timeInForce: 'gtc' });
    const pacer = hostPacing.pacerOf('binance', new URL(shared.url).origin)!;
    const throttle = pacer.throttle.bind(pacer);
    const weighed: number[] = [];
    pacer.throttle = (cost?: number) => {
      weighed.push(cost ?? 1);
      return throttle(cost);
    };
    const snapshot = await focused.snapshot({ symbol: 'BTC/USDT' });
    expect(snapshot.openOrders.map((order) => order.brokerOrderId)).toContain(resting.brokerOrderId);
    expect(weighed).not.toContain(16);
    weighed.length = 0;
    await focused.snapshot();
    expect(weighed).toContain(16);
    await focused.cancelOrder({ brokerOrderId: resting.brokerOrderId });
  });
});
