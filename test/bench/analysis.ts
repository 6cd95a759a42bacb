// `node test/bench/analysis.ts`: analysis on the heuristic provider, beside the REST baseline of the
// same service in the same run.
//
// - Inline: POST /api/equity/analyze {mode: quick, inline: true} for AAPL's demo bars (the agents
//   read the newest 400), BENCH_AN_REQUESTS one after another after a warm-up; p50 and p99 of the
//   round trip (rate limit checked, budgets read, bars read, two agents run, report and two
//   traces written, answered). The baseline: GET /api/auth/me the same number of times (the
//   same HTTP, auth and envelope, no work behind it). The goal is p50 <= 30 ms.
// - Queue: BENCH_AN_QUEUED quick analyses queued (the report, its queue row and its pg-boss job
//   per request, one transaction each), then run by 2 workers of this instance
//   (ANALYSIS_WORKERS=2); reports per second from the first request to the last report done.
//   The goal is >= 50 reports/s. Beside it: the queueing requests alone (reports/s accepted).
// With DATABASE_URL it runs on PostgreSQL (a fresh database), else on PGlite. Rate limits and
// budgets are raised by setting so that they never refuse here.
import { performance } from 'node:perf_hooks';
import { createCleanups, fixed, percentile, positiveInt, runBench, sleep } from './common.ts';

const GOAL_INLINE_P50_MS = 30;
const GOAL_QUEUE_PER_S = 50;

const settings = {
  requests: positiveInt('BENCH_AN_REQUESTS', 100),
  queued: positiveInt('BENCH_AN_QUEUED', 300),
};

const { cleanups, cleanUp } = createCleanups();

const main = async () => {
  const { startBenchService, postJson } = await import('./service.ts');
  const { app } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-analysis-',
    env: {
      DEMO_DATA: 'true',
      SIM_TICK_INTERVAL_MS: '0',
      WORKERS_IN_PROCESS: 'true',
      ANALYSIS_WORKERS: '2',
      RATE_LIMIT_ANALYSES_PER_MIN: '100000',
      LLM_DAILY_BUDGET_USD: '1000',
      LLM_GLOBAL_DAILY_BUDGET_USD: '1000',
    },
  });
  const username = `bench_an_${process.pid}`;
  const password = 'bench-analysis-password';
  const registered = await postJson(`${app.url}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.text}`);
  const token = (await postJson(`${app.url}/api/auth/login`, { username, password })).json?.access_token as string;
  const me = async () => {
    const response = await fetch(`${app.url}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    await response.text();
    if (response.status !== 200) throw new Error(`/api/auth/me answered ${response.status}`);
  };
  const inline = async () => {
    const res = await postJson(`${app.url}/api/equity/analyze`, { symbol: 'AAPL', mode: 'quick', inline: true }, token);
    if (res.status !== 202 || res.json?.status !== 'done') throw new Error(`inline analysis answered ${res.status} ${res.text}`);
  };
  const timed = async (call: () => Promise<void>) => {
    const samples: number[] = [];
    for (let i = 0; i < settings.requests; i++) {
      const started = performance.now();
      await call();
      samples.push(performance.now() - started);
    }
    return samples.sort((a, b) => a - b);
  };
  for (let i = 0; i < 20; i++) {
    await inline();
    await me();
  }
  // Alternated halves, so drift on a shared machine falls on both.
  const ours = [...(await timed(inline)), ...(await timed(inline))].sort((a, b) => a - b);
  const baseline = [...(await timed(me)), ...(await timed(me))].sort((a, b) => a - b);
  console.log(`Inline: POST /api/equity/analyze quick, AAPL, ${ours.length} requests one after another (${app.services.database.kind})`);
  console.log(`  analysis (admit, bars, 2 agents, report + traces written)   p50 ${fixed(percentile(ours, 50), 1)} ms   p99 ${fixed(percentile(ours, 99), 1)} ms`);
  console.log(`  REST baseline GET /api/auth/me                               p50 ${fixed(percentile(baseline, 50), 1)} ms   p99 ${fixed(percentile(baseline, 99), 1)} ms`);

  // Queue: every request sent (8 at a time), then wait for the workers to finish them all.
  const started = performance.now();
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < settings.queued) {
        next++;
        const res = await postJson(`${app.url}/api/equity/analyze`, { symbol: 'AAPL', mode: 'quick' }, token);
        if (res.status !== 202) throw new Error(`queueing answered ${res.status} ${res.text}`);
        ids.push(res.json?.report_id as string);
      }
    }),
  );
  const queuedMs = performance.now() - started;
  const { db } = app.services;
  const { analysisReports } = await import('../../server/db/schema/index.ts');
  const { and, eq, inArray, count } = await import('drizzle-orm');
  const deadline = performance.now() + 300_000;
  let done = 0;
  while (performance.now() < deadline) {
    const [row] = await db
      .select({ n: count() })
      .from(analysisReports)
      .where(and(eq(analysisReports.userId, Number(registered.json?.id)), inArray(analysisReports.id, ids), inArray(analysisReports.status, ['done', 'partial', 'failed'])));
    done = row?.n ?? 0;
    if (done >= ids.length) break;
    await sleep(20);
  }
  const totalMs = performance.now() - started;
  const perSecond = (done / totalMs) * 1000;
  console.log(`Queue: ${ids.length} quick analyses queued 8 at a time, run by 2 workers`);
  console.log(`  end to end (queued -> every report done)   ${fixed(perSecond, 1)} reports/s (${done} done in ${fixed(totalMs / 1000, 2)} s)`);
  console.log(`  queueing alone (202 answered)              ${fixed((ids.length / queuedMs) * 1000, 1)} requests/s`);

  const p50 = percentile(ours, 50);
  console.log(`${p50 <= GOAL_INLINE_P50_MS ? 'PASS' : 'FAIL'}  inline quick analysis p50 ${fixed(p50, 1)} ms (goal <= ${GOAL_INLINE_P50_MS} ms; REST baseline ${fixed(percentile(baseline, 50), 1)} ms)`);
  console.log(`${perSecond >= GOAL_QUEUE_PER_S && done === ids.length ? 'PASS' : 'FAIL'}  queue throughput ${fixed(perSecond, 1)} reports/s with 2 workers (goal >= ${GOAL_QUEUE_PER_S}/s)`);
};

await runBench(main, { cleanUp });
