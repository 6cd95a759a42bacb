// The KIS adapter's real-time quotes (H0STCNT0 over KIS's WebSocket) against the fake KIS on
// 127.0.0.1: quotes of the registered symbols only, with KIS's price text and the instant of its
// Korea time; frames of several records; PINGPONGs echoed; a dropped session reconnected with
// backoff and its symbols registered again; an approval key the server forgot replaced by a
// fresh one; a silent session, and one that never registers, ended by the watchdog; a refused
// approval key, too many symbols and a full session ending the stream with a clear error that
// carries no secret; an abort removing the registrations and closing the session.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLimiterRegistry } from '../../server/brokers/alpaca/index.ts';
import { createKisBroker, createMemoryTokenStore, KIS_MAX_SUBSCRIPTIONS, type KisBrokerOptions } from '../../server/brokers/kis/index.ts';
import type { ReconnectRetry } from '../../server/brokers/stream-keepalive.ts';
import { BrokerRejectedError, type Broker, type BrokerQuote } from '../../server/brokers/types.ts';
import { manualClock, type ManualClock } from '../../server/clock.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { kisTradeFrame } from '../../server/fakes/kis-quotes.ts';
import { waitFor } from '../support/wait.ts';

const SECRET_PREFIX = 'kis-app-secret-';
/** The fake's time: 09:30:15 in Seoul on 12 June 2025. */
const NOW = new Date('2025-06-12T00:30:15Z');

let fake: FakeKis;
/** One roomy registry serves as the keys' and the host's limiters: the limiters are not what is tested here. */
const limiters = createLimiterRegistry({ requestsPerMinute: 100_000 });
/** Every error a stream ended with, to check no secret reached one. */
const errorsSeen: Array<{ error: Error; secret: string }> = [];
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  // PINGPONGs from the fake's timer too, a few a second: the stream must echo them all along.
  fake = await startFakeKis({ prices: { '005930': '71000', '000660': '180000' }, now: () => NOW, pingPongIntervalMs: 200 });
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
afterAll(async () => {
  limiters.close();
  await fake.close();
});

let accounts = 0;

/** A fresh account on a fake (its own app key) and an adapter whose quote stream the test watches. */
const newBroker = (options: { on?: FakeKis; watchdogClock?: ManualClock; overrides?: Partial<KisBrokerOptions> } = {}) => {
  const target = options.on ?? fake;
  accounts += 1;
  const account = { appKey: `PS${randomUUID().replaceAll('-', '').slice(0, 16)}`, appSecret: `${SECRET_PREFIX}${randomUUID()}`, accountNo: String(60_000_000 + accounts), productCode: '01' };
  target.addAccount(account);
  const retries: ReconnectRetry[] = [];
  /** Each onSubscribed, in order: 1 for a stream's first session, 2 after its first reconnection, … */
  const subscriptions: number[] = [];
  let pingPongs = 0;
  const broker: Broker = createKisBroker({
    ...account,
    userId: 9,
    mode: 'paper',
    baseUrl: target.url,
    timeoutMs: 20_000,
    keyLimiters: limiters,
    hostLimiters: limiters,
    tokenStore: createMemoryTokenStore(),
    now: () => NOW,
    quoteStream: {
      // The watchdog stands still unless a test moves its clock, so no stall of a loaded machine
      // ends a session; its silence is the production one.
      watchdogClock: options.watchdogClock ?? manualClock(NOW),
      backoff: { initialMs: 20, maxMs: 40 },
      onRetry: (retry) => retries.push(retry),
      onSubscribed: (connection) => void subscriptions.push(connection),
      onPingPong: () => void (pingPongs += 1),
    },
    random: () => 0.999_999,
    ...options.overrides,
  });
  return { broker, appKey: account.appKey, appSecret: account.appSecret, retries, subscribed: () => subscriptions.at(-1) ?? 0, subscribedTimes: () => subscriptions.length, pingPongs: () => pingPongs };
};

const until = <T>(probe: () => T, accept: (value: T) => boolean) => waitFor(() => Promise.resolve(probe()), accept);

/** Reads the broker's quotes in the background until the test ends; `ended` is the error it ended with, if any. */
const collectQuotes = (broker: Broker, symbols: readonly string[], secret: string) => {
  const quotes: BrokerQuote[] = [];
  const controller = new AbortController();
  const state: { ended: boolean; error: Error | undefined } = { ended: false, error: undefined };
  const done = (async () => {
    try {
      for await (const quote of broker.quotes!(symbols, controller.signal)) quotes.push(quote);
    } catch (error) {
      state.error = error as Error;
      errorsSeen.push({ error: error as Error, secret });
    } finally {
      state.ended = true;
    }
  })();
  cleanups.push(() => controller.abort());
  return { quotes, done, state, stop: () => controller.abort() };
};

/** A broker streaming these symbols, once every one is registered. */
const streaming = async (symbols: readonly string[], options: Parameters<typeof newBroker>[0] = {}) => {
  const made = newBroker(options);
  const stream = collectQuotes(made.broker, symbols, made.appSecret);
  await until(made.subscribed, (count) => count === 1);
  return { ...made, ...stream };
};

const quote = (symbol: string, price: string, at: Date = NOW): BrokerQuote => ({ symbol, price, at });

describe('quotes', () => {
  it('streams the trades of the registered symbols only, with the price as KIS sent it and the instant of its Korea time', async () => {
    const stream = await streaming(['005930', '000660']);
    expect(fake.quotes.sessions()).toContainEqual(['000660', '005930']);
    fake.setPrice('005930', '71500');
    // A symbol nobody registered: the fake sends it to no one.
    fake.setPrice('035720', '48000');
    // A frame carrying a record of a symbol this stream did not ask for besides one it did: only the latter is a quote.
    const later = new Date('2025-06-12T00:31:02Z');
    fake.quotes.sendRaw(kisTradeFrame([{ symbol: '035720', price: '48050', at: later }, { symbol: '000660', price: '180500', at: later }]));
    // The stream keeps its order: once this one is in, everything before it was read.
    fake.setPrice('000660', '181000');
    await until(() => stream.quotes.length, (count) => count >= 3);
    expect(stream.quotes).toEqual([quote('005930', '71500'), quote('000660', '180500', later), quote('000660', '181000')]);
    // The record's HHMMSS in Seoul: 09:31:02 KST is 00:31:02 UTC.
    expect(stream.quotes[1]!.at.toISOString()).toBe('2025-06-12T00:31:02.000Z');
  });

  it('reads every record of a frame of several, in order', async () => {
    const stream = await streaming(['005930']);
    const seconds = [1, 2, 3].map((second) => new Date(NOW.getTime() + second * 1_000));
    fake.quotes.publish([
      { symbol: '005930', price: '71600', at: seconds[0]! },
      { symbol: '005930', price: '71700', at: seconds[1]! },
      { symbol: '005930', price: '71650', at: seconds[2]! },
    ]);
    await until(() => stream.quotes.length, (count) => count >= 3);
    expect(stream.quotes).toEqual([quote('005930', '71600', seconds[0]), quote('005930', '71700', seconds[1]), quote('005930', '71650', seconds[2])]);
  });

  it('echoes every PINGPONG and stays on the one session', async () => {
    const stream = await streaming(['005930']);
    const echoes = fake.quotes.pingPongEchoes;
    fake.quotes.pingPong();
    // The fake's timer sends its own too: several are echoed, each once.
    await until(stream.pingPongs, (count) => count >= 3);
    await until(() => fake.quotes.pingPongEchoes - echoes, (count) => count >= 3);
    expect(stream.retries).toEqual([]);
    expect(stream.subscribed()).toBe(1);
  });

  it('reconnects a dropped session with a bounded backoff, registers its symbols again and streams again', async () => {
    const stream = await streaming(['005930', '000660']);
    const connectionsBefore = fake.quotes.connections;
    const issuancesBefore = fake.approvalIssuances;
    // The session drops, and the next two attempts are dropped on arrival.
    fake.quotes.drop(2);
    await until(stream.subscribed, (count) => count === 2);
    expect(fake.quotes.connections - connectionsBefore).toBe(3);
    expect(stream.retries.map((retry) => retry.attempt)).toEqual([1, 2, 3]);
    // Doubling from 20 ms, capped at 40: the third wait would be 80 ms without the cap.
    expect(stream.retries.map((retry) => retry.delayMs)).toEqual([20, 40, 40]);
    // The approval key outlives its session: no new one was asked for.
    expect(fake.approvalIssuances).toBe(issuancesBefore);
    const registrations = fake.quotes.requests.filter((request) => request.appKey === stream.appKey && request.trType === '1');
    expect(registrations.map((request) => request.trKey).sort()).toEqual(['000660', '000660', '005930', '005930']);
    fake.setPrice('000660', '182000');
    await until(() => stream.quotes.length, (count) => count >= 1);
    expect(stream.quotes).toEqual([quote('000660', '182000')]);
  });

  it('asks for a fresh approval key when the server no longer knows the one it has', async () => {
    const stream = await streaming(['005930']);
    const issuancesBefore = fake.approvalIssuances;
    fake.forgetApprovals();
    fake.quotes.drop();
    await until(stream.subscribed, (count) => count === 2);
    expect(stream.retries.map((retry) => retry.reason)).toEqual(['closed (1006)', 'approval key refused: invalid approval : NOT FOUND (OPSP0011)']);
    expect(fake.approvalIssuances).toBe(issuancesBefore + 1);
    fake.setPrice('005930', '72000');
    await until(() => stream.quotes.length, (count) => count >= 1);
    expect(stream.quotes).toEqual([quote('005930', '72000')]);
  });

  it('removes its registrations and closes the session when the signal aborts; a new set of symbols is a new session on the same approval key', async () => {
    const stream = await streaming(['005930', '000660']);
    const issuancesBefore = fake.approvalIssuances;
    const sessionsBefore = fake.quotes.sessions().length;
    stream.stop();
    await stream.done;
    expect(stream.state.error).toBeUndefined();
    await until(() => fake.quotes.sessions().length, (count) => count === sessionsBefore - 1);
    const removals = () => fake.quotes.requests.filter((request) => request.appKey === stream.appKey && request.trType === '2').map((request) => request.trKey);
    expect(removals().sort()).toEqual(['000660', '005930']);

    const next = collectQuotes(stream.broker, ['035720'], stream.appSecret);
    await until(stream.subscribedTimes, (times) => times === 2);
    expect(stream.subscribed()).toBe(1);
    fake.setPrice('035720', '48100');
    await until(() => next.quotes.length, (count) => count >= 1);
    expect(next.quotes).toEqual([quote('035720', '48100')]);
    expect(fake.approvalIssuances).toBe(issuancesBefore);
  });
});

describe('the watchdog', () => {
  const SILENCE_MS = 30_000;
  const ROUND_MS = SILENCE_MS / 4;

  it('keeps a quiet session that echoes its PINGPONGs, well past the silence', async () => {
    const clock = manualClock(NOW);
    const stream = await streaming(['005930'], { watchdogClock: clock });
    // Eight rounds, twice the silence, with nothing but PINGPONGs heard.
    for (let round = 0; round < 8; round += 1) {
      const heard = stream.pingPongs();
      fake.quotes.pingPong();
      await until(stream.pingPongs, (count) => count > heard);
      clock.advance(ROUND_MS);
    }
    expect(stream.retries).toEqual([]);
    expect(stream.subscribed()).toBe(1);
  });

  // The connection made while the fake is still silent has its registrations dropped: once the
  // fake talks again it answers, but never registers, and the watchdog must end that one too.
  it('ends a silent session, and one that never registers, and streams again once the server talks', async () => {
    const clock = manualClock(NOW);
    const stream = await streaming(['005930', '000660'], { watchdogClock: clock });
    const ignored = fake.quotes.ignoredWhileSilent;
    fake.quotes.setSilent(true);
    try {
      // Past the silence with nothing heard: the round ends the session.
      clock.advance(SILENCE_MS + 1);
      await until(() => stream.retries.map((retry) => retry.reason), (reasons) => reasons.includes('silent'));
      // The session tried meanwhile: its two registrations go unanswered.
      await until(() => fake.quotes.ignoredWhileSilent - ignored, (count) => count >= 2);
    } finally {
      fake.quotes.setSilent(false);
    }
    // Heard within the silence (a round's ping answered, then a PINGPONG), yet not registered once the silence has passed since it opened.
    clock.advance(ROUND_MS);
    const heard = stream.pingPongs();
    fake.quotes.pingPong();
    await until(stream.pingPongs, (count) => count > heard);
    clock.advance(SILENCE_MS + 1 - ROUND_MS);
    await until(stream.subscribed, (count) => count === 2);
    expect(stream.retries.map((retry) => retry.reason)).toEqual(['silent', 'not subscribed']);
    fake.setPrice('005930', '70900');
    await until(() => stream.quotes.length, (count) => count >= 1);
    expect(stream.quotes).toEqual([quote('005930', '70900')]);
  });
});

describe('refusals', () => {
  it('ends with a clear refusal, without the secret, when KIS will not issue an approval key', async () => {
    const { broker, appSecret } = newBroker();
    // KIS's message echoes the secret here: it must not reach the error.
    fake.refuseApprovals(`앱 시크릿 ${appSecret} 로 실시간 접속키를 발급할 수 없습니다`);
    try {
      const connectionsBefore = fake.quotes.connections;
      const stream = collectQuotes(broker, ['005930'], appSecret);
      await stream.done;
      expect(stream.state.error).toBeInstanceOf(BrokerRejectedError);
      expect(stream.state.error!.message).toBe('KIS refused to issue a WebSocket approval key: 앱 시크릿 [redacted] 로 실시간 접속키를 발급할 수 없습니다 (EGW00004)');
      expect(fake.quotes.connections).toBe(connectionsBefore);
    } finally {
      fake.refuseApprovals(undefined);
    }
  });

  it('ends with a refusal when the app secret is wrong', async () => {
    const { appKey } = newBroker();
    const wrongSecret = `${SECRET_PREFIX}wrong-${randomUUID()}`;
    const wrong = createKisBroker({ userId: 9, mode: 'paper', appKey, appSecret: wrongSecret, accountNo: '60000000', productCode: '01', baseUrl: fake.url, keyLimiters: limiters, hostLimiters: limiters, tokenStore: createMemoryTokenStore() });
    const stream = collectQuotes(wrong, ['005930'], wrongSecret);
    await stream.done;
    expect(stream.state.error).toBeInstanceOf(BrokerRejectedError);
    expect(stream.state.error!.message).toContain('KIS refused to issue a WebSocket approval key');
    expect(stream.state.error!.message).toContain('(EGW00105)');
  });

  it(`refuses more than ${KIS_MAX_SUBSCRIPTIONS} symbols before connecting`, async () => {
    const { broker, appSecret } = newBroker();
    const symbols = Array.from({ length: KIS_MAX_SUBSCRIPTIONS + 1 }, (_, index) => String(100_000 + index));
    const connectionsBefore = fake.quotes.connections;
    const issuancesBefore = fake.approvalIssuances;
    const stream = collectQuotes(broker, symbols, appSecret);
    await stream.done;
    expect(stream.state.error).toBeInstanceOf(BrokerRejectedError);
    expect(stream.state.error!.message).toBe(`KIS streams at most ${KIS_MAX_SUBSCRIPTIONS} symbols on one session; ${KIS_MAX_SUBSCRIPTIONS + 1} were asked for`);
    expect(fake.quotes.connections).toBe(connectionsBefore);
    expect(fake.approvalIssuances).toBe(issuancesBefore);
    // The same symbol twice is one registration: 41 distinct ones are taken.
    const most = collectQuotes(broker, [...symbols.slice(0, KIS_MAX_SUBSCRIPTIONS), symbols[0]!], appSecret);
    await until(() => fake.quotes.sessions().filter((held) => held.length === KIS_MAX_SUBSCRIPTIONS).length, (count) => count === 1);
    expect(most.state.ended).toBe(false);
  });

  it('ends with a refusal when the session is full at KIS', async () => {
    const small = await startFakeKis({ now: () => NOW, quoteSubscriptionLimit: 2 });
    try {
      const { broker, appSecret } = newBroker({ on: small });
      const stream = collectQuotes(broker, ['005930', '000660', '035720'], appSecret);
      await stream.done;
      expect(stream.state.error).toBeInstanceOf(BrokerRejectedError);
      expect(stream.state.error!.message).toBe('KIS refused to register more real-time prices on the session (3 asked for): MAX SUBSCRIBE OVER (OPSP0008)');
      await until(() => small.quotes.sessions().length, (count) => count === 0);
    } finally {
      await small.close();
    }
  });

  it('never put a secret in an error', () => {
    expect(errorsSeen.length).toBeGreaterThanOrEqual(4);
    for (const { error, secret } of errorsSeen) expect(error.message).not.toContain(secret);
  });
});
