// LLM multi-agent analysis: analyze a symbol (queued, or inline in quick mode), the reports, their
// traces, and delete.
import { z } from 'zod';
import { ZAnalyzeRequest, ZAnalyzeResponse, ZReportDetail, ZReportIdPath, ZReportList, ZReportListQuery, ZTraceList } from '../../contracts/analysis.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const openapi = (method: 'GET' | 'POST' | 'DELETE', path: `/${string}`, summary: string) => ({ method, path, tags: ['analysis'], summary, protect: true });

export const analysisRouter = router({
  analyze: authedProcedure
    .meta({ apiKeyScope: 'analysis',
      openapi: openapi('POST', '/equity/analyze', 'Analyse a symbol with the agents: queued (202 with a queue_id), or inline in quick mode (202 with the finished status)'),
      status: 202,
      errors: ['INVALID_SYMBOL', 'INLINE_REQUIRES_QUICK', 'RATE_LIMIT_EXCEEDED', 'LLM_BUDGET_EXCEEDED', 'FEATURE_DISABLED'],
    })
    .input(ZAnalyzeRequest)
    .output(ZAnalyzeResponse)
    .mutation(({ ctx, input }) => ctx.analysis.analyze({ user: ctx.user, request: input })),
  listReports: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/reports', 'Your analysis reports, newest first, filtered by asset class, symbol and when they were asked for') })
    .input(ZReportListQuery)
    .output(ZReportList)
    .query(({ ctx, input }) => ctx.analysis.list({ user: ctx.user, query: input })),
  getReport: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/reports/{report_id}', 'One of your reports: the decision, each agent’s output, the dashboard and what it rested on'), errors: ['REPORT_NOT_FOUND'] })
    .input(ZReportIdPath)
    .output(ZReportDetail)
    .query(({ ctx, input }) => ctx.analysis.get({ user: ctx.user, reportId: input.report_id })),
  reportTraces: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/reports/{report_id}/traces', 'Every agent step of a report, in order, with its tokens and latency'), errors: ['REPORT_NOT_FOUND'] })
    .input(ZReportIdPath)
    .output(ZTraceList)
    .query(({ ctx, input }) => ctx.analysis.traces({ user: ctx.user, reportId: input.report_id })),
  deleteReport: authedProcedure
    .meta({ apiKeyScope: 'analysis', openapi: openapi('DELETE', '/equity/reports/{report_id}', 'Delete a report with its traces and queue rows (a job not yet started is cancelled)'), status: 204, errors: ['REPORT_NOT_FOUND'] })
    .input(ZReportIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.analysis.remove({ user: ctx.user, reportId: input.report_id })),
});
