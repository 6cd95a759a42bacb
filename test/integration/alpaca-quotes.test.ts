// The Alpaca adapter's quote stream (`Broker.quotes`) against the fake Alpaca's real-time data
// stream on 127.0.0.1: the subscribed symbols' trades only, in order, as exact decimal text; a
// dropped or silent connection reconnects, authenticates and subscribes again; a second
// connection of the key waits its turn; refusals end the stream with no secret; abort closes it.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAlpacaBroker, createLimiterRegistry, dataStreamUrlOf, type AlpacaBrokerOptions, type StreamRetry } from '../../server/brokers/alpaca/index.ts';
import { BrokerRejectedError, type Broker, type BrokerQuote } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { waitFor } from '../support/wait.ts';

const SECRET_PREFIX = 'sk-alpaca-secret-';

let fake: FakeAlpaca;
const limiters = createLimiterRegistry({ requestsPerMinute: 100_000 });
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  fake = await startFakeAlpaca({ prices: { AAPL: '100', MSFT: '400.25', TSLA: '250' } });
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
afterAll(async () => {
  limiters.close();
  await fake.close();
});

/** waitFor over a probe that needs no waiting of its own. */
const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

/** A fresh account on the fake (its own key) and an adapter for it, its retries recorded. */
const newBroker = (options: Partial<AlpacaBrokerOptions> = {}) => {
  const keyId = `PK${randomUUID().slice(0, 12).toUpperCase()}`;
  const secretKey = `${SECRET_PREFIX}${randomUUID()}`;
  fake.addAccount({ keyId, secretKey, cash: '100000' });
  const retries: StreamRetry[] = [];
  const broker = createAlpacaBroker({
    userId: 7,
    mode: 'paper',
    keyId,
    secretKey,
    baseUrl: fake.url,
    dataUrl: fake.url,
    limiter: limiters.forKey(keyId),
    // The watchdog stands still unless a test moves its clock, so no stall of a loaded machine ends a stream.
    watchdogClock: manualClock(),
    backoff: { initialMs: 20, maxMs: 200 },
    onRetry: (retry) => retries.push(retry),
    ...options,
  });
  return { broker, keyId, secretKey, retries };
};

/** Reads the broker's quotes of the symbols in the background until the test ends (or stop()). */
const collectQuotes = (broker: Broker, symbols: string[]) => {
  const quotes: BrokerQuote[] = [];
  const controller = new AbortController();
  let failure: Error | undefined;
  const done = (async () => {
    try {
      for await (const quote of broker.quotes!(symbols, controller.signal)) quotes.push(quote);
    } catch (error) {
      failure = error as Error;
    }
  })();
  cleanups.push(() => controller.abort());
  return { quotes, done, stop: () => controller.abort(), failure: () => failure };
};

/** The key has one data connection, subscribed to exactly these trades. */
const subscribed = (keyId: string, symbols: string[]) => until(() => fake.data.subscriptionsOf(keyId), (subscriptions) => JSON.stringify(subscriptions) === JSON.stringify([[...symbols].sort()]));

const actionsOf = (keyId: string, action: 'auth' | 'subscribe') => fake.data.actions.filter((entry) => entry.keyId === keyId && entry.action === action);

/** What the adapter must make of the fake's printed trades of these symbols since `from`. */
const expectedQuotes = (from: number, symbols: string[]) =>
  fake.data.printed
    .slice(from)
    .filter((trade) => symbols.includes(trade.S))
    .map((trade) => ({ symbol: trade.S, price: String(trade.p), at: trade.t.slice(0, 23) }));
const seen = (quotes: BrokerQuote[]) => quotes.map((quote) => ({ symbol: quote.symbol, price: quote.price, at: quote.at.toISOString().slice(0, 23) }));

describe('Broker.quotes on the Alpaca data stream', () => {
  it('derives the data stream URL from the data origin: Alpaca serves it on its stream host, any other origin itself', () => {
    expect(dataStreamUrlOf('https://data.alpaca.markets')).toBe('wss://stream.data.alpaca.markets/v2/iex');
    expect(dataStreamUrlOf('https://data.sandbox.alpaca.markets')).toBe('wss://stream.data.sandbox.alpaca.markets/v2/iex');
    expect(dataStreamUrlOf(fake.url)).toBe(fake.dataStreamUrl);
  });

  it('yields the subscribed symbols’ trades only, in order, as exact decimal text with the trade’s time', async () => {
    const { broker, keyId } = newBroker();
    const { quotes } = collectQuotes(broker, ['AAPL', 'MSFT']);
    await subscribed(keyId, ['AAPL', 'MSFT']);
    const from = fake.data.printed.length;
    const framesBefore = fake.data.frameSizes.length;
    // Set in one turn of the event loop: the fake sends these trades in one frame.
    fake.setPrice('AAPL', '189.12');
    fake.setPrice('TSLA', '251.5');
    fake.setPrice('MSFT', '400.125');
    fake.setPrice('AAPL', '189.1');
    await until(() => quotes.length, (count) => count >= 3);
    // And one more frame after it: a JSON number's shortest form (100.10 is sent as 100.1).
    fake.setPrice('TSLA', '252');
    fake.setPrice('MSFT', '0.0001');
    fake.setPrice('AAPL', '100.10');
    await until(() => quotes.length, (count) => count >= 5);
    expect(seen(quotes)).toEqual(expectedQuotes(from, ['AAPL', 'MSFT']));
    expect(quotes.map((quote) => `${quote.symbol} ${quote.price}`)).toEqual(['AAPL 189.12', 'MSFT 400.125', 'AAPL 189.1', 'MSFT 0.0001', 'AAPL 100.1']);
    // The trades' stamps carry nanoseconds; the quotes keep their milliseconds.
    expect(fake.data.printed.at(-1)!.t).toMatch(/\.\d{9}Z$/);
    // Several trades shared a frame: the adapter read each message of it.
    expect(fake.data.frameSizes.slice(framesBefore).some((size) => size >= 2)).toBe(true);
  });

  it('reconnects after a drop, authenticates and subscribes again, and quotes go on', async () => {
    const { broker, keyId, retries } = newBroker({ random: () => 0.999_999 });
    const { quotes } = collectQuotes(broker, ['AAPL']);
    await subscribed(keyId, ['AAPL']);
    fake.setPrice('AAPL', '150.01');
    await until(() => quotes.length, (count) => count === 1);
    const connectionsBefore = fake.data.connections;
    // The connection drops, and the next attempt is dropped on arrival.
    fake.data.drop(1);
    await until(() => actionsOf(keyId, 'subscribe').length, (count) => count === 2);
    await subscribed(keyId, ['AAPL']);
    expect(fake.data.connections - connectionsBefore).toBe(2);
    expect(retries.map((retry) => retry.attempt)).toEqual([1, 2]);
    // Doubling from 20 ms.
    expect(retries.map((retry) => retry.delayMs)).toEqual([20, 40]);
    expect(actionsOf(keyId, 'auth').map((entry) => entry.accepted)).toEqual([true, true]);
    expect(actionsOf(keyId, 'subscribe').map((entry) => entry.symbols)).toEqual([['AAPL'], ['AAPL']]);
    fake.setPrice('AAPL', '150.02');
    await until(() => quotes.length, (count) => count === 2);
    expect(quotes.map((quote) => quote.price)).toEqual(['150.01', '150.02']);
  });

  // The watchdog on a clock the test moves: its rounds (a quarter of the silence apart) run when
  // the clock crosses them, and a pong is waited for before the clock moves on.
  it('catches a silent stream, and a connection that never subscribes, and quotes go on once it talks again', async () => {
    const SILENCE_MS = 30_000;
    const ROUND_MS = SILENCE_MS / 4;
    const clock = manualClock();
    let pongs = 0;
    const { broker, keyId, retries } = newBroker({ watchdogClock: clock, onPong: () => void (pongs += 1) });
    const { quotes } = collectQuotes(broker, ['MSFT']);
    await subscribed(keyId, ['MSFT']);
    const connectionsBefore = fake.data.connections;
    fake.setSilent(true);
    try {
      clock.advance(SILENCE_MS + 1);
      await until(() => retries.map((retry) => retry.reason), (reasons) => reasons.includes('silent'));
      // The connection tried meanwhile gets no `connected`, so it never authenticates.
      await until(() => fake.data.connections, (count) => count > connectionsBefore);
    } finally {
      fake.setSilent(false);
    }
    // Heard (a pong) within the silence, yet not subscribed once the silence has passed since it opened.
    const before = pongs;
    clock.advance(ROUND_MS);
    await until(() => pongs, (count) => count > before);
    clock.advance(SILENCE_MS + 1 - ROUND_MS);
    await until(() => retries.length, (count) => count >= 2);
    expect(retries.map((retry) => retry.reason)).toEqual(['silent', 'not listening']);
    await subscribed(keyId, ['MSFT']);
    fake.setPrice('MSFT', '401.5');
    await until(() => quotes.length, (count) => count === 1);
    expect(quotes[0]).toMatchObject({ symbol: 'MSFT', price: '401.5' });
  });

  it('retries a second connection of the key (406 connection limit exceeded) until the first one ends', async () => {
    const { broker, keyId, retries } = newBroker();
    const first = collectQuotes(broker, ['AAPL']);
    await subscribed(keyId, ['AAPL']);
    // A new set of symbols is a new call: until the old one is aborted, Alpaca refuses the second connection.
    const second = collectQuotes(broker, ['TSLA']);
    await until(() => retries.map((retry) => retry.reason), (reasons) => reasons.length > 0);
    expect(actionsOf(keyId, 'auth').some((entry) => !entry.accepted)).toBe(true);
    first.stop();
    await first.done;
    await subscribed(keyId, ['TSLA']);
    fake.setPrice('TSLA', '260.25');
    await until(() => second.quotes.length, (count) => count === 1);
    expect(second.quotes[0]).toMatchObject({ symbol: 'TSLA', price: '260.25' });
    expect(second.failure()).toBeUndefined();
  });

  it('ends with BrokerRejectedError on a wrong secret, without retrying, and the secret in no message', async () => {
    const { keyId } = newBroker();
    const wrongSecret = `${SECRET_PREFIX}wrong-${randomUUID()}`;
    const connectionsBefore = fake.data.connections;
    // The account's key id with a secret of another.
    const wrong = newBroker({ keyId, secretKey: wrongSecret });
    const iterator = wrong.broker.quotes!(['AAPL'], new AbortController().signal)[Symbol.asyncIterator]();
    const error = await iterator.next().then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect(error!.message).toBe("Alpaca's market data stream refused the key (402 auth failed)");
    expect(JSON.stringify({ message: error!.message, stack: error!.stack })).not.toContain(wrongSecret);
    expect(wrong.retries).toEqual([]);
    expect(fake.data.connections - connectionsBefore).toBe(1);
    // The fake leaves a refused key's socket open: the adapter closes it.
    await until(() => fake.data.socketCount(), (count) => count === 0);
  });

  it('ends with BrokerRejectedError when the feed is not in the plan (409), and retries an auth timeout (404)', async () => {
    const refused = newBroker();
    fake.data.failAuthNext(409, 'insufficient subscription');
    const { done, failure } = collectQuotes(refused.broker, ['AAPL']);
    await done;
    expect(failure()).toBeInstanceOf(BrokerRejectedError);
    expect(failure()!.message).toBe("Alpaca's market data stream refused the request (409 insufficient subscription)");
    expect(refused.retries).toEqual([]);

    const retried = newBroker();
    fake.data.failAuthNext(404, 'auth timeout');
    const { quotes } = collectQuotes(retried.broker, ['AAPL']);
    await subscribed(retried.keyId, ['AAPL']);
    expect(retried.retries).toHaveLength(1);
    fake.setPrice('AAPL', '101.25');
    await until(() => quotes.length, (count) => count === 1);
  });

  it('ends when the signal aborts, closing its socket, and reconnects no more', async () => {
    const { broker, keyId, retries } = newBroker();
    const { done, stop, failure } = collectQuotes(broker, ['AAPL']);
    await subscribed(keyId, ['AAPL']);
    const connectionsBefore = fake.data.connections;
    stop();
    await done;
    expect(failure()).toBeUndefined();
    await until(() => fake.data.socketCount(keyId), (count) => count === 0);
    // A price after the end reaches nobody, and nothing connects again.
    fake.setPrice('AAPL', '102');
    expect(retries).toEqual([]);
    expect(fake.data.connections).toBe(connectionsBefore);
  });

  it('connects for no symbols at all, and ends on abort', async () => {
    const { broker } = newBroker();
    const connectionsBefore = fake.data.connections;
    const { done, stop, quotes } = collectQuotes(broker, []);
    stop();
    await done;
    expect(quotes).toEqual([]);
    expect(fake.data.connections).toBe(connectionsBefore);
  });
});
