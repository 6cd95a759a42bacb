// Wire shapes of the LLM multi-agent analysis: the analyze request and its answer, reports (list
// item and detail), their traces, and the list query.
import { z } from 'zod';
import { bodyBoolean, pageOf, requestText, storableText, ZAssetClass, ZPageQuery, ZTimestamp } from './common.ts';
import { ZCalendarDate } from './backtest.ts';
import { ZDate } from './marketdata.ts';
import { ZSymbolInput } from './symbols.ts';

export const ZAnalysisMode = z.enum(['quick', 'standard', 'full']);
export type TAnalysisMode = z.infer<typeof ZAnalysisMode>;
export const ZReportStatus = z.enum(['queued', 'running', 'done', 'partial', 'failed']);
export type TReportStatus = z.infer<typeof ZReportStatus>;
export const ZSignal = z.enum(['buy', 'sell', 'hold']);

export const ZAnalyzeRequest = z
  .object({
    /** Free form (plain ticker, pair with slash, market-prefixed code); the asset class is inferred from it. */
    symbol: ZSymbolInput,
    mode: ZAnalysisMode.default('standard'),
    /** Runs synchronously; only with mode quick (else 400 INLINE_REQUIRES_QUICK). */
    inline: bodyBoolean().default(false),
    /** Queue priority, queue mode only: higher runs first. */
    priority: z.number().int().min(-1000).max(1000).default(0),
    /** An extension: the run is point-in-time, no agent reads a bar dated after this day. */
    as_of: ZCalendarDate.optional(),
  })
  .strict();
export type TAnalyzeRequest = z.infer<typeof ZAnalyzeRequest>;

export const ZAnalyzeResponse = z.object({
  report_id: z.string(),
  /** The analysis queue row; null for an inline run. */
  queue_id: z.number().int().nullable(),
  status: ZReportStatus,
});
export type TAnalyzeResponse = z.infer<typeof ZAnalyzeResponse>;

const reportFields = {
  report_id: z.string(),
  asset_class: ZAssetClass,
  symbol: z.string(),
  mode: ZAnalysisMode,
  status: ZReportStatus,
  /** From -1 (strong sell) to 1 (strong buy); null until the decision is made. */
  score: z.number().nullable(),
  decision: z.string().nullable(),
  confidence: z.number().nullable(),
  /** Accumulated LLM cost of the report, in USD (0 with the heuristic provider). */
  cost_usd: z.number(),
  /** An extension: when the analysis was asked for (the list's from/to filter on it). */
  requested_at: ZTimestamp,
  started_at: ZTimestamp.nullable(),
  completed_at: ZTimestamp.nullable(),
};
export const ZReport = z.object(reportFields);
export type TReport = z.infer<typeof ZReport>;

const ZAgentView = z.object({ signal: ZSignal, confidence: z.number(), reasoning: z.string() }).catchall(z.unknown());

export const ZReportDetail = z.object({
  ...reportFields,
  dashboard_md: z.string(),
  technical_output: ZAgentView.nullable(),
  intel_output: ZAgentView.nullable(),
  risk_output: z
    .object({ risk_level: z.enum(['low', 'medium', 'high']), veto_buy: z.boolean(), flags: z.array(z.string()) })
    .catchall(z.unknown())
    .nullable(),
  decision_output: z
    .object({
      signal: ZSignal,
      ideal_buy: z.number().nullable(),
      secondary_buy: z.number().nullable(),
      stop_loss: z.number().nullable(),
      take_profit: z.number().nullable(),
      currency: z.string(),
    })
    .catchall(z.unknown())
    .nullable(),
  error_message: z.string().nullable(),
  /** Extensions: what the report rested on. */
  provider: z.string(),
  model: z.string(),
  prompt_version: z.string(),
  /** The first and last bar dates the agents read (null without bars). */
  data_from: ZDate.nullable(),
  data_to: ZDate.nullable(),
  as_of: ZDate.nullable(),
  /** The settings that shaped the run (caps, budgets, debate rounds, prices). */
  settings: z.record(z.string(), z.unknown()),
  tokens_input: z.number().int(),
  tokens_output: z.number().int(),
});
export type TReportDetail = z.infer<typeof ZReportDetail>;

export const ZTrace = z.object({
  agent_name: z.string(),
  step_index: z.number().int(),
  role: z.string(),
  /** The structured reasoning when there is one, else the raw text. */
  content: z.string(),
  tokens_input: z.number().int(),
  tokens_output: z.number().int(),
  latency_ms: z.number().int(),
  created_at: ZTimestamp,
});
export type TTrace = z.infer<typeof ZTrace>;

export const ZTraceList = z.object({ report_id: z.string(), items: z.array(ZTrace) });
export type TTraceList = z.infer<typeof ZTraceList>;

/** An ISO datetime in a query (from/to on requested_at). */
const ZQueryInstant = storableText(z.iso.datetime({ offset: true }));

export const ZReportListQuery = ZPageQuery.extend({
  asset_class: ZAssetClass.optional(),
  /** Exact, as the report stores it (the normalised symbol). */
  symbol: requestText().min(1).max(32).optional(),
  from: ZQueryInstant.optional(),
  to: ZQueryInstant.optional(),
});
export type TReportListQuery = z.infer<typeof ZReportListQuery>;
export const ZReportList = pageOf(ZReport);
export type TReportList = z.infer<typeof ZReportList>;

export const ZReportIdPath = z.object({ report_id: requestText().min(1).max(64) });
