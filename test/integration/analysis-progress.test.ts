// report_status frames on /ws/live, over a real WebSocket, with analyses run against a fake LLM
// provider on 127.0.0.1: a queued report goes queued → running → one frame per agent that ends →
// done; an invalid answer asked again is still one agent; a failed agent ends the run failed with
// its progress; an inline run starts at running; no other user sees any of it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZReportStatusFrame } from '../../contracts/events.ts';
import { manualClock } from '../../server/clock.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startFakeLlm, type FakeAnswer, type FakeLlm, type FakeLlmRequest } from '../support/fake-llm.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, liveSubscribed, wsUrl, type TestSocket } from '../support/ws.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
let fake: FakeLlm;
let server: TestServer;
const sockets: TestSocket[] = [];

const systemOf = (request: FakeLlmRequest) => String(request.body?.messages?.[0]?.content ?? '');
const agentOf = (request: FakeLlmRequest) => {
  const system = systemOf(request);
  return system.includes('ideal_buy') ? 'decision' : system.includes('veto_buy') ? 'risk' : system.includes('sources') ? 'intel' : system.includes('stance') ? 'debate' : 'technical';
};
/** A valid answer for whichever agent asks. */
const validFor = (request: FakeLlmRequest): string => {
  switch (agentOf(request)) {
    case 'decision':
      return JSON.stringify({ signal: 'buy', confidence: 0.6, score: 0.4, ideal_buy: 150, secondary_buy: 145, stop_loss: 140, take_profit: 170, currency: 'USD', reasoning: 'Uptrend.' });
    case 'risk':
      return JSON.stringify({ risk_level: 'low', veto_buy: false, flags: [], volatility: 0.2, max_drawdown: -0.1, atr: 2, atr_stop: 146, reasoning: 'Calm.' });
    case 'intel':
      return JSON.stringify({ signal: 'hold', confidence: 0, reasoning: 'No source configured.', sources: [] });
    default:
      return JSON.stringify({ signal: 'buy', confidence: 0.7, reasoning: 'Close above SMA50.', indicators: { sma50: 150 }, trend: 'up', momentum: 'positive' });
  }
};

/** How the fake answers: per report symbol is not visible to it, so a test sets the script before it analyzes. */
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

beforeAll(async () => {
  fake = await startFakeLlm({
    answer: (_nth, request) => {
      const agent = agentOf(request);
      const ask = (asks.get(agent) ?? 0) + 1;
      asks.set(agent, ask);
      return script(agent, ask, request);
    },
  });
  server = await startTestServer(
    {
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: `${fake.url}/v1`,
      LLM_API_KEY: 'test-llm-key-123',
      LLM_MODEL: 'gpt-4o-mini',
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_BUDGET_USD: '100',
      RATE_LIMIT_ANALYSES_PER_MIN: '1000',
      SIM_TICK_INTERVAL_MS: '0',
      WORKERS_IN_PROCESS: 'true',
    },
    undefined,
    { clock },
  );
  await upsertBars(server.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars, source: 'test', at: clock.now() });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) await socket.close();
  useScript((_agent, _ask, request) => ({ json: validFor(request) }));
});
afterAll(async () => {
  await server?.stop();
  await fake?.close();
});

/** The user's /ws/live, once its subscriptions are registered (a frame committed before is history to it). */
const live = async (user: FactoryUser) => {
  const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
  sockets.push(socket);
  await liveSubscribed(server, user.user.id);
  return socket;
};
const analyze = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/equity/analyze', { token: user.tokens.access_token, body: { symbol: 'AAPL', ...body } });
  expect(res.status, res.text).toBe(202);
  return res.body as { report_id: string; status: string };
};
const FINISHED = new Set(['done', 'partial', 'failed']);
/** The report's frames up to and including its last one (done, partial or failed). */
const framesUntilFinished = async (socket: TestSocket, reportId: string) => {
  await socket.next((frame) => frame.type === 'report_status' && frame.report_id === reportId && FINISHED.has(frame.status as string));
  return socket.frames.filter((frame) => frame.type === 'report_status' && frame.report_id === reportId);
};
const progressOf = (frames: Record<string, unknown>[]) => frames.map((frame) => [frame.status, frame.agent, frame.agents_done, frame.agents_total]);

describe('report_status on /ws/live', () => {
  it('follows a queued report: queued, running, each agent as it ends, then done; durable frames of the contract', async () => {
    const user = await newUser(server, { prefix: 'progress_queued' });
    const socket = await live(user);
    const { report_id: reportId } = await analyze(user, { mode: 'standard' });
    const frames = await framesUntilFinished(socket, reportId);
    expect(progressOf(frames)).toEqual([
      ['queued', null, 0, 4],
      ['running', null, 0, 4],
      ['running', 'technical', 1, 4],
      ['running', 'intel', 2, 4],
      ['running', 'risk', 3, 4],
      ['running', 'decision', 4, 4],
      ['done', null, 4, 4],
    ]);
    for (const frame of frames) {
      expect(ZReportStatusFrame.parse(frame)).toEqual(frame);
      expect(frame).toMatchObject({ asset_class: 'us_equity', symbol: 'AAPL', mode: 'standard', ts: clock.now().toISOString() });
    }
    const ids = frames.map((frame) => Number(frame.event_id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    // What the frames said is what the report says.
    const report = await server.http('GET', `/api/equity/reports/${reportId}`, { token: user.tokens.access_token });
    expect(report.body.status).toBe('done');
  });

  it('counts an agent asked again after an invalid answer once, and ends a run whose technical agent failed as failed with its progress', async () => {
    const user = await newUser(server, { prefix: 'progress_retry' });
    const socket = await live(user);
    useScript((agent, ask, request) => (agent === 'technical' && ask === 1 ? { json: 'not json at all' } : { json: validFor(request) }));
    const retried = await analyze(user, { mode: 'quick', inline: true });
    expect(retried.status).toBe('done');
    expect(progressOf(await framesUntilFinished(socket, retried.report_id))).toEqual([
      ['running', null, 0, 2],
      ['running', 'technical', 1, 2],
      ['running', 'decision', 2, 2],
      ['done', null, 2, 2],
    ]);

    useScript((agent, _ask, request) => (agent === 'technical' ? { status: 400 } : { json: validFor(request) }));
    const failed = await analyze(user, { mode: 'standard' });
    expect(progressOf(await framesUntilFinished(socket, failed.report_id))).toEqual([
      ['queued', null, 0, 4],
      ['running', null, 0, 4],
      ['running', 'technical', 1, 4],
      ['failed', null, 1, 4],
    ]);
  });

  it("sends a user's report frames to that user only", async () => {
    const [owner, other] = [await newUser(server, { prefix: 'progress_owner' }), await newUser(server, { prefix: 'progress_other' })];
    const otherSocket = await live(other);
    const ownerSocket = await live(owner);
    const { report_id: reportId } = await analyze(owner, { mode: 'quick' });
    await framesUntilFinished(ownerSocket, reportId);
    // The other user's feed is past the same outbox rows (its own analysis after them arrives), with none of the owner's.
    const mine = await analyze(other, { mode: 'quick', inline: true });
    await framesUntilFinished(otherSocket, mine.report_id);
    expect(otherSocket.frames.filter((frame) => frame.report_id === reportId)).toEqual([]);
  });
});
