// The analysis area: analyze (inline, or queued as a report row, a queue row and a pg-boss job
// written together), the reports and their traces, delete, and the workers that run queued
// reports. The agents run in orchestrator.ts; this module owns the rules around them: flags, the
// rate limit, the daily budgets, what a report records, and how a run ends. Each change of a
// report's status, and each agent's end, is announced on /ws/live (`report_status`) from the
// transaction that writes it.
import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { PgBoss } from 'pg-boss';
import type { TAnalyzeRequest, TAnalyzeResponse, TReport, TReportDetail, TReportList, TReportListQuery, TReportStatus, TTraceList } from '../../contracts/analysis.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db, Queryable } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { EventBus } from '../events/bus.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { PROMPT_VERSION } from './agents/index.ts';
import type { IntelSource } from './agents/intel.ts';
import { dashboardOf } from './dashboard.ts';
import { readAnalysisInput } from './input.ts';
import { plannedAgentSteps, runAgents, type RunOutcome } from './orchestrator.ts';
import {
  addSpend,
  clearTraces,
  countQueued,
  deleteReport,
  findReport,
  finishReport,
  globalSpentOn,
  insertQueueRow,
  insertReport,
  insertTrace,
  listReports,
  setQueueJob,
  startReport,
  takeRateToken,
  tracesOf,
  userSpentOn,
  utcDayOf,
  type AnalysisReportRow,
} from './queries.ts';
import type { LlmClient, TAgentName } from './types.ts';

export const ANALYSIS_QUEUE = 'analysis';
/** What the heuristic provider is called in reports (it has no model id of its own). */
const HEURISTIC_MODEL = 'heuristic-rules';
/** Jobs one worker takes per fetch. */
const WORKER_BATCH = 8;
/** Attempts of one queued report: a worker killed mid-run leaves it to the next attempt. */
const JOB_RETRIES = 2;
/** A job whose worker vanished is taken up again after this (pg-boss's expiry), beyond any report's own cap. */
const jobExpirySeconds = (config: Config) => Math.ceil(config.ANALYSIS_REPORT_TIMEOUT_MS / 1000) + 60;

interface QueuedJob {
  userId: number;
  reportId: string;
  /** The job's priority and queue row, to run a fetched batch in order. */
  priority: number;
  queueId: number;
}

export interface AnalysisDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  instruments: Instruments;
  jobs: JobQueue;
  /** The outbox of /ws/live's report_status frames. */
  events: Pick<EventBus, 'append' | 'wake'>;
  /** Undefined: the heuristic provider. */
  llm: LlmClient | undefined;
  /** The news and fundamentals source; undefined when none is configured. */
  intelSource?: IntelSource;
}

export type Analysis = ReturnType<typeof createAnalysis>;

const iso = (value: Date | null) => (value ? value.toISOString() : null);

const toReport = (row: AnalysisReportRow): TReport => ({
  report_id: row.id,
  asset_class: row.assetClass,
  symbol: row.symbol,
  mode: row.mode,
  status: row.status,
  score: row.score,
  decision: row.decision,
  confidence: row.confidence,
  cost_usd: row.costUsd,
  requested_at: row.requestedAt.toISOString(),
  started_at: iso(row.startedAt),
  completed_at: iso(row.completedAt),
});

type Outputs = Partial<Pick<RunOutcome, 'technical' | 'intel' | 'risk' | 'decision' | 'debate'>>;

const toDetail = (row: AnalysisReportRow): TReportDetail => {
  const outputs = row.outputs as Outputs;
  return {
    ...toReport(row),
    dashboard_md: row.dashboardMd,
    technical_output: outputs.technical ?? null,
    intel_output: outputs.intel ?? null,
    risk_output: outputs.risk ?? null,
    decision_output: outputs.decision ?? null,
    error_message: row.errorMessage,
    provider: row.provider,
    model: row.model,
    prompt_version: row.promptVersion,
    data_from: row.dataFrom,
    data_to: row.dataTo,
    as_of: row.asOf,
    settings: row.settings,
    tokens_input: row.tokensInput,
    tokens_output: row.tokensOutput,
  };
};

/** How a run ends: done; partial with a decision but a failed agent or a cap reached; failed without a decision. */
const verdictOf = (outcome: RunOutcome): { status: TReportStatus; errorMessage: string | null } => {
  const problems = [
    ...outcome.failures.map((failure) => `${failure.agent} agent failed (${failure.reason})`),
    ...(outcome.capReached ? [`stopped at the ${outcome.capReached === 'wall_clock' ? 'wall-clock cap (ANALYSIS_REPORT_TIMEOUT_MS)' : 'token cap (LLM_MAX_TOKENS_PER_REPORT)'}`] : []),
  ];
  if (!outcome.decision) return { status: 'failed', errorMessage: problems.length > 0 ? `No decision: ${problems.join('; ')}` : 'No decision was made' };
  return problems.length > 0 ? { status: 'partial', errorMessage: problems.join('; ') } : { status: 'done', errorMessage: null };
};

/** Where a run stands, for its report_status frames. */
interface Progress {
  agent: TAgentName | null;
  done: number;
}

export const createAnalysis = ({ db, clock, config, logger, metrics, instruments, jobs, events, llm, intelSource }: AnalysisDeps) => {
  const provider = llm?.provider ?? 'heuristic';
  const configuredModel = llm?.model ?? HEURISTIC_MODEL;
  const settings = {
    debate_rounds: config.ANALYSIS_DEBATE_ROUNDS,
    tokens_per_call: config.LLM_MAX_TOKENS_PER_CALL,
    tokens_per_report: config.LLM_MAX_TOKENS_PER_REPORT,
    report_timeout_ms: config.ANALYSIS_REPORT_TIMEOUT_MS,
    call_timeout_ms: config.LLM_TIMEOUT_MS,
    daily_budget_usd: Number(config.LLM_DAILY_BUDGET_USD),
    global_daily_budget_usd: Number(config.LLM_GLOBAL_DAILY_BUDGET_USD),
    bars: config.ANALYSIS_BARS,
    intel_source: intelSource?.name ?? null,
  };
  metrics.jobQueueDepth.labels({ queue: ANALYSIS_QUEUE }).set(0);
  let queueReady: Promise<PgBoss> | undefined;
  /** The started pg-boss with the analysis queue created. */
  const queue = () =>
    (queueReady ??= (async () => {
      const boss = await jobs.boss();
      await boss.createQueue(ANALYSIS_QUEUE, { retryLimit: JOB_RETRIES, retryDelay: 1, expireInSeconds: jobExpirySeconds(config) });
      return boss;
    })().catch((error: unknown) => {
      queueReady = undefined;
      throw error;
    }));

  /**
   * The report's report_status frame, in the caller's transaction (delivered if and when it
   * commits; the caller wakes the bus after the commit).
   */
  const announce = (tx: Queryable, row: Pick<AnalysisReportRow, 'id' | 'userId' | 'assetClass' | 'symbol' | 'mode'>, status: TReportStatus, progress: Progress) => {
    const at = clock.now();
    const frame = {
      type: 'report_status',
      report_id: row.id,
      asset_class: row.assetClass,
      symbol: row.symbol,
      mode: row.mode,
      status,
      agent: progress.agent,
      agents_done: progress.done,
      agents_total: plannedAgentSteps(row.mode, config.ANALYSIS_DEBATE_ROUNDS),
      ts: at.toISOString(),
    };
    return events.append(tx, [{ userId: row.userId, channel: 'live', frame, at }]);
  };

  /** The refusals before a report exists: flags, inline mode, the symbol, the rate limit, the budgets. */
  const admit = async (userId: number, request: TAnalyzeRequest) => {
    if (!config.FEATURE_LLM_ANALYSIS && !config.FEATURE_EQUITY_ANALYSIS) throw new AppError('FEATURE_DISABLED', 'Analysis is disabled (FEATURE_LLM_ANALYSIS, FEATURE_EQUITY_ANALYSIS)');
    if (request.inline && request.mode !== 'quick') throw new AppError('INLINE_REQUIRES_QUICK', 'inline runs only mode quick; queue the others');
    const instrument = await instruments.resolve({ symbol: request.symbol });
    if (!instrument) throw new AppError('INVALID_SYMBOL', `${request.symbol.slice(0, 32)} is not a registered instrument`);
    const at = clock.now();
    const token = await takeRateToken(db, { userId, capacity: config.RATE_LIMIT_ANALYSES_PER_MIN, at });
    if (!token.taken) throw new AppError('RATE_LIMIT_EXCEEDED', `More than ${config.RATE_LIMIT_ANALYSES_PER_MIN} analyses a minute`, { retryAfterSec: token.retryAfterSec });
    const day = utcDayOf(at);
    if (new Decimal(await userSpentOn(db, { userId, day })).gte(config.LLM_DAILY_BUDGET_USD)) {
      throw new AppError('LLM_BUDGET_EXCEEDED', `Your daily LLM budget of ${config.LLM_DAILY_BUDGET_USD} USD is used up; it resets at 00:00 UTC`);
    }
    if (new Decimal(await globalSpentOn(db, { day })).gte(config.LLM_GLOBAL_DAILY_BUDGET_USD)) {
      throw new AppError('LLM_BUDGET_EXCEEDED', 'The service-wide daily LLM budget is used up; it resets at 00:00 UTC');
    }
    return { instrument, at };
  };

  /** Runs the agents on the report's symbol and records how it ended; `progress` is shared with the caller. */
  const run = async (row: AnalysisReportRow, progress: Progress): Promise<TReportStatus> => {
    const key = { userId: row.userId, reportId: row.id };
    const input = await readAnalysisInput({ db, instruments, barsLimit: config.ANALYSIS_BARS }, row);
    const { bars } = input;
    const intel = intelSource ? await intelSource.fetch(input).catch(() => []) : null;
    const outcome = await runAgents({
      input,
      mode: row.mode,
      debateRounds: config.ANALYSIS_DEBATE_ROUNDS,
      llm,
      intel,
      clock,
      caps: { tokensPerCall: config.LLM_MAX_TOKENS_PER_CALL, tokensPerReport: config.LLM_MAX_TOKENS_PER_REPORT, reportTimeoutMs: config.ANALYSIS_REPORT_TIMEOUT_MS, callTimeoutMs: config.LLM_TIMEOUT_MS },
      onStep: async ({ agentDone, ...step }) => {
        await db.transaction(async (tx) => {
          await insertTrace(tx, { ...step, userId: row.userId, reportId: row.id, createdAt: clock.now() });
          if (!agentDone) return;
          progress = { agent: step.agentName, done: progress.done + 1 };
          await announce(tx, row, 'running', progress);
        });
        if (agentDone) events.wake();
      },
    });
    const { status, errorMessage } = verdictOf(outcome);
    const dataFrom = bars[0]?.date ?? null;
    const dataTo = bars.at(-1)?.date ?? null;
    const model = outcome.model ?? configuredModel;
    await db.transaction(async (tx) => {
      const recorded = await finishReport(tx, key, {
        status,
        score: outcome.decision?.score ?? null,
        decision: outcome.decision?.signal ?? null,
        confidence: outcome.decision?.confidence ?? null,
        costUsd: outcome.costUsd,
        tokensInput: outcome.tokensInput,
        tokensOutput: outcome.tokensOutput,
        outputs: { technical: outcome.technical, intel: outcome.intel, risk: outcome.risk, debate: outcome.debate, decision: outcome.decision },
        dashboardMd: dashboardOf({
          symbol: row.symbol,
          assetClass: row.assetClass,
          mode: row.mode,
          status,
          outcome,
          provider,
          model,
          promptVersion: PROMPT_VERSION,
          dataFrom,
          dataTo,
          bars: bars.length,
          asOf: row.asOf,
          errorMessage,
        }),
        errorMessage,
        dataFrom,
        dataTo,
        model,
        completedAt: clock.now(),
      });
      // What the run cost counts on the day it was requested, even when the report was deleted while it ran.
      if (outcome.costUsd > 0) await addSpend(tx, { userId: row.userId, day: utcDayOf(row.requestedAt), costUsd: String(outcome.costUsd) });
      // A report deleted while it ran has no status left to announce.
      if (recorded) await announce(tx, row, status, { agent: null, done: progress.done });
    });
    events.wake();
    return status;
  };

  /** A run that threw (a bug or the database): the report says so rather than staying running. */
  const runOrFail = (row: AnalysisReportRow): Promise<TReportStatus> => {
    const progress: Progress = { agent: null, done: 0 };
    return run(row, progress).catch(async (error: unknown) => {
      logger.error({ err: error, reportId: row.id }, 'analysis run failed');
      await db.transaction(async (tx) => {
        const recorded = await finishReport(tx, { userId: row.userId, reportId: row.id }, { status: 'failed', errorMessage: 'The analysis could not be completed (internal error)', completedAt: clock.now() });
        if (recorded) await announce(tx, row, 'failed', { agent: null, done: progress.done });
      });
      events.wake();
      return 'failed' as const;
    });
  };

  const analyze = async ({ user, request }: { user: { id: number }; request: TAnalyzeRequest }): Promise<TAnalyzeResponse> => {
    const { instrument, at } = await admit(user.id, request);
    const values = {
      id: randomUUID(),
      userId: user.id,
      assetClass: instrument.assetClass,
      symbol: instrument.symbol,
      mode: request.mode,
      priority: request.priority,
      asOf: request.as_of ?? null,
      provider,
      model: configuredModel,
      promptVersion: PROMPT_VERSION,
      settings: { ...settings, mode: request.mode },
      requestedAt: at,
    };
    if (request.inline) {
      const stored = await db.transaction(async (tx) => {
        const inserted = await insertReport(tx, { ...values, status: 'running', startedAt: at });
        await announce(tx, inserted, 'running', { agent: null, done: 0 });
        return inserted;
      });
      events.wake();
      return { report_id: stored.id, queue_id: null, status: await runOrFail(stored) };
    }
    const boss = await queue();
    const queueId = await db.transaction(async (tx) => {
      await announce(tx, await insertReport(tx, { ...values, status: 'queued' }), 'queued', { agent: null, done: 0 });
      const id = await insertQueueRow(tx, { userId: user.id, reportId: values.id, priority: request.priority, createdAt: at });
      const job: QueuedJob = { userId: user.id, reportId: values.id, priority: request.priority, queueId: id };
      const jobId = await boss.send(ANALYSIS_QUEUE, job, { priority: request.priority, db: jobs.inTransaction(tx) });
      if (jobId) await setQueueJob(tx, { queueId: id, jobId });
      return id;
    });
    events.wake();
    return { report_id: values.id, queue_id: queueId, status: 'queued' };
  };

  /**
   * One queued report, as a worker takes it: started and run. A retried job restarts it: the
   * traces of the attempt that died go first.
   */
  const runQueued = async ({ userId, reportId }: Pick<QueuedJob, 'userId' | 'reportId'>, retried: boolean): Promise<void> => {
    const key = { userId, reportId };
    const row = await db.transaction(async (tx) => {
      const started = await startReport(tx, key, clock.now());
      // Deleted meanwhile, or finished by an earlier attempt: nothing to do.
      if (!started) return undefined;
      if (retried) await clearTraces(tx, key);
      await announce(tx, started, 'running', { agent: null, done: 0 });
      return started;
    });
    if (!row) return;
    events.wake();
    await runOrFail(row);
  };

  const ownReport = async ({ user, reportId }: { user: { id: number }; reportId: string }) => {
    const row = await findReport(db, { userId: user.id, reportId });
    if (!row) throw new AppError('REPORT_NOT_FOUND', 'Report not found');
    return row;
  };

  return {
    analyze,
    list: async ({ user, query }: { user: { id: number }; query: TReportListQuery }): Promise<TReportList> => {
      const { rows, total } = await listReports(db, {
        userId: user.id,
        assetClass: query.asset_class,
        symbol: query.symbol,
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
        page: query.page,
        size: query.size,
      });
      return { items: rows.map(toReport), total, page: query.page, size: query.size };
    },
    get: async (opts: { user: { id: number }; reportId: string }): Promise<TReportDetail> => toDetail(await ownReport(opts)),
    traces: async (opts: { user: { id: number }; reportId: string }): Promise<TTraceList> => {
      const row = await ownReport(opts);
      const traces = await tracesOf(db, { userId: row.userId, reportId: row.id });
      return {
        report_id: row.id,
        items: traces.map((trace) => ({
          agent_name: trace.agentName,
          step_index: trace.stepIndex,
          role: trace.role,
          content: trace.content,
          tokens_input: trace.tokensInput,
          tokens_output: trace.tokensOutput,
          latency_ms: trace.latencyMs,
          created_at: trace.createdAt.toISOString(),
        })),
      };
    },
    /** Deletes the report, its traces and queue rows, and cancels its job when it has not started. */
    remove: async ({ user, reportId }: { user: { id: number }; reportId: string }): Promise<void> => {
      const { deleted, jobIds } = await deleteReport(db, { userId: user.id, reportId });
      if (!deleted) throw new AppError('REPORT_NOT_FOUND', 'Report not found');
      if (jobIds.length > 0) {
        const boss = await queue();
        await boss.cancel(ANALYSIS_QUEUE, jobIds).catch((error: unknown) => logger.warn({ err: error, reportId }, 'could not cancel the analysis job'));
      }
    },
    /**
     * Registers this instance's workers of the analysis queue. Each takes a few jobs per fetch
     * (highest priority first) and runs them one after another: pg-boss fetches again at once
     * while fetches come back full, where one job per fetch would wait a polling interval each.
     * A batch that fails is retried whole; a report already finished is then skipped.
     */
    startWorkers: async (boss: PgBoss): Promise<void> => {
      await queue();
      await boss.work<QueuedJob>(
        ANALYSIS_QUEUE,
        { localConcurrency: config.ANALYSIS_WORKERS, batchSize: WORKER_BATCH, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
        async (batch) => {
          // A batch is the highest-priority jobs, but not in order: run it in priority order, oldest first.
          const ordered = [...batch].sort((a, b) => b.data.priority - a.data.priority || a.data.queueId - b.data.queueId);
          for (const job of ordered) await runQueued(job.data, job.retryCount > 0);
        },
      );
    },
    /** Refreshes job_queue_depth (called when /metrics is scraped). */
    measureQueue: async (): Promise<void> => {
      metrics.jobQueueDepth.labels({ queue: ANALYSIS_QUEUE }).set(await countQueued(db));
    },
  };
};
