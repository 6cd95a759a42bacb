// Analysis on a real LLM wire format, against a local fake provider on 127.0.0.1: valid answers,
// an invalid one asked again, a 429 retried, a call that never answers, the token cap, usage and
// cost recorded, the daily budgets (what deleting a report does not give back, the reset at 00:00
// UTC), and Anthropic's Messages API beside OpenAI's chat completions. The deadlines (a call's,
// a report's) are on the service's clock, which stands still unless a test moves it: a call that
// answers is never timed out however loaded the machine, and one that hangs times out when the
// test moves the clock past its deadline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userSpentOn } from '../../server/analysis/queries.ts';
import { manualClock } from '../../server/clock.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startFakeLlm, type FakeAnswer, type FakeLlm, type FakeLlmRequest } from '../support/fake-llm.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
/** Generous: only a test moving the clock ever reaches it. */
const CALL_TIMEOUT_MS = 30_000;
let fake: FakeLlm;
let server: TestServer;

/** A valid answer for whichever agent asks (told apart by the fields its prompt names). */
const validFor = (request: FakeLlmRequest): string => {
  const system = String(request.body?.messages?.[0]?.content ?? request.body?.system ?? '');
  if (system.includes('ideal_buy'))
    return JSON.stringify({ signal: 'buy', confidence: 0.6, score: 0.4, ideal_buy: 150, secondary_buy: 145, stop_loss: 140, take_profit: 170, currency: 'USD', reasoning: 'Uptrend above its averages.' });
  if (system.includes('veto_buy'))
    return JSON.stringify({ risk_level: 'low', veto_buy: false, flags: [], volatility: 0.2, max_drawdown: -0.1, atr: 2, atr_stop: 146, reasoning: 'Calm.' });
  if (system.includes('stance')) return JSON.stringify({ stance: 'bull', argument: 'Trend is up.', confidence: 0.5 });
  if (system.includes('sources')) return JSON.stringify({ signal: 'hold', confidence: 0, reasoning: 'No source configured.', sources: [] });
  return JSON.stringify({ signal: 'buy', confidence: 0.7, reasoning: 'Close above SMA50.', indicators: { sma50: 150 }, trend: 'up', momentum: 'positive' });
};
const agentOf = (request: FakeLlmRequest) => {
  const system = String(request.body?.messages?.[0]?.content ?? request.body?.system ?? '');
  return system.includes('ideal_buy') ? 'decision' : system.includes('veto_buy') ? 'risk' : system.includes('sources') ? 'intel' : system.includes('stance') ? 'debate' : 'technical';
};

/** How the fake answers now: a test sets it, given the agent and how many times that agent has asked. */
let script: (agent: string, ask: number, request: FakeLlmRequest) => FakeAnswer = (_agent, _ask, request) => ({ json: validFor(request) });
let asks = new Map<string, number>();
const useScript = (next: typeof script) => {
  asks = new Map();
  script = next;
};

const bars = Array.from({ length: 120 }, (_, index) => {
  const date = new Date(Date.UTC(2025, 8, 1) + index * 86_400_000).toISOString().slice(0, 10);
  const close = (100 + index * 0.5).toFixed(2);
  return { date, open: close, high: (Number(close) + 1).toFixed(2), low: (Number(close) - 1).toFixed(2), close, volume: '2000000' };
});

const settings = (provider: 'openai' | 'anthropic') => ({
  LLM_PROVIDER: provider,
  LLM_BASE_URL: provider === 'openai' ? `${fake.url}/v1` : fake.url,
  LLM_API_KEY: 'test-llm-key-123',
  LLM_MODEL: provider === 'openai' ? 'gpt-4o-mini' : 'claude-3-5-haiku-latest',
  LLM_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
  LLM_MAX_RETRIES: '1',
  LLM_MAX_TOKENS_PER_REPORT: '100',
  // 9e-6 USD a quick report at the default gpt-4o-mini prices: one report of a user fits, a second does not.
  LLM_DAILY_BUDGET_USD: '0.000008',
  RATE_LIMIT_ANALYSES_PER_MIN: '1000',
  WORKERS_IN_PROCESS: 'true',
});

beforeAll(async () => {
  fake = await startFakeLlm({
    answer: (_nth, request) => {
      const agent = agentOf(request);
      const ask = (asks.get(agent) ?? 0) + 1;
      asks.set(agent, ask);
      return script(agent, ask, request);
    },
  });
  server = await startTestServer(settings('openai'), undefined, { clock });
  await upsertBars(server.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars, source: 'test', at: clock.now() });
});
afterAll(async () => {
  await server.stop();
  await fake.close();
});

/**
 * Once `agent`'s call (sent after `since` requests) has reached the fake, its deadline is set (it is
 * set before the request is sent): moving `on` by `ms` then reaches it, however slow the machine.
 */
const moveClockOnceAsked = async (agent: string, since: number, ms: number, on = clock) => {
  await waitFor(
    () => Promise.resolve(fake.requests.slice(since)),
    (sent) => sent.some((request) => agentOf(request) === agent),
    30_000,
  );
  on.advance(ms);
};

const quick = (user: FactoryUser, on = server, mode = 'quick') => on.http('POST', '/api/equity/analyze', { token: user.tokens.access_token, body: { symbol: 'AAPL', mode, inline: mode === 'quick' } });
const reportOf = async (user: FactoryUser, id: string, on = server) => (await on.http('GET', `/api/equity/reports/${id}`, { token: user.tokens.access_token })).body;
const stepsOf = async (user: FactoryUser, id: string) => (await server.http('GET', `/api/equity/reports/${id}/traces`, { token: user.tokens.access_token })).body.items;

describe('analysis on an OpenAI-compatible endpoint', () => {
  it('records the model, tokens and cost of each call, sends the key only in its header, and keeps to the daily budget', async () => {
    useScript((_agent, _ask, request) => ({ json: validFor(request) }));
    const user = await newUser(server, { prefix: 'llm_ok' });
    const before = fake.requests.length;
    const res = await quick(user);
    expect(res.status, res.text).toBe(202);
    expect(res.body.status).toBe('done');
    const report = await reportOf(user, res.body.report_id);
    expect(report).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', tokens_input: 20, tokens_output: 10, decision: 'buy', score: 0.4 });
    expect(report.cost_usd).toBeCloseTo(9e-6, 12);
    expect(report.decision_output).toMatchObject({ ideal_buy: 150, stop_loss: 140, take_profit: 170, currency: 'USD' });
    const steps = await stepsOf(user, res.body.report_id);
    expect(steps.map((step: { agent_name: string; tokens_input: number; tokens_output: number }) => [step.agent_name, step.tokens_input, step.tokens_output])).toEqual([
      ['technical', 10, 5],
      ['decision', 10, 5],
    ]);
    const sent = fake.requests.slice(before);
    expect(sent.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(sent[0]!.headers.authorization).toBe('Bearer test-llm-key-123');
    expect(sent[0]!.body).toMatchObject({ model: 'gpt-4o-mini', response_format: { type: 'json_object' } });
    expect(JSON.stringify(sent[0]!.body)).not.toContain('test-llm-key-123');
    expect(JSON.stringify(report)).not.toContain('test-llm-key-123');

    const over = await quick(user);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('LLM_BUDGET_EXCEEDED');
  });

  it('asks again once after an invalid answer, and retries a 429 honouring Retry-After', async () => {
    useScript((agent, ask, request) => {
      if (agent === 'technical' && ask === 1) return { json: 'Sure! The trend looks good.' };
      if (agent === 'decision' && ask === 1) return { status: 429, retryAfter: '0' };
      return { json: validFor(request) };
    });
    const user = await newUser(server, { prefix: 'llm_retry' });
    const res = await quick(user);
    expect(res.body.status, res.text).toBe('done');
    const steps = await stepsOf(user, res.body.report_id);
    expect(steps.map((step: { agent_name: string }) => step.agent_name)).toEqual(['technical', 'technical', 'decision']);
    // The invalid answer is kept as the raw text the model wrote.
    expect(steps[0].content).toBe('Sure! The trend looks good.');
    expect(JSON.parse(steps[1].content)).toMatchObject({ signal: 'buy' });
  });

  it('fails a report whose decision never answers (the call times out), naming the agent', async () => {
    useScript((agent, _ask, request) => (agent === 'decision' ? 'hang' : { json: validFor(request) }));
    const user = await newUser(server, { prefix: 'llm_hang' });
    const before = fake.requests.length;
    const pending = quick(user);
    await moveClockOnceAsked('decision', before, CALL_TIMEOUT_MS);
    const res = await pending;
    expect(res.body.status, res.text).toBe('failed');
    const report = await reportOf(user, res.body.report_id);
    expect(report.error_message).toContain('decision agent failed (timeout');
    expect(report.technical_output).toMatchObject({ signal: 'buy' });
    expect(report.decision_output).toBeNull();
  });

  it('ends partial when an agent fails but the decision is made, and stops at the token cap per report', async () => {
    useScript((agent, _ask, request) => (agent === 'risk' ? { json: '{"risk_level": "extreme"}' } : { json: validFor(request) }));
    const user = await newUser(server, { prefix: 'llm_partial' });
    const partial = await quick(user, server, 'standard');
    expect(partial.status, partial.text).toBe(202);
    const done = await waitForEnd(user, partial.body.report_id);
    expect(done.status).toBe('partial');
    expect(done.error_message).toContain('risk agent failed (invalid answer twice');
    expect(done.decision).toBe('buy');

    // 60 + 10 tokens a call against a cap of 100: technical and intel answer, then the cap stops the run.
    useScript((_agent, _ask, request) => ({ json: validFor(request), tokensInput: 60, tokensOutput: 10 }));
    const capped = await newUser(server, { prefix: 'llm_cap' });
    const run = await quick(capped, server, 'standard');
    const stopped = await waitForEnd(capped, run.body.report_id);
    expect(stopped.status).toBe('failed');
    expect(stopped.error_message).toContain('token cap (LLM_MAX_TOKENS_PER_REPORT)');
    expect(stopped.tokens_input + stopped.tokens_output).toBe(140);
  });
});

const remove = (user: FactoryUser, id: string, on = server) => on.http('DELETE', `/api/equity/reports/${id}`, { token: user.tokens.access_token });

describe('the daily budgets', () => {
  it("keep what a deleted report cost: the user's budget stays used up (429 LLM_BUDGET_EXCEEDED)", async () => {
    useScript((_agent, _ask, request) => ({ json: validFor(request) }));
    const user = await newUser(server, { prefix: 'llm_budget_del' });
    const first = await quick(user);
    expect(first.body.status, first.text).toBe('done');
    const over = await quick(user);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'LLM_BUDGET_EXCEEDED', message: expect.stringContaining('Your daily LLM budget') });
    expect((await remove(user, first.body.report_id)).status).toBe(204);
    const again = await quick(user);
    expect(again.status, again.text).toBe(429);
    expect(again.body.code).toBe('LLM_BUDGET_EXCEEDED');
  });

  it('keep what a report cost when it was deleted while it ran', async () => {
    // The technical agent answers (4.5e-6 USD), the decision hangs until the test moves the clock past the call's deadline.
    useScript((agent, _ask, request) => (agent === 'decision' ? 'hang' : { json: validFor(request) }));
    const user = await newUser(server, { prefix: 'llm_budget_running' });
    const before = fake.requests.length;
    const queued = await server.http('POST', '/api/equity/analyze', { token: user.tokens.access_token, body: { symbol: 'AAPL', mode: 'quick' } });
    expect(queued.status, queued.text).toBe(202);
    await waitFor(
      () => Promise.resolve(fake.requests.slice(before)),
      (sent) => sent.some((request) => agentOf(request) === 'decision'),
      30_000,
    );
    expect((await remove(user, queued.body.report_id)).status).toBe(204);
    // Deleted while the decision hangs; then the call reaches its deadline and the run ends.
    clock.advance(CALL_TIMEOUT_MS);
    const day = clock.now().toISOString().slice(0, 10);
    expect(await waitFor(() => userSpentOn(server.services.db, { userId: user.user.id, day }), (spent) => spent !== '0', 30_000)).toBe('0.0000045');
  });

  it('keep the service-wide budget used up when the reports that spent it are deleted, until 00:00 UTC', async () => {
    useScript((_agent, _ask, request) => ({ json: validFor(request) }));
    const late = manualClock('2026-03-10T23:59:00Z');
    // One quick report (9e-6 USD) uses up the service's day; each user's own budget is far off.
    const shared = await startTestServer({ ...settings('openai'), LLM_DAILY_BUDGET_USD: '1', LLM_GLOBAL_DAILY_BUDGET_USD: '0.000008' }, undefined, { clock: late });
    try {
      await upsertBars(shared.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars, source: 'test', at: late.now() });
      const spender = await newUser(shared, { prefix: 'llm_global_a' });
      const other = await newUser(shared, { prefix: 'llm_global_b' });
      const spent = await quick(spender, shared);
      expect(spent.body.status, spent.text).toBe('done');
      const refused = async (user: FactoryUser) => {
        const res = await quick(user, shared);
        expect(res.status, res.text).toBe(429);
        expect(res.body).toMatchObject({ code: 'LLM_BUDGET_EXCEEDED', message: expect.stringContaining('service-wide') });
      };
      await refused(other);
      expect((await remove(spender, spent.body.report_id, shared)).status).toBe(204);
      await refused(other);
      await refused(spender);
      late.set('2026-03-10T23:59:59.999Z');
      await refused(other);
      late.set('2026-03-11T00:00:00.000Z');
      const next = await quick(other, shared);
      expect(next.status, next.text).toBe(202);
      expect(next.body.status).toBe('done');
    } finally {
      await shared.stop();
    }
  });
});

/** A queued report once it has ended (this server's workers run it). */
const waitForEnd = async (user: FactoryUser, id: string) =>
  waitFor(
    () => reportOf(user, id),
    (report) => ['done', 'partial', 'failed'].includes(report.status),
    30_000,
  );

describe('analysis on the Anthropic Messages API', () => {
  it('speaks its wire format (x-api-key, anthropic-version, system apart from the messages); a hung call ends at the report wall-clock cap', async () => {
    useScript((_agent, _ask, request) => ({ json: validFor(request), model: 'claude-3-5-haiku-20241022' }));
    // A report's wall-clock cap shorter than one call's: the cap, not the call, ends a hung run.
    const REPORT_TIMEOUT_MS = 1_000;
    const anthropic = await startTestServer({ ...settings('anthropic'), LLM_TIMEOUT_MS: '10000', ANALYSIS_REPORT_TIMEOUT_MS: String(REPORT_TIMEOUT_MS) }, undefined, { clock });
    try {
      await upsertBars(anthropic.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars, source: 'test', at: clock.now() });
      const user = await newUser(anthropic, { prefix: 'llm_anthropic' });
      const before = fake.requests.length;
      const res = await quick(user, anthropic);
      expect(res.body.status, res.text).toBe('done');
      const report = await reportOf(user, res.body.report_id, anthropic);
      // The exact model id that answered, priced by its configured prefix (0.8 / 4 USD per million).
      expect(report).toMatchObject({ provider: 'anthropic', model: 'claude-3-5-haiku-20241022', tokens_input: 20, tokens_output: 10 });
      expect(report.cost_usd).toBeCloseTo((20 * 0.8 + 10 * 4) / 1e6, 12);
      const [first] = fake.requests.slice(before);
      expect(first!.path).toBe('/v1/messages');
      expect(first!.headers['x-api-key']).toBe('test-llm-key-123');
      expect(first!.headers['anthropic-version']).toBe('2023-06-01');
      expect(typeof first!.body.system).toBe('string');
      expect(first!.body.messages).toEqual([{ role: 'user', content: expect.any(String) }]);

      useScript((agent, _ask, request) => (agent === 'decision' ? 'hang' : { json: validFor(request) }));
      const slow = await newUser(anthropic, { prefix: 'llm_wall' });
      const asked = fake.requests.length;
      const pending = quick(slow, anthropic);
      // To the report's cap, short of the call's own deadline.
      await moveClockOnceAsked('decision', asked, REPORT_TIMEOUT_MS);
      const stopped = await pending;
      expect(stopped.body.status, stopped.text).toBe('failed');
      const ended = await reportOf(slow, stopped.body.report_id, anthropic);
      expect(ended.error_message).toContain('wall-clock cap (ANALYSIS_REPORT_TIMEOUT_MS)');
      expect(ended.technical_output).toMatchObject({ signal: 'buy' });
    } finally {
      await anthropic.stop();
    }
  });
});
