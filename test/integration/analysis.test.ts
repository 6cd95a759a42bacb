// /api/equity/analyze and the reports over HTTP with the heuristic provider: inline quick runs,
// queued runs in every mode on the workers, point-in-time runs, the reports list and its
// filters, traces, delete (with its queue job), the rate limit, the budget and the flags.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYSIS_QUEUE } from '../../server/analysis/analysis.ts';
import { insertTrace, startReport } from '../../server/analysis/queries.ts';
import { manualClock } from '../../server/clock.ts';
import { analysisQueue, analysisTraces } from '../../server/db/schema/index.ts';
import { startWorkers } from '../../server/jobs/index.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;

/** 300 weekdays of a gently rising, wobbling series ending 2026-03-06. */
const barsOf = (count: number, start = 100) => {
  const bars = [];
  const day = new Date('2026-03-06T00:00:00Z');
  const dates: string[] = [];
  while (dates.length < count) {
    if (day.getUTCDay() !== 0 && day.getUTCDay() !== 6) dates.unshift(day.toISOString().slice(0, 10));
    day.setUTCDate(day.getUTCDate() - 1);
  }
  for (const [index, date] of dates.entries()) {
    const close = start + index * 0.2 + Math.sin(index / 5) * 2;
    bars.push({ date, open: (close - 0.5).toFixed(2), high: (close + 1).toFixed(2), low: (close - 1).toFixed(2), close: close.toFixed(2), volume: String(1_000_000 + index) });
  }
  return bars;
};
const BARS = barsOf(300);

beforeAll(async () => {
  server = await startTestServer({ WORKERS_IN_PROCESS: 'true', ANALYSIS_WORKERS: '2', ANALYSIS_DEBATE_ROUNDS: '2', RATE_LIMIT_ANALYSES_PER_MIN: '1000' }, undefined, { clock });
  await upsertBars(server.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars: BARS, source: 'test', at: clock.now() });
});
afterAll(() => server.stop());

const analyze = (user: FactoryUser, body: Record<string, unknown>, on = server) => on.http('POST', '/api/equity/analyze', { token: user.tokens.access_token, body });
const detail = (user: FactoryUser, id: string, on = server) => on.http('GET', `/api/equity/reports/${id}`, { token: user.tokens.access_token });
const traces = async (user: FactoryUser, id: string) => (await server.http('GET', `/api/equity/reports/${id}/traces`, { token: user.tokens.access_token })).body;
const finished = (user: FactoryUser, id: string, on = server) =>
  waitFor(
    () => detail(user, id, on),
    (res) => ['done', 'partial', 'failed'].includes(res.body?.status),
    30_000,
  );

describe('POST /api/equity/analyze inline', () => {
  it('runs quick mode at once: 202 done, the decision with its levels, the dashboard and two traces', async () => {
    const user = await newUser(server, { prefix: 'an_inline' });
    const res = await analyze(user, { symbol: 'aapl', mode: 'quick', inline: true });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ report_id: expect.any(String), queue_id: null, status: 'done' });
    const report = (await detail(user, res.body.report_id)).body;
    expect(report).toMatchObject({ symbol: 'AAPL', asset_class: 'us_equity', mode: 'quick', status: 'done', provider: 'heuristic', cost_usd: 0, error_message: null });
    expect(report.data_from).toBe(BARS.at(-300)!.date);
    expect(report.data_to).toBe(BARS.at(-1)!.date);
    expect(report.decision).toBe(report.decision_output.signal);
    expect(report.decision_output.currency).toBe('USD');
    expect(report.technical_output.reasoning.length).toBeGreaterThan(20);
    expect(report.intel_output).toBeNull();
    expect(report.dashboard_md).toContain('AAPL');
    expect(report.dashboard_md).toContain('heuristic');
    const steps = await traces(user, res.body.report_id);
    expect(steps.report_id).toBe(res.body.report_id);
    expect(steps.items.map((step: { agent_name: string; step_index: number }) => [step.step_index, step.agent_name])).toEqual([
      [0, 'technical'],
      [1, 'decision'],
    ]);
    expect(JSON.parse(steps.items[1].content)).toMatchObject({ signal: report.decision });
  });

  it('suggests prices on the instrument’s tick grid (the registry’s tick_size): buys down, stop and target up', async () => {
    const admin = await newUser(server, { role: 'admin', prefix: 'an_grid_admin' });
    const instrument = { asset_class: 'crypto', symbol: 'GRID/USDT', exchange: 'TEST', currency: 'USDT', name: 'Half-unit grid', reference_price: 150, tick_size: 0.5, lot_size: 0.001, fractional: true };
    const created = await server.http('POST', '/api/admin/instruments', { token: admin.tokens.access_token, body: instrument });
    expect(created.status, created.text).toBe(201);
    await upsertBars(server.services.db, { assetClass: 'crypto', symbol: 'GRID/USDT', bars: BARS, source: 'test', at: clock.now() });
    const user = await newUser(server, { prefix: 'an_grid' });
    const res = await analyze(user, { symbol: 'GRID/USDT', mode: 'quick', inline: true });
    expect(res.status, res.text).toBe(202);
    const { decision_output: decision } = (await detail(user, res.body.report_id)).body;
    const levels = [decision.ideal_buy, decision.secondary_buy, decision.stop_loss, decision.take_profit] as number[];
    for (const level of levels) expect(Number.isInteger(level * 2), `${level} on a 0.5 grid`).toBe(true);
    const close = Number(BARS.at(-1)!.close);
    expect(decision.ideal_buy).toBeLessThan(close);
    expect(decision.stop_loss).toBeLessThan(decision.secondary_buy);
    expect(decision.take_profit).toBeGreaterThan(close);
  });

  it('refuses another mode inline (400 INLINE_REQUIRES_QUICK) and an unknown symbol (422 INVALID_SYMBOL)', async () => {
    const user = await newUser(server, { prefix: 'an_refuse' });
    const inline = await analyze(user, { symbol: 'AAPL', mode: 'standard', inline: true });
    expect(inline.status).toBe(400);
    expect(inline.body.code).toBe('INLINE_REQUIRES_QUICK');
    const unknown = await analyze(user, { symbol: 'NOPE_X', mode: 'quick', inline: true });
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('INVALID_SYMBOL');
    const bad = await analyze(user, { symbol: 'AAPL', priority: 5000 });
    expect(bad.status).toBe(422);
    const noSuchDay = await analyze(user, { symbol: 'AAPL', mode: 'quick', inline: true, as_of: '2026-02-30' });
    expect(noSuchDay.status).toBe(422);
    expect(noSuchDay.body.code).toBe('VALIDATION_ERROR');
    const badFrom = await server.http('GET', '/api/equity/reports?from=yesterday', { token: user.tokens.access_token });
    expect(badFrom.status).toBe(422);
  });

  it('reads no bar after as_of: the report rests on the bars up to that day', async () => {
    const user = await newUser(server, { prefix: 'an_asof' });
    const asOf = BARS[200]!.date;
    const res = await analyze(user, { symbol: 'AAPL', mode: 'quick', inline: true, as_of: asOf });
    expect(res.status, res.text).toBe(202);
    const report = (await detail(user, res.body.report_id)).body;
    expect(report.as_of).toBe(asOf);
    expect(report.data_to).toBe(asOf);
    expect(report.data_from).toBe(BARS[0]!.date);
    // The technical view was computed on that window: its last close is the as_of bar's.
    expect(report.technical_output.reasoning).toContain(String(Number(BARS[200]!.close)));
  });
});

describe('queued analyses', () => {
  it('runs standard and full mode on the workers: queued, then done with every agent traced', async () => {
    const user = await newUser(server, { prefix: 'an_queue' });
    const standard = await analyze(user, { symbol: 'AAPL', mode: 'standard' });
    expect(standard.status, standard.text).toBe(202);
    expect(standard.body).toEqual({ report_id: expect.any(String), queue_id: expect.any(Number), status: 'queued' });
    const full = await analyze(user, { symbol: 'AAPL', mode: 'full', priority: 10 });
    expect(full.status, full.text).toBe(202);

    const standardReport = (await finished(user, standard.body.report_id)).body;
    expect(standardReport.status).toBe('done');
    expect(standardReport.started_at).not.toBeNull();
    expect(standardReport.risk_output).toMatchObject({ risk_level: expect.any(String), veto_buy: expect.any(Boolean), flags: expect.any(Array) });
    // No news source is configured: intel says so and stays neutral.
    expect(standardReport.intel_output).toMatchObject({ signal: 'hold', confidence: 0 });
    expect((await traces(user, standard.body.report_id)).items.map((step: { agent_name: string }) => step.agent_name)).toEqual(['technical', 'intel', 'risk', 'decision']);

    expect((await finished(user, full.body.report_id)).body.status).toBe('done');
    expect((await traces(user, full.body.report_id)).items.map((step: { agent_name: string }) => step.agent_name)).toEqual(['technical', 'intel', 'risk', 'bull', 'bear', 'bull', 'bear', 'decision']);
  });
});

describe('the reports', () => {
  it('lists newest first with the filters and pages; another user gets 404; delete removes traces and queue rows', async () => {
    const user = await newUser(server, { prefix: 'an_list' });
    const other = await newUser(server, { prefix: 'an_other' });
    const first = await analyze(user, { symbol: 'AAPL', mode: 'quick', inline: true });
    clock.advance(60_000);
    const second = await analyze(user, { symbol: 'BTC/USDT', mode: 'quick', inline: true });
    expect(second.status, second.text).toBe(202);
    const list = (query: string) => server.http('GET', `/api/equity/reports${query}`, { token: user.tokens.access_token });
    const all = (await list('')).body;
    expect(all.total).toBe(2);
    expect(all.items.map((item: { report_id: string }) => item.report_id)).toEqual([second.body.report_id, first.body.report_id]);
    expect((await list('?asset_class=crypto')).body.items.map((item: { symbol: string }) => item.symbol)).toEqual(['BTC/USDT']);
    expect((await list('?symbol=AAPL')).body.total).toBe(1);
    const middle = new Date(clock.now().getTime() - 30_000).toISOString();
    expect((await list(`?from=${encodeURIComponent(middle)}`)).body.items.map((item: { report_id: string }) => item.report_id)).toEqual([second.body.report_id]);
    expect((await list(`?to=${encodeURIComponent(middle)}`)).body.items.map((item: { report_id: string }) => item.report_id)).toEqual([first.body.report_id]);
    expect((await list('?page=2&size=1')).body).toMatchObject({ total: 2, page: 2, size: 1, items: [{ report_id: first.body.report_id }] });
    expect((await list('?size=101')).status).toBe(422);

    expect((await detail(other, first.body.report_id)).body.code).toBe('REPORT_NOT_FOUND');
    const removed = await server.http('DELETE', `/api/equity/reports/${first.body.report_id}`, { token: user.tokens.access_token });
    expect(removed.status).toBe(204);
    expect((await detail(user, first.body.report_id)).status).toBe(404);
    const { db } = server.services;
    expect(await db.select().from(analysisTraces).where(and(eq(analysisTraces.userId, user.user.id), eq(analysisTraces.reportId, first.body.report_id)))).toEqual([]);
    expect((await server.http('DELETE', `/api/equity/reports/${first.body.report_id}`, { token: user.tokens.access_token })).status).toBe(404);
  });
});

describe('with the workers stopped', () => {
  let quiet: TestServer;
  beforeAll(async () => {
    // A clock that moves a millisecond each time it is read: the reports' started_at tell the order
    // they ran in, and no minute passes (the rate limit refills nothing).
    let now = Date.parse('2026-03-10T15:00:00Z');
    quiet = await startTestServer({ WORKERS_IN_PROCESS: 'false', ANALYSIS_WORKERS: '1', RATE_LIMIT_ANALYSES_PER_MIN: '5' }, undefined, { clock: { now: () => new Date(++now) } });
    await upsertBars(quiet.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars: BARS, source: 'test', at: clock.now() });
  });
  afterAll(() => quiet.stop());

  it('keeps 5 analyses a minute per user (429 with Retry-After), deletes a queued report with its job, and runs the rest by priority', async () => {
    const user = await newUser(quiet, { prefix: 'an_prio' });
    const ids: Record<string, string> = {};
    for (const priority of [0, 50, -10, 20]) {
      const res = await analyze(user, { symbol: 'AAPL', mode: 'quick', priority }, quiet);
      expect(res.status, res.text).toBe(202);
      ids[priority] = res.body.report_id;
    }
    const doomed = await analyze(user, { symbol: 'AAPL', mode: 'quick', priority: 100 }, quiet);
    expect(doomed.status).toBe(202);
    const over = await analyze(user, { symbol: 'AAPL', mode: 'quick' }, quiet);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);

    const { db } = quiet.services;
    const [queued] = await db.select().from(analysisQueue).where(and(eq(analysisQueue.userId, user.user.id), eq(analysisQueue.reportId, doomed.body.report_id)));
    expect(queued?.id).toBe(doomed.body.queue_id);
    const boss = await quiet.services.jobs.boss();
    expect((await boss.getJobById(ANALYSIS_QUEUE, queued!.jobId!))?.priority).toBe(100);
    expect((await quiet.http('DELETE', `/api/equity/reports/${doomed.body.report_id}`, { token: user.tokens.access_token })).status).toBe(204);
    expect((await boss.getJobById(ANALYSIS_QUEUE, queued!.jobId!))?.state).toBe('cancelled');
    expect(await db.select().from(analysisQueue).where(eq(analysisQueue.reportId, doomed.body.report_id))).toEqual([]);

    // Four reports wait: /metrics says so.
    expect((await quiet.http('GET', '/metrics')).text).toContain('job_queue_depth{queue="analysis"} 4');

    // One worker: the queue runs highest priority first.
    const workers = await startWorkers(quiet.services);
    try {
      const reports = [];
      for (const id of Object.values(ids)) reports.push((await finished(user, id, quiet)).body);
      expect(reports.map((report) => report.status)).toEqual(['done', 'done', 'done', 'done']);
      const order = reports.sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at)).map((report) => report.report_id);
      expect(order).toEqual([ids[50], ids[20], ids[0], ids[-10]]);
    } finally {
      await workers.stop();
    }
  });
});

describe('a worker that dies mid-run', () => {
  it('leaves its job to be retried, which runs the same report again from the start: one report, its traces written once', async () => {
    const crashed = await startTestServer({ WORKERS_IN_PROCESS: 'false' });
    try {
      await upsertBars(crashed.services.db, { assetClass: 'us_equity', symbol: 'AAPL', bars: BARS, source: 'test', at: clock.now() });
      const user = await newUser(crashed, { prefix: 'an_crash' });
      const res = await analyze(user, { symbol: 'AAPL', mode: 'quick' }, crashed);
      expect(res.status, res.text).toBe(202);
      const key = { userId: user.user.id, reportId: res.body.report_id as string };
      // A worker takes the job, starts the report, writes its first step, and dies before the end:
      // pg-boss fails the job (as its expiry does for a worker that vanished) and retries it.
      const boss = await crashed.services.jobs.boss();
      const [job] = await boss.fetch(ANALYSIS_QUEUE);
      expect(job?.data).toMatchObject(key);
      const { db } = crashed.services;
      expect(await startReport(db, key, clock.now())).toMatchObject({ status: 'running' });
      await insertTrace(db, { ...key, stepIndex: 0, agentName: 'technical', role: 'analyst', content: 'from the run that died', createdAt: clock.now() });
      await boss.fail(ANALYSIS_QUEUE, job!.id);

      const workers = await startWorkers(crashed.services);
      try {
        const report = (await finished(user, key.reportId, crashed)).body;
        expect(report.status).toBe('done');
        const steps = (await crashed.http('GET', `/api/equity/reports/${key.reportId}/traces`, { token: user.tokens.access_token })).body.items;
        expect(steps.map((step: { agent_name: string }) => step.agent_name)).toEqual(['technical', 'decision']);
        expect(steps.map((step: { content: string }) => step.content)).not.toContain('from the run that died');
        expect((await crashed.http('GET', '/api/equity/reports', { token: user.tokens.access_token })).body.total).toBe(1);
        expect((await boss.getJobById(ANALYSIS_QUEUE, job!.id))?.state).toBe('completed');
      } finally {
        await workers.stop();
      }
    } finally {
      await crashed.stop();
    }
  });
});

describe('budgets and flags', () => {
  // The per-user budget is exhausted by real costs in analysis-llm.test.ts; here the service-wide one.
  it('answers 429 LLM_BUDGET_EXCEEDED at or over the global daily budget, and 503 FEATURE_DISABLED with both analysis flags off', async () => {
    const spent = await startTestServer({ LLM_GLOBAL_DAILY_BUDGET_USD: '0' });
    try {
      const user = await newUser(spent, { prefix: 'an_budget' });
      const res = await analyze(user, { symbol: 'AAPL', mode: 'quick', inline: true }, spent);
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: 'LLM_BUDGET_EXCEEDED', message: expect.stringContaining('service-wide') });
    } finally {
      await spent.stop();
    }
    const off = await startTestServer({ FEATURE_LLM_ANALYSIS: 'false', FEATURE_EQUITY_ANALYSIS: 'false' });
    try {
      const user = await newUser(off, { prefix: 'an_off' });
      const res = await analyze(user, { symbol: 'AAPL', mode: 'quick', inline: true }, off);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('FEATURE_DISABLED');
    } finally {
      await off.stop();
    }
  });
});
