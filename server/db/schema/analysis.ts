// LLM analysis: reports (one run of the agents on one symbol), their traces (one row per agent
// step), the analysis queue (one row per queued report, beside its pg-boss job), what each user's
// reports cost per UTC day (the daily budgets) and each user's token bucket of the analysis rate
// limit.
import { boolean, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, serial, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';

export const analysisReports = pgTable(
  'analysis_reports',
  {
    /** The report_id clients read it by (a UUID). */
    id: text('id').notNull(),
    userId: integer('user_id').notNull(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    symbol: text('symbol').notNull(),
    mode: text('mode', { enum: ['quick', 'standard', 'full'] }).notNull(),
    status: text('status', { enum: ['queued', 'running', 'done', 'partial', 'failed'] }).notNull(),
    priority: integer('priority').notNull().default(0),
    /** Point in time: no bar after this day is read (null: every bar). */
    asOf: date('as_of', { mode: 'string' }),
    score: doublePrecision('score'),
    decision: text('decision'),
    confidence: doublePrecision('confidence'),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    tokensInput: integer('tokens_input').notNull().default(0),
    tokensOutput: integer('tokens_output').notNull().default(0),
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    promptVersion: text('prompt_version').notNull(),
    /** The settings that shaped the run (caps, budgets, debate rounds, prices). */
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    dataFrom: date('data_from', { mode: 'string' }),
    dataTo: date('data_to', { mode: 'string' }),
    /** Each agent's output, by agent name, and the debate transcript. */
    outputs: jsonb('outputs').$type<Record<string, unknown>>().notNull().default({}),
    dashboardMd: text('dashboard_md').notNull().default(''),
    errorMessage: text('error_message'),
    requestedAt: tsColumn('requested_at').notNull(),
    startedAt: tsColumn('started_at'),
    completedAt: tsColumn('completed_at'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.id] }), index('analysis_reports_user_idx').on(t.userId, t.requestedAt), index('analysis_reports_requested_idx').on(t.requestedAt)],
);

export type AnalysisReportRow = typeof analysisReports.$inferSelect;

export const analysisTraces = pgTable(
  'analysis_traces',
  {
    userId: integer('user_id').notNull(),
    reportId: text('report_id').notNull(),
    stepIndex: integer('step_index').notNull(),
    agentName: text('agent_name').notNull(),
    role: text('role').notNull(),
    content: text('content').notNull(),
    tokensInput: integer('tokens_input').notNull().default(0),
    tokensOutput: integer('tokens_output').notNull().default(0),
    latencyMs: integer('latency_ms').notNull().default(0),
    createdAt: tsColumn('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.reportId, t.stepIndex] })],
);

export type AnalysisTraceRow = typeof analysisTraces.$inferSelect;

export const analysisQueue = pgTable(
  'analysis_queue',
  {
    /** The queue_id of the analyze answer. */
    id: serial('id').primaryKey(),
    userId: integer('user_id').notNull(),
    reportId: text('report_id').notNull(),
    priority: integer('priority').notNull(),
    /** The pg-boss job that runs it. */
    jobId: text('job_id'),
    createdAt: tsColumn('created_at').notNull(),
  },
  (t) => [index('analysis_queue_report_idx').on(t.userId, t.reportId)],
);

/**
 * Per user and UTC day of request: what the user's reports cost, added to in the transaction that
 * records a run's cost and never taken from (deleting a report gives nothing back). The daily
 * budgets read the user's row, and the day's rows of everyone: as many as users who spent that
 * day, however many reports they ran.
 */
export const analysisSpend = pgTable(
  'analysis_spend',
  {
    userId: integer('user_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    spentUsd: decimal('spent_usd').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] }), index('analysis_spend_day_idx').on(t.day)],
);

/** Per user: the token bucket of the analysis rate limit (tokens left as of `updated_at`). */
export const analysisRateBuckets = pgTable('analysis_rate_buckets', {
  userId: integer('user_id').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  /** Whether the last request found a token (so the statement that takes one can say so). */
  lastTaken: boolean('last_taken').notNull(),
  updatedAt: tsColumn('updated_at').notNull(),
});
