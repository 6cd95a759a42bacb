// The ccxt adapter's trade price stream (`quotes`, the order emulator's input) through ccxt's pro
// binance class against the fake Binance's market streams on 127.0.0.1: the subscribed symbols'
// trades only, each once, as the exchange's decimal text at the trade's time; a dropped or silent
// connection reconnected with the quotes going on; abort ending the iterator and its socket; an
// unlisted symbol refused; no `quotes` where ccxt's pro class of the exchange watches no trades.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestLimiter } from '../../server/brokers/alpaca/limiter.ts';
import { createCcxtBroker, unknownCcxtExchangeIds, type CcxtBrokerOptions } from '../../server/brokers/ccxt/index.ts';
import { BrokerRejectedError, type BrokerQuote } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { capturedLogger } from '../support/logs.ts';
import { waitFor } from '../support/wait.ts';
import { advanceUntilDropped, ROOMY_SILENCE_SECONDS, ROOMY_TIMEOUT_MS, ROUND_MS } from '../support/watchdog.ts';

let fake: FakeBinance;

beforeAll(async () => {
  fake = await startFakeBinance({ prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });
  // What real mode does at start-up: ccxt is loaded before any adapter is built.
  expect(await unknownCcxtExchangeIds(['binance'])).toEqual([]);
});
afterAll(async () => {
  await fake?.close();
});

const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

const adapterOf = (overrides: Partial<CcxtBrokerOptions> = {}) =>
  createCcxtBroker({
    userId: 1,
    mode: 'paper',
    exchangeId: 'binance',
    apiKey: `bn-${randomBytes(6).toString('hex')}`,
    secret: `bn-secret-${randomBytes(16).toString('hex')}`,
    baseUrl: fake.url,
    timeoutMs: ROOMY_TIMEOUT_MS,
    limiter: createRequestLimiter({ requestsPerMinute: 60_000, burst: 100 }),
    silenceSeconds: ROOMY_SILENCE_SECONDS,
    streamBackoff: { initialMs: 20, maxMs: 200 },
    ...overrides,
  });

/** The adapter's quotes of `symbols` collected until `stop`. */
const watching = (symbols: string[], overrides: Partial<CcxtBrokerOptions> = {}) => {
  const adapter = adapterOf(overrides);
  if (!adapter.quotes) throw new Error('the binance adapter has no quotes');
  const quotes: BrokerQuote[] = [];
  const controller = new AbortController();
  let failure: unknown;
  let ended = false;
  const iterable = adapter.quotes(symbols, controller.signal);
  const running = (async () => {
    try {
      for await (const quote of iterable) quotes.push(quote);
    } catch (error) {
      failure = error;
    }
    ended = true;
  })();
  return {
    quotes,
    failure: () => failure,
    ended: () => ended,
    /** Ends the stream; resolves once the fake has seen its socket close (no test's socket outlives it). */
    stop: async () => {
      controller.abort();
      await running;
      await until(() => fake.marketStreamSubscribers(), (count) => count === 0);
    },
  };
};

/** The trades the fake sent on a stream (`btcusdt@trade`), from `from` on. */
const sentOn = (stream: string, from = 0) => fake.marketTradesSent().filter((trade) => trade.stream === stream && trade.t >= from);
const nextTradeId = (stream: string) => (sentOn(stream).at(-1)?.t ?? 0) + 1;
const subscribed = (stream: string) => until(() => fake.marketStreamSubscribers(stream), (seen) => seen === 1);

describe('ccxt quotes by watchTradesForSymbols on the fake Binance', () => {
  it('reports the subscribed symbols’ trades only, as the exchange’s decimal text, at the trade’s time', async () => {
    const stream = watching(['BTC/USDT']);
    await subscribed('btcusdt@trade');
    const from = nextTradeId('btcusdt@trade');
    const tradeTimes = [Date.UTC(2024, 0, 2, 3, 4, 5, 678), Date.UTC(2024, 0, 2, 3, 4, 6, 1)];
    fake.setPrice('ETHUSDT', '3001.5');
    fake.setPrice('BTCUSDT', '50123.45', tradeTimes[0]);
    fake.setPrice('BTCUSDT', '50123.4', tradeTimes[1]);
    await until(() => stream.quotes.length, (count) => count >= 2);
    const sent = sentOn('btcusdt@trade', from);
    expect(sent.map((trade) => trade.T)).toEqual(tradeTimes);
    // Binance's text as sent (8 places), not the shortest text of ccxt's number ('50123.45').
    expect(sent.map((trade) => trade.p)).toEqual(['50123.45000000', '50123.40000000']);
    expect(stream.quotes).toEqual(sent.map((trade) => ({ symbol: 'BTC/USDT', price: trade.p, at: new Date(trade.T) })));
    // ETH was never asked for: not subscribed at the exchange, so never reported.
    expect(fake.marketStreamSubscribers('ethusdt@trade')).toBe(0);
    await stream.stop();
    expect(stream.failure()).toBeUndefined();
  });

  it('reports several symbols over one subscription, every trade once, in order within its symbol, under the symbol as asked', async () => {
    const connections = fake.marketStreamConnections;
    const stream = watching(['btc/usdt', 'ETH/USDT']);
    await subscribed('btcusdt@trade');
    await subscribed('ethusdt@trade');
    expect(fake.marketStreamConnections).toBe(connections + 1);
    const from = { btc: nextTradeId('btcusdt@trade'), eth: nextTradeId('ethusdt@trade') };
    // Alternating, back to back: a trade that comes while no watch waits (the other symbol's woke it) is still reported.
    for (let step = 1; step <= 6; step += 1) {
      fake.setPrice('BTCUSDT', `5000${step}.1`);
      fake.setPrice('ETHUSDT', `300${step}.25`);
    }
    await until(() => stream.quotes.length, (count) => count >= 12);
    const btc = sentOn('btcusdt@trade', from.btc);
    const eth = sentOn('ethusdt@trade', from.eth);
    expect(stream.quotes.filter((quote) => quote.symbol === 'btc/usdt').map((quote) => quote.price)).toEqual(btc.map((trade) => trade.p));
    expect(stream.quotes.filter((quote) => quote.symbol === 'ETH/USDT').map((quote) => quote.price)).toEqual(eth.map((trade) => trade.p));
    expect(stream.quotes).toHaveLength(12);
    await stream.stop();
  });

  it('reconnects after the connection drops (the next ones refused), and the quotes go on', async () => {
    const stream = watching(['BTC/USDT']);
    await subscribed('btcusdt@trade');
    fake.setPrice('BTCUSDT', '50200');
    await until(() => stream.quotes.length, (count) => count === 1);
    const connections = fake.marketStreamConnections;
    fake.dropMarketStreams(2);
    await until(() => fake.marketStreamConnections, (count) => count >= connections + 3);
    await subscribed('btcusdt@trade');
    const from = nextTradeId('btcusdt@trade');
    fake.setPrice('BTCUSDT', '50210.5');
    await until(() => stream.quotes.length, (count) => count === 2);
    expect(stream.quotes.at(-1)).toEqual({ symbol: 'BTC/USDT', price: sentOn('btcusdt@trade', from)[0]!.p, at: new Date(sentOn('btcusdt@trade', from)[0]!.T) });
    expect(stream.failure()).toBeUndefined();
    expect(stream.ended()).toBe(false);
    await stream.stop();
  });

  it('reconnects a connection gone silent (no trades, no pongs) by its watchdog', async () => {
    const logs = capturedLogger('warn');
    const clock = manualClock();
    const stream = watching(['ETH/USDT'], { watchdogClock: clock, logger: logs.logger });
    await subscribed('ethusdt@trade');
    const connections = fake.marketStreamConnections;
    fake.silenceMarketStreams();
    const firstDrop = () => logs.lines.find((line) => line.msg === 'ccxt stream: the trade price stream dropped; reconnecting');
    await advanceUntilDropped(clock, ROUND_MS, firstDrop);
    expect(firstDrop()).toMatchObject({ reason: 'silent' });
    await subscribed('ethusdt@trade');
    expect(fake.marketStreamConnections).toBeGreaterThan(connections);
    fake.setPrice('ETHUSDT', '3050.75');
    await until(() => stream.quotes.length, (count) => count === 1);
    expect(stream.quotes[0]).toMatchObject({ symbol: 'ETH/USDT', price: '3050.75000000' });
    await stream.stop();
  });

  it('ends the iterator when the signal aborts, and closes its connection', async () => {
    const stream = watching(['BTC/USDT']);
    await subscribed('btcusdt@trade');
    const connections = fake.marketStreamConnections;
    await stream.stop();
    expect(stream.ended()).toBe(true);
    expect(stream.failure()).toBeUndefined();
    expect(fake.marketStreamSubscribers('btcusdt@trade')).toBe(0);
    fake.setPrice('BTCUSDT', '50300');
    expect(stream.quotes).toEqual([]);
    expect(fake.marketStreamConnections).toBe(connections);
  });

  it('ends with a refusal for a symbol the exchange does not list, without connecting', async () => {
    const connections = fake.marketStreamConnections;
    const stream = watching(['BTC/USDT', 'DOGE/USDT']);
    await until(() => stream.ended(), (ended) => ended);
    expect(stream.failure()).toBeInstanceOf(BrokerRejectedError);
    expect((stream.failure() as Error).message).toMatch(/DOGE\/USDT/);
    expect(fake.marketStreamConnections).toBe(connections);
  });

  it('has no quotes where ccxt’s pro class of the exchange watches no trades', () => {
    // bitflyer has no pro class in ccxt; bydfi has one without watchTrades. No call is made.
    const streamsTrades = (exchangeId: string) => adapterOf({ exchangeId, mode: 'live', baseUrl: undefined }).quotes !== undefined;
    expect(['bitflyer', 'bydfi', 'binance'].map(streamsTrades)).toEqual([false, false, true]);
  });
});
