// The Alpaca adapter against the fake Alpaca on 127.0.0.1: every order type and time in force,
// brackets, cancel, lookups, the account reads, refusals and failures as the broker errors, 429
// retries, the per-key limiter, and the trade_updates stream through drops, silence and duplicates.
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAlpacaBroker, createLimiterRegistry, type AlpacaBrokerOptions, type StreamRetry } from '../../server/brokers/alpaca/index.ts';
import { BrokerRejectedError, BrokerUnavailableError, type Broker, type BrokerOrderRequest, type TBrokerEvent } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { waitFor } from '../support/wait.ts';

const SECRET_PREFIX = 'sk-alpaca-secret-';

let fake: FakeAlpaca;
/** A roomy budget for the tests that are not about the limiter. */
const limiters = createLimiterRegistry({ requestsPerMinute: 100_000 });
/** Every error any call raised, to check no secret ever reached one. */
const errorsSeen: Error[] = [];
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  fake = await startFakeAlpaca({ prices: { AAPL: '100', MSFT: '400.25' } });
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
afterAll(async () => {
  limiters.close();
  await fake.close();
});

/** A fresh account on the fake (its own key) and an adapter for it. */
const newBroker = (options: Partial<AlpacaBrokerOptions> & { cash?: string } = {}) => {
  const keyId = `PK${randomUUID().slice(0, 12).toUpperCase()}`;
  const secretKey = `${SECRET_PREFIX}${randomUUID()}`;
  fake.addAccount({ keyId, secretKey, cash: options.cash ?? '100000' });
  const broker = createAlpacaBroker({
    userId: 42,
    mode: 'paper',
    keyId,
    secretKey,
    baseUrl: fake.url,
    dataUrl: fake.url,
    // A bound no answered call comes near on a loaded machine; the timeout has a test of its own.
    timeoutMs: 20_000,
    limiter: limiters.forKey(keyId),
    // The stream's watchdog stands still unless a test moves its clock (it has tests of its own),
    // so no stall of a loaded machine ends a stream; its silence is the production one.
    watchdogClock: manualClock(),
    backoff: { initialMs: 20, maxMs: 200 },
    ...options,
  });
  return { broker, keyId, secretKey };
};

/** The error a call throws, recorded for the secret check. */
const failureOf = async (call: Promise<unknown>): Promise<Error> => {
  try {
    await call;
  } catch (error) {
    errorsSeen.push(error as Error);
    return error as Error;
  }
  throw new Error('the call did not fail');
};

const order = (fields: Partial<BrokerOrderRequest> = {}): BrokerOrderRequest => ({
  clientOrderId: randomUUID(),
  symbol: 'AAPL',
  side: 'buy',
  qty: '10',
  orderType: 'market',
  timeInForce: 'day',
  ...fields,
});

/** Collects the broker's events in the background until the test ends. */
const collectEvents = (broker: Broker) => {
  const events: TBrokerEvent[] = [];
  const controller = new AbortController();
  const done = (async () => {
    for await (const event of broker.events(controller.signal)) events.push(event);
  })();
  cleanups.push(() => controller.abort());
  return { events, done, stop: () => controller.abort() };
};

const eventsOf = (events: TBrokerEvent[], brokerOrderId: string) => events.filter((event) => event.broker_order_id === brokerOrderId).map((event) => event.type);

/** waitFor over a probe that needs no waiting of its own. */
const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

const streamReady = (keyId: string) => until(() => fake.listenerCount(keyId), (listening) => listening === 1);

const requestsOf = (keyId: string) => fake.requests.filter((request) => request.keyId === keyId);

describe('orders', () => {
  it('places a market day order that fills at the price, and the fill shows in the position and the cash', async () => {
    const { broker } = newBroker();
    const placed = await broker.placeOrder(order({ qty: '2.5' }));
    expect(placed).toMatchObject({ status: 'accepted', assetClass: 'us_equity', mode: 'paper', qty: '2.5', orderType: 'market', timeInForce: 'day' });
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'filled', filledQty: '2.5', avgFillPrice: '100' });
    expect(await broker.positions()).toEqual([{ symbol: 'AAPL', qty: '2.5', avgEntryPrice: '100', currentPrice: '100', realizedPnl: '0', currency: 'USD' }]);
    expect(await broker.account()).toMatchObject({ broker: 'alpaca', paper: true, currency: 'USD', cash: '99750', equity: '100000', buyingPower: '99750' });
  });

  // [what, symbol, its price at placement, the order, the price that trades it, what it fills at]
  const resting: Array<[string, string, string, Partial<BrokerOrderRequest>, string]> = [
    ['a gtc limit buy until the price falls to its limit', 'MSFT', '400.25', { orderType: 'limit', limitPrice: '390.5', timeInForce: 'gtc' }, '390.5'],
    ['a day stop buy until the price rises through its stop, filling at the price', 'NVDA', '120', { orderType: 'stop', stopPrice: '125', timeInForce: 'day' }, '126.01'],
  ];
  it.each(resting)('rests %s', async (_what, symbol, startPrice, fields, crossingPrice) => {
    const { broker } = newBroker();
    fake.setPrice(symbol, startPrice);
    const placed = await broker.placeOrder(order({ symbol, qty: '1', ...fields }));
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'open', orderType: fields.orderType, timeInForce: fields.timeInForce, limitPrice: fields.limitPrice ?? null, stopPrice: fields.stopPrice ?? null });
    fake.setPrice(symbol, crossingPrice);
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'filled', avgFillPrice: crossingPrice });
    fake.setPrice(symbol, startPrice);
  });

  it('cancels an ioc order that cannot trade at once, and fills a fok order that can', async () => {
    const { broker } = newBroker();
    const ioc = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '90', timeInForce: 'ioc' }));
    expect(await broker.getOrder({ brokerOrderId: ioc.brokerOrderId })).toMatchObject({ status: 'canceled', timeInForce: 'ioc', filledQty: '0' });
    const fok = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '101', timeInForce: 'fok' }));
    expect(await broker.getOrder({ brokerOrderId: fok.brokerOrderId })).toMatchObject({ status: 'filled', timeInForce: 'fok' });
  });

  it('sells what it holds with a limit order', async () => {
    const { broker } = newBroker();
    await broker.placeOrder(order({ qty: '3' }));
    const sell = await broker.placeOrder(order({ side: 'sell', qty: '3', orderType: 'limit', limitPrice: '99.5' }));
    expect(await broker.getOrder({ brokerOrderId: sell.brokerOrderId })).toMatchObject({ side: 'sell', status: 'filled', avgFillPrice: '100' });
    expect(await broker.positions()).toEqual([]);
  });

  it('places a bracket: the legs work once the entry fills, each pointing at it, and one leg filling cancels the other', async () => {
    const { broker, keyId } = newBroker();
    fake.setPrice('AMD', '150');
    const entry = await broker.placeOrder(order({ symbol: 'AMD', qty: '4', timeInForce: 'gtc', bracket: { takeProfit: '160', stopLoss: '140', stopLossLimit: '139.5' } }));
    expect(entry.metadata).toMatchObject({ order_class: 'bracket' });
    const open = await broker.listOpenOrders();
    expect(open.map((leg) => ({ parentId: leg.parentId, side: leg.side, orderType: leg.orderType, limitPrice: leg.limitPrice, stopPrice: leg.stopPrice, status: leg.status }))).toEqual(
      expect.arrayContaining([
        { parentId: entry.brokerOrderId, side: 'sell', orderType: 'limit', limitPrice: '160', stopPrice: null, status: 'open' },
        { parentId: entry.brokerOrderId, side: 'sell', orderType: 'stop', limitPrice: '139.5', stopPrice: '140', status: 'open' },
      ]),
    );
    expect(open).toHaveLength(2);
    fake.setPrice('AMD', '161');
    expect(await broker.listOpenOrders()).toEqual([]);
    const legs = fake.books.getOrder(keyId, entry.brokerOrderId).legs!;
    expect(legs.map((leg) => [leg.type, leg.status])).toEqual([
      ['limit', 'filled'],
      ['stop_limit', 'canceled'],
    ]);
    expect(await broker.positions()).toEqual([]);
  });

  it('cancels a working order (its legs too) and refuses to cancel it twice', async () => {
    const { broker } = newBroker();
    const placed = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '95', timeInForce: 'gtc', bracket: { takeProfit: '110', stopLoss: '90', stopLossLimit: null } }));
    expect(await broker.cancelOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ brokerOrderId: placed.brokerOrderId, status: 'canceled' });
    expect(await broker.listOpenOrders()).toEqual([]);
    const again = await failureOf(broker.cancelOrder({ brokerOrderId: placed.brokerOrderId }));
    expect(again).toBeInstanceOf(BrokerRejectedError);
    expect(again.message).toContain('order is already in "canceled" state');
    expect(await failureOf(broker.cancelOrder({ brokerOrderId: randomUUID() }))).toBeInstanceOf(BrokerRejectedError);
  });

  it('replaces a working order: the answer is the new order, the old one ends as replaced', async () => {
    const { broker } = newBroker();
    const placed = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '95', timeInForce: 'gtc' }));
    const replaced = await broker.replaceOrder({ brokerOrderId: placed.brokerOrderId, qty: '5', limitPrice: '96' });
    expect(replaced).toMatchObject({ qty: '5', limitPrice: '96', status: 'open', metadata: { replaces: placed.brokerOrderId } });
    expect(replaced.brokerOrderId).not.toBe(placed.brokerOrderId);
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ status: 'canceled', metadata: { alpaca_status: 'replaced' } });
    expect((await broker.listOpenOrders()).map((open) => open.brokerOrderId)).toEqual([replaced.brokerOrderId]);
  });

  it('finds an order by id and by client order id, and answers undefined for an unknown one', async () => {
    const { broker } = newBroker();
    const request = order({ orderType: 'limit', limitPrice: '50' });
    const placed = await broker.placeOrder(request);
    expect(await broker.getOrder({ clientOrderId: request.clientOrderId })).toMatchObject({ brokerOrderId: placed.brokerOrderId, clientOrderId: request.clientOrderId, status: 'open' });
    expect(await broker.getOrder({ brokerOrderId: placed.brokerOrderId })).toMatchObject({ clientOrderId: request.clientOrderId });
    expect(await broker.getOrder({ clientOrderId: randomUUID() })).toBeUndefined();
    expect(await broker.getOrder({ brokerOrderId: randomUUID() })).toBeUndefined();
  });

  it('reads the account, positions and open orders at once, and quotes from the data host', async () => {
    const { broker } = newBroker({ cash: '5000' });
    await broker.placeOrder(order({ qty: '10' }));
    const resting = await broker.placeOrder(order({ qty: '20', orderType: 'limit', limitPrice: '80' }));
    const snapshot = await broker.snapshot();
    expect(snapshot.account).toMatchObject({ cash: '4000', equity: '5000', buyingPower: '2400' });
    expect(snapshot.positions).toMatchObject([{ symbol: 'AAPL', qty: '10' }]);
    expect(snapshot.openOrders.map((open) => open.brokerOrderId)).toEqual([resting.brokerOrderId]);
    expect(await broker.quote('MSFT')).toBe('400.25');
    expect(await failureOf(broker.quote('NOPE'))).toBeInstanceOf(BrokerRejectedError);
  });
});

describe('refusals and failures', () => {
  it('refuses an order beyond the buying power with Alpaca message', async () => {
    const { broker } = newBroker({ cash: '500' });
    const error = await failureOf(broker.placeOrder(order({ qty: '6' })));
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect(error.message).toContain('insufficient buying power');
    expect(await broker.listOpenOrders()).toEqual([]);
  });

  it('refuses a client order id used before, and a sell of more than is held', async () => {
    const { broker } = newBroker();
    const request = order({ orderType: 'limit', limitPrice: '50' });
    await broker.placeOrder(request);
    const duplicate = await failureOf(broker.placeOrder({ ...request, limitPrice: '51' }));
    expect(duplicate).toBeInstanceOf(BrokerRejectedError);
    expect(duplicate.message).toContain('client_order_id must be unique');
    const oversold = await failureOf(broker.placeOrder(order({ side: 'sell', qty: '1' })));
    expect(oversold).toBeInstanceOf(BrokerRejectedError);
    expect(oversold.message).toContain('insufficient qty available');
  });

  it('refuses a wrong secret (403) as a rejection', async () => {
    const { keyId } = newBroker();
    const wrong = createAlpacaBroker({ userId: 1, mode: 'paper', keyId, secretKey: `${SECRET_PREFIX}wrong`, baseUrl: fake.url, limiter: limiters.forKey(keyId) });
    const error = await failureOf(wrong.account());
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect(error.message).toContain('forbidden');
  });

  it('reads a 5xx as unavailable', async () => {
    const { broker } = newBroker();
    fake.failNext(503);
    const failure = await failureOf(broker.account());
    expect(failure).toBeInstanceOf(BrokerUnavailableError);
    // A 5xx does not say the request was not carried out: a placement failing so stays pending.
    expect((failure as BrokerUnavailableError).notTaken).toBe(false);
    expect(await broker.account()).toMatchObject({ cash: '100000' });
  });

  it('gives up on a request that never answers: unavailable after the timeout', async () => {
    const { broker } = newBroker({ timeoutMs: 200 });
    fake.hangNext();
    const error = await failureOf(broker.positions());
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).toContain('did not answer GET /v2/positions within 200 ms');
  });

  it('reads a refused connection as unavailable', async () => {
    // A port that was just free and is closed again: the connection is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const broker = createAlpacaBroker({ userId: 1, mode: 'paper', keyId: 'PKNOBODY', secretKey: `${SECRET_PREFIX}nobody`, baseUrl: `http://127.0.0.1:${port}`, limiter: limiters.forKey('PKNOBODY') });
    const failure = await failureOf(broker.account());
    expect(failure).toBeInstanceOf(BrokerUnavailableError);
    // Nothing was sent: a placement failing so is known not to be at the broker.
    expect((failure as BrokerUnavailableError).notTaken).toBe(true);
  });

  it('retries a 429 after its Retry-After, and is unavailable once the retries run out', async () => {
    const { broker, keyId } = newBroker({ maxRateLimitRetries: 2 });
    fake.rateLimitNext(1);
    const before = requestsOf(keyId).length;
    expect(await broker.account()).toMatchObject({ cash: '100000' });
    // The 429 and the retry after it: two requests for one call.
    expect(fake.requests.slice(-2).map((request) => [request.keyId, request.url])).toEqual([
      [keyId, '/v2/account'],
      [keyId, '/v2/account'],
    ]);
    expect(requestsOf(keyId).length - before).toBe(2);

    fake.rateLimitNext(0, 3);
    const error = await failureOf(broker.account());
    expect(error).toBeInstanceOf(BrokerUnavailableError);
    expect(error.message).toContain('429');
    expect(requestsOf(keyId).length - before).toBe(5);
  });

  it('does not wait out a Retry-After longer than allowed', async () => {
    const { broker, keyId } = newBroker({ maxRetryAfterSeconds: 5 });
    fake.rateLimitNext(60);
    const before = requestsOf(keyId).length;
    expect(await failureOf(broker.account())).toBeInstanceOf(BrokerUnavailableError);
    expect(requestsOf(keyId).length - before).toBe(1);
  });

  it('keeps the secret out of error messages, even one the server echoes', async () => {
    const { broker, secretKey } = newBroker();
    fake.failNext(500, `upstream saw secret ${secretKey}`);
    const echoed = await failureOf(broker.account());
    expect(echoed.message).toContain('upstream saw secret [redacted]');
    expect(echoed.message).not.toContain(secretKey);
    expect(errorsSeen.length).toBeGreaterThan(10);
    for (const error of errorsSeen) expect(`${error.message} ${String(error.stack)}`).not.toContain(SECRET_PREFIX);
  });
});

describe('the request limiter', () => {
  it('holds a burst from many callers of one key, across adapters, to its budget', async () => {
    const registry = createLimiterRegistry({ requestsPerMinute: 6 });
    cleanups.push(() => registry.close());
    const { keyId, secretKey } = newBroker();
    const adapters = [1, 2, 3].map((userId) => createAlpacaBroker({ userId, mode: 'paper', keyId, secretKey, baseUrl: fake.url, limiter: registry.forKey(keyId) }));
    const before = requestsOf(keyId).length;
    const calls = Array.from({ length: 15 }, (_, index) => adapters[index % 3]!.account().then(() => 'answered', (error: unknown) => error));
    const limiter = registry.forKey(keyId);
    await until(() => ({ sent: requestsOf(keyId).length - before, waiting: limiter.waiting }), ({ sent, waiting }) => sent === 6 && waiting === 9);
    expect(requestsOf(keyId).length - before).toBe(6);
    registry.close();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((outcome) => outcome === 'answered')).toHaveLength(6);
    expect(outcomes.filter((outcome) => outcome instanceof BrokerUnavailableError)).toHaveLength(9);
    expect(requestsOf(keyId).length - before).toBe(6);
  });
});

describe('the trade_updates stream', () => {
  it('delivers accepted, open and fill events with the execution, its qty, price and a zero fee', async () => {
    const { broker, keyId } = newBroker();
    const { events } = collectEvents(broker);
    await streamReady(keyId);
    const placed = await broker.placeOrder(order({ qty: '7' }));
    await until(() => eventsOf(events, placed.brokerOrderId), (types) => types.includes('fill'));
    expect(eventsOf(events, placed.brokerOrderId)).toEqual(['accepted', 'open', 'fill']);
    const fill = events.find((event) => event.type === 'fill')!;
    expect(fill).toMatchObject({ user_id: 42, broker: 'alpaca', asset_class: 'us_equity', mode: 'paper', status: 'filled', filled_qty: '7', avg_fill_price: '100', fill: { qty: '7', price: '100', fee: '0' } });
    expect(fill.fill!.execution_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('ends when the signal aborts', async () => {
    const { broker, keyId } = newBroker();
    const { done, stop } = collectEvents(broker);
    await streamReady(keyId);
    stop();
    await done;
    await until(() => fake.listenerCount(keyId), (listening) => listening === 0);
  });

  it('drops a duplicate delivery by its execution id', async () => {
    const { broker, keyId } = newBroker();
    const { events } = collectEvents(broker);
    await streamReady(keyId);
    const first = await broker.placeOrder(order());
    await until(() => eventsOf(events, first.brokerOrderId), (types) => types.includes('fill'));
    fake.redeliver(keyId);
    // The stream keeps its order: once the second order's fill is in, the redelivery was read.
    const second = await broker.placeOrder(order());
    await until(() => eventsOf(events, second.brokerOrderId), (types) => types.includes('fill'));
    expect(eventsOf(events, first.brokerOrderId)).toEqual(['accepted', 'open', 'fill']);
    expect(eventsOf(events, second.brokerOrderId)).toEqual(['accepted', 'open', 'fill']);
  });

  it('reconnects after a drop with a bounded backoff, calls onListening again, and streams again', async () => {
    const retries: StreamRetry[] = [];
    let listenings = 0;
    const { broker, keyId } = newBroker({ backoff: { initialMs: 20, maxMs: 40 }, random: () => 0.999_999, onRetry: (retry) => retries.push(retry), onListening: () => void (listenings += 1) });
    const { events } = collectEvents(broker);
    await streamReady(keyId);
    // The first connection's listening is told too: what came before it was never sent.
    await until(() => listenings, (count) => count === 1);
    const resting = await broker.placeOrder(order({ orderType: 'limit', limitPrice: '90', timeInForce: 'gtc' }));
    await until(() => eventsOf(events, resting.brokerOrderId), (types) => types.includes('open'));
    const connectionsBefore = fake.streamConnections;
    // The connection drops mid-order, and the next two attempts are dropped on arrival.
    fake.dropStreams(2);
    await until(() => listenings, (count) => count === 2);
    expect(fake.streamConnections - connectionsBefore).toBe(3);
    expect(retries.map((retry) => retry.attempt)).toEqual([1, 2, 3]);
    // Doubling from 20 ms, capped at 40: the third wait would be 80 ms without the cap.
    expect(retries.map((retry) => retry.delayMs)).toEqual([20, 40, 40]);
    fake.setPrice('AAPL', '89');
    fake.setPrice('AAPL', '100');
    await until(() => eventsOf(events, resting.brokerOrderId), (types) => types.includes('fill'));
    expect(eventsOf(events, resting.brokerOrderId)).toEqual(['accepted', 'open', 'fill']);
  });

  // What arrives after a reconnect is the drop test's; a fill during a gap is the reconciler's.
  // Here only the watchdog, on a clock the test moves: its rounds (a quarter of the silence
  // apart) run when the clock crosses them, and a pong is waited for before the clock moves on.
  const SILENCE_MS = 30_000;
  const ROUND_MS = SILENCE_MS / 4;
  const watchedBroker = () => {
    const clock = manualClock();
    const retries: StreamRetry[] = [];
    let listenings = 0;
    let pongs = 0;
    const { broker, keyId } = newBroker({
      watchdogClock: clock,
      onPong: () => void (pongs += 1),
      onRetry: (retry) => retries.push(retry),
      onListening: () => void (listenings += 1),
    });
    collectEvents(broker);
    return {
      clock,
      keyId,
      reasons: () => retries.map((retry) => retry.reason),
      /** Connections that listened, the first included. */
      listenings: () => listenings,
      /** Moves the clock across the next round (a ping) and waits for the pong. */
      roundAnswered: async () => {
        const before = pongs;
        clock.advance(ROUND_MS);
        await until(() => pongs, (count) => count > before);
      },
    };
  };

  it('keeps a quiet stream that answers its pings, well past the silence', async () => {
    const stream = watchedBroker();
    await streamReady(stream.keyId);
    // Eight rounds, twice the silence, with nothing but pongs: a round that ended the stream would ping no more.
    for (let round = 0; round < 8; round += 1) await stream.roundAnswered();
    expect(stream.reasons()).toEqual([]);
    expect(fake.listenerCount(stream.keyId)).toBe(1);
  });

  // The connection made while the fake is still silent has its auth dropped: once the fake talks
  // again it answers pings but never listens, and the watchdog must end that one too.
  it('catches a silent stream, and a connection that never listens, and reconnects once it talks again', async () => {
    const stream = watchedBroker();
    await streamReady(stream.keyId);
    const ignored = fake.ignoredWhileSilent;
    fake.setSilent(true);
    try {
      // Past the silence with nothing heard: the round ends the stream.
      stream.clock.advance(SILENCE_MS + 1);
      await until(stream.reasons, (reasons) => reasons.includes('silent'));
      // The connection tried meanwhile: its auth goes unanswered.
      await until(() => fake.ignoredWhileSilent, (count) => count > ignored);
    } finally {
      fake.setSilent(false);
    }
    // Heard (a pong) within the silence, yet not listening once the silence has passed since it opened.
    await stream.roundAnswered();
    stream.clock.advance(SILENCE_MS + 1 - ROUND_MS);
    await until(stream.listenings, (count) => count >= 2);
    expect(stream.reasons()).toEqual(['silent', 'not listening']);
    await streamReady(stream.keyId);
  });

  it('ends with a rejection when the stream refuses the key', async () => {
    const { keyId } = newBroker();
    const wrong = createAlpacaBroker({ userId: 1, mode: 'paper', keyId, secretKey: `${SECRET_PREFIX}wrong`, baseUrl: fake.url, limiter: limiters.forKey(keyId) });
    const iterator = wrong.events(new AbortController().signal)[Symbol.asyncIterator]();
    const error = await failureOf(iterator.next());
    expect(error).toBeInstanceOf(BrokerRejectedError);
  });
});
