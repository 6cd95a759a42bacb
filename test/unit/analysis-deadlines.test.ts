// An analysis's deadlines, a call's and a report's, are on the service's clock: a test moves the
// clock past one rather than waiting for it, and a clock standing still never ends a slow answer.
// Each case here would wait a minute of real time if a deadline were on the event loop's timers.
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiClient } from '../../server/analysis/llm/openai.ts';
import { runAgents } from '../../server/analysis/orchestrator.ts';
import { LlmError, type AnalysisInput, type LlmCall, type LlmClient } from '../../server/analysis/types.ts';
import { manualClock } from '../../server/clock.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';
import { waitFor } from '../support/wait.ts';

const MINUTE_MS = 60_000;

const input: AnalysisInput = {
  assetClass: 'us_equity',
  symbol: 'AAPL',
  currency: 'USD',
  tick: { rule: 'fixed', size: '0.01' },
  bars: Array.from({ length: 60 }, (_, i) => {
    const close = 100 + i;
    return { date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10), open: close, high: close + 1, low: close - 1, close, volume: 1_000_000 };
  }),
};

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('a call to the provider', () => {
  it('times out when the clock passes its deadline', async () => {
    fake = await startFakeLlm({ answer: () => 'hang' });
    const clock = manualClock('2026-03-10T15:00:00Z');
    const client = createOpenAiClient({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', model: 'gpt-4o-mini', prices: {}, timeoutMs: MINUTE_MS, clock, maxRetries: 0, backoff: { baseMs: 1, maxMs: 1 } });
    const outcome = client.complete({ system: 'technical', user: '{}', maxOutputTokens: 100, timeoutMs: MINUTE_MS }).then(
      () => new Error('expected the call to time out'),
      (error: unknown) => error,
    );
    // The deadline is set before the request is sent: once the fake holds it, moving the clock ends it.
    await waitFor(
      () => Promise.resolve(fake!.requests.length),
      (count) => count === 1,
    );
    clock.advance(MINUTE_MS);
    const error = await outcome;
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: 'timeout' });
  });
});

describe('a run of the agents', () => {
  it('stops at the report cap when the clock passes it, naming the cap', async () => {
    const clock = manualClock('2026-03-10T15:00:00Z');
    let asked!: () => void;
    const called = new Promise<void>((resolve) => (asked = resolve));
    // A provider that never answers: the call ends only when the run's signal aborts it.
    const llm: LlmClient = {
      provider: 'openai',
      model: 'fake',
      complete: ({ signal }: LlmCall) =>
        new Promise((_resolve, reject) => {
          asked();
          signal?.addEventListener('abort', () => reject(new LlmError('aborted', 'aborted by the run')), { once: true });
        }),
    };
    const run = runAgents({
      input,
      mode: 'quick',
      debateRounds: 0,
      llm,
      intel: null,
      clock,
      caps: { tokensPerCall: 1_000, tokensPerReport: 10_000, reportTimeoutMs: MINUTE_MS, callTimeoutMs: 10 * MINUTE_MS },
      onStep: () => Promise.resolve(),
    });
    await called;
    clock.advance(MINUTE_MS);
    const outcome = await run;
    expect(outcome.capReached).toBe('wall_clock');
    expect(outcome.technical).toBeNull();
  });
});
