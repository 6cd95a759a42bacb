// The ccxt adapter's events from watchOrders (ccxt's pro binance class) against the fake
// Binance's WebSocket API on 127.0.0.1: fills, partial fills, cancels and expiries by the stream
// with no polling, a drop mid-order (the fill made meanwhile settled once by the listening
// hook), the silence watchdog, a refused key, and BROKER_CRYPTO_STREAM=poll keeping the poller.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLimiter } from '../../server/brokers/alpaca/limiter.ts';
import { createCcxtBroker, type CcxtBrokerOptions } from '../../server/brokers/ccxt/index.ts';
import { BrokerRejectedError, type TBrokerEvent } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { capturedLogger } from '../support/logs.ts';
import { waitFor } from '../support/wait.ts';
import { advanceUntilDropped, ROOMY_SILENCE_SECONDS, ROOMY_TIMEOUT_MS, ROUND_MS } from '../support/watchdog.ts';

let fake: FakeBinance;

beforeAll(async () => {
  fake = await startFakeBinance({ prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });
});
afterAll(async () => {
  await fake?.close();
});

/** A fresh account on the fake (or the key in `overrides`), its adapter, and its events collected until `stop`. */
const account = (overrides: Partial<CcxtBrokerOptions> = {}) => {
  const key = { apiKey: overrides.apiKey ?? `bn-${randomBytes(6).toString('hex')}`, secret: overrides.secret ?? `bn-secret-${randomBytes(16).toString('hex')}` };
  if (!overrides.apiKey) fake.addAccount({ ...key, balances: { USDT: '10000', ETH: '1' } });
  /** When the stream was subscribed, the first time included (the listening hook's calls). */
  const listenings: number[] = [];
  const options: CcxtBrokerOptions = {
    userId: 1,
    mode: 'paper',
    exchangeId: 'binance',
    apiKey: key.apiKey,
    secret: key.secret,
    baseUrl: fake.url,
    timeoutMs: ROOMY_TIMEOUT_MS,
    limiter: createRequestLimiter({ requestsPerMinute: 60_000, burst: 100 }),
    pollIntervalMs: 50,
    silenceSeconds: ROOMY_SILENCE_SECONDS,
    streamBackoff: { initialMs: 20, maxMs: 200 },
    onListening: () => void listenings.push(Date.now()),
    ...overrides,
  };
  const adapter = createCcxtBroker(options);
  const events: TBrokerEvent[] = [];
  const controller = new AbortController();
  let failure: unknown;
  const running = (async () => {
    try {
      for await (const event of adapter.events(controller.signal)) events.push(event);
    } catch (error) {
      failure = error;
    }
  })();
  return {
    key,
    adapter,
    events,
    listenings,
    failure: () => failure,
    of: (brokerOrderId: string) => events.filter((event) => event.broker_order_id === brokerOrderId),
    /** Resolves once the account's stream is subscribed on the fake. */
    subscribed: () => waitFor(() => Promise.resolve(fake.userStreamSubscribers(key.apiKey)), (count) => count === 1, 20_000),
    requests: (path: string) => fake.requests.filter((request) => request.apiKey === key.apiKey && request.path === path).length,
    stop: async () => {
      controller.abort();
      await running;
    },
  };
};

/** An account whose stream is subscribed on the fake. */
const streamingAccount = async (overrides: Partial<CcxtBrokerOptions> = {}) => {
  const made = account(overrides);
  await made.subscribed();
  return made;
};

const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

describe('ccxt order events by watchOrders on the fake Binance', () => {
  it('takes a market order’s fill from the stream, without polling trades or open orders', async () => {
    const account_ = await streamingAccount();
    const order = await account_.adapter.placeOrder({ clientOrderId: 'ws-market-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    const [trade] = fake.books.trades(account_.key.apiKey, 'BTCUSDT');
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(order.brokerOrderId)).toEqual([
      expect.objectContaining({
        type: 'fill',
        status: 'filled',
        client_order_id: 'ws-market-1',
        symbol: 'BTC/USDT',
        filled_qty: '0.01',
        avg_fill_price: '50000',
        // The poller's execution id for the same trade: the service drops whichever comes second.
        fill: { execution_id: `binance:BTC/USDT:${trade!.id}`, qty: '0.01', price: '50000', fee: '0.5' },
      }),
    ]);
    expect(account_.requests('/api/v3/myTrades')).toBe(0);
    expect(account_.requests('/api/v3/openOrders')).toBe(0);
    await account_.stop();
  });

  it('carries our 64-character client order id on the stream, where the exchange holds its 36-character digest form', async () => {
    const account_ = await streamingAccount();
    const ours = `ws-long-${'0123456789'.repeat(6)}`.slice(0, 64);
    const order = await account_.adapter.placeOrder({ clientOrderId: ours, symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 1);
    const [fill] = account_.of(order.brokerOrderId);
    expect(fill).toMatchObject({ type: 'fill', client_order_id: ours, filled_qty: '0.01' });
    expect(fake.books.orders(account_.key.apiKey).find((held) => `BTCUSDT~${held.orderId}` === order.brokerOrderId)?.clientOrderId).not.toBe(ours);
    await account_.stop();
  });

  it('reports a resting limit order’s cancel, and an IOC order that expired unfilled', async () => {
    const account_ = await streamingAccount();
    const resting = await account_.adapter.placeOrder({ clientOrderId: 'ws-limit-1', symbol: 'ETH/USDT', side: 'buy', qty: '0.5', orderType: 'limit', limitPrice: '2500', timeInForce: 'gtc' });
    await account_.adapter.cancelOrder({ brokerOrderId: resting.brokerOrderId });
    await until(() => account_.of(resting.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(resting.brokerOrderId)).toEqual([expect.objectContaining({ type: 'canceled', status: 'canceled', client_order_id: 'ws-limit-1', filled_qty: '0', fill: null })]);

    const ioc = await account_.adapter.placeOrder({ clientOrderId: 'ws-ioc-1', symbol: 'ETH/USDT', side: 'buy', qty: '0.5', orderType: 'limit', limitPrice: '2500', timeInForce: 'ioc' });
    await until(() => account_.of(ioc.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(ioc.brokerOrderId)).toEqual([expect.objectContaining({ type: 'expired', status: 'expired', client_order_id: 'ws-ioc-1' })]);
    expect(account_.requests('/api/v3/myTrades')).toBe(0);
    await account_.stop();
  });

  it('reports a partial fill, then the rest, each trade once', async () => {
    const account_ = await streamingAccount();
    const order = await account_.adapter.placeOrder({ clientOrderId: 'ws-partial-1', symbol: 'ETH/USDT', side: 'sell', qty: '0.4', orderType: 'limit', limitPrice: '3100', timeInForce: 'gtc' });
    const exchangeOrderId = Number(order.metadata.exchange_order_id);
    fake.books.fillPart(account_.key.apiKey, exchangeOrderId, '0.1');
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 1);
    fake.setPrice('ETHUSDT', '3100');
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 2);
    fake.setPrice('ETHUSDT', '3000');
    const [first, second] = account_.of(order.brokerOrderId);
    expect(first).toMatchObject({ type: 'partial_fill', status: 'partially_filled', filled_qty: '0.1', avg_fill_price: '3100', fill: expect.objectContaining({ qty: '0.1', price: '3100' }) });
    expect(second).toMatchObject({ type: 'fill', status: 'filled', filled_qty: '0.4', avg_fill_price: '3100', fill: expect.objectContaining({ qty: '0.3', price: '3100' }) });
    expect(first!.fill!.execution_id).not.toBe(second!.fill!.execution_id);
    expect(account_.of(order.brokerOrderId)).toHaveLength(2);
    await account_.stop();
  });

  it('catches up by REST the trades of an order that filled partly before the stream connected', async () => {
    // The account's first order, partly filled, with nobody listening.
    const before = account({ stream: 'poll', pollIntervalMs: 60_000 });
    await before.stop();
    const order = await before.adapter.placeOrder({ clientOrderId: 'ws-before-1', symbol: 'ETH/USDT', side: 'sell', qty: '0.3', orderType: 'limit', limitPrice: '3200', timeInForce: 'gtc' });
    fake.books.fillPart(before.key.apiKey, Number(order.metadata.exchange_order_id), '0.1');
    const read = { trades: before.requests('/api/v3/myTrades'), open: before.requests('/api/v3/openOrders') };
    // The same key, now streaming: its first report of the order is the second trade.
    const streaming = account({ apiKey: before.key.apiKey, secret: before.key.secret });
    await streaming.subscribed();
    fake.setPrice('ETHUSDT', '3200');
    fake.setPrice('ETHUSDT', '3000');
    await until(() => streaming.of(order.brokerOrderId), (seen) => seen.length >= 2);
    expect(streaming.of(order.brokerOrderId).map((event) => [event.type, event.filled_qty, event.fill?.qty])).toEqual([
      ['partial_fill', '0.1', '0.1'],
      ['fill', '0.3', '0.2'],
    ]);
    // The first trade was read by REST, once; the poller did not run (no open orders read).
    expect(before.requests('/api/v3/myTrades') - read.trades).toBe(1);
    expect(before.requests('/api/v3/openOrders')).toBe(read.open);
    await streaming.stop();
  });

  it('calls the listening hook at its first subscription too: a fill made before it is never sent', async () => {
    // Every connection refused from the start: the account's stream has never been subscribed.
    fake.dropUserStreams(1_000);
    const connections = fake.userStreamConnections;
    const account_ = account();
    await until(() => fake.userStreamConnections, (count) => count > connections);
    const before = await account_.adapter.placeOrder({ clientOrderId: 'ws-first-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    expect(fake.books.orders(account_.key.apiKey).find((row) => String(row.orderId) === before.metadata.exchange_order_id)?.status).toBe('FILLED');
    expect(account_.listenings).toHaveLength(0);
    fake.dropUserStreams(0);
    await account_.subscribed();
    await until(() => account_.listenings.length, (count) => count === 1);
    // The stream reports what comes after it is subscribed, not the fill before: the hook is where that is looked for.
    const after = await account_.adapter.placeOrder({ clientOrderId: 'ws-first-2', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    await until(() => account_.of(after.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(before.brokerOrderId)).toEqual([]);
    expect(account_.listenings).toHaveLength(1);
    await account_.stop();
  });

  it('takes a fill made while the stream was down once: by the reconcile after the reconnect, not by the stream', async () => {
    const account_ = await streamingAccount();
    const order = await account_.adapter.placeOrder({ clientOrderId: 'ws-gap-1', symbol: 'ETH/USDT', side: 'buy', qty: '0.2', orderType: 'limit', limitPrice: '2900', timeInForce: 'gtc' });
    const connections = fake.userStreamConnections;
    // Down, and reconnections refused, while the order fills at the exchange.
    fake.dropUserStreams(1_000);
    await until(() => fake.userStreamSubscribers(account_.key.apiKey), (count) => count === 0);
    fake.setPrice('ETHUSDT', '2890');
    fake.setPrice('ETHUSDT', '3000');
    expect(fake.books.orders(account_.key.apiKey).find((row) => String(row.orderId) === order.metadata.exchange_order_id)?.status).toBe('FILLED');
    await until(() => fake.userStreamConnections, (count) => count > connections + 1);
    // The first subscription's only: no connection since has been subscribed.
    expect(account_.listenings).toHaveLength(1);
    fake.dropUserStreams(0);
    await account_.subscribed();
    await until(() => account_.listenings.length, (count) => count === 2);
    // The reconcile's read finds it filled; the stream never reported it.
    expect(await account_.adapter.getOrder({ brokerOrderId: order.brokerOrderId })).toMatchObject({ status: 'filled', filledQty: '0.2' });
    const after = await account_.adapter.placeOrder({ clientOrderId: 'ws-gap-2', symbol: 'ETH/USDT', side: 'buy', qty: '0.1', orderType: 'market', timeInForce: 'gtc' });
    await until(() => account_.of(after.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(order.brokerOrderId)).toEqual([]);
    expect(account_.failure()).toBeUndefined();
    await account_.stop();
  });

  it('reconnects a stream gone silent (no updates, no pongs), then reports through the new one', async () => {
    const logs = capturedLogger('warn');
    const clock = manualClock();
    const account_ = await streamingAccount({ watchdogClock: clock, logger: logs.logger });
    const connections = fake.userStreamConnections;
    fake.silenceUserStreams();
    const firstDrop = () => logs.lines.find((line) => line.msg === 'ccxt stream: the order stream dropped; reconnecting');
    await advanceUntilDropped(clock, ROUND_MS, firstDrop);
    await until(() => account_.listenings.length, (count) => count >= 2);
    // Dropped by the silence watchdog (ccxt's own keep-alive would give up only after eight missed pongs, twice as late).
    expect(firstDrop()).toMatchObject({ reason: 'silent' });
    expect(fake.userStreamConnections).toBeGreaterThan(connections);
    await account_.subscribed();
    const order = await account_.adapter.placeOrder({ clientOrderId: 'ws-silent-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(order.brokerOrderId)).toEqual([expect.objectContaining({ type: 'fill', filled_qty: '0.01' })]);
    await account_.stop();
  });

  it('ends with the exchange’s refusal when the stream’s signature is refused, with no secret in it', async () => {
    const account_ = account();
    await account_.stop();
    const wrong = `wrong-${account_.key.secret}`;
    const refused = createCcxtBroker({ userId: 1, mode: 'paper', exchangeId: 'binance', apiKey: account_.key.apiKey, secret: wrong, baseUrl: fake.url, limiter: createRequestLimiter({ requestsPerMinute: 60_000, burst: 100 }), silenceSeconds: ROOMY_SILENCE_SECONDS });
    const error = await (async () => {
      for await (const event of refused.events(new AbortController().signal)) void event;
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect((error as Error).message).toMatch(/Signature for this request is not valid/);
    expect((error as Error).message).not.toContain(wrong);
  });

  it('keeps polling with stream: poll (BROKER_CRYPTO_STREAM=poll)', async () => {
    let polls = 0;
    const connections = fake.userStreamConnections;
    const account_ = account({ stream: 'poll', onPoll: () => void (polls += 1) });
    await until(() => polls, (count) => count >= 1);
    const order = await account_.adapter.placeOrder({ clientOrderId: 'poll-market-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.01', orderType: 'market', timeInForce: 'gtc' });
    await until(() => account_.of(order.brokerOrderId), (seen) => seen.length >= 1);
    expect(account_.of(order.brokerOrderId)).toEqual([expect.objectContaining({ type: 'fill', filled_qty: '0.01' })]);
    expect(account_.requests('/api/v3/myTrades')).toBeGreaterThan(0);
    expect(fake.userStreamConnections).toBe(connections);
    await account_.stop();
  });
});
