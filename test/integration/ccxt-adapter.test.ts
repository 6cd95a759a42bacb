// The ccxt adapter against the fake Binance on 127.0.0.1 (ccxt's own binance class, its URLs
// pointed at the fake): orders, cancels, refusals, faults, rate limits, and fills by polling.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLimiter } from '../../server/brokers/alpaca/limiter.ts';
import { createCcxtBroker, type CcxtBrokerOptions } from '../../server/brokers/ccxt/index.ts';
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
});
