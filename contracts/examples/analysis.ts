// Examples of the LLM analysis: asking for one, the reports (list and detail), their traces.
import type { z } from 'zod';
import type { ZAnalyzeRequest, ZAnalyzeResponse, ZReportDetail, ZReportIdPath, ZReportList, ZReportListQuery, ZTraceList, TReport } from '../analysis.ts';
import { example, type OperationExample } from './types.ts';

const REPORT_ID = '0f8e2d4c-6b1a-4c3e-9d7f-5a2b8c1e4f60';

const REPORT: TReport = {
  report_id: REPORT_ID,
  asset_class: 'us_equity',
  symbol: 'AAPL',
  mode: 'standard',
  status: 'done',
  score: 0.42,
  decision: 'buy',
  confidence: 0.68,
  cost_usd: 0.0184,
  requested_at: '2026-12-02T03:00:00.000Z',
  started_at: '2026-12-02T03:00:01.250Z',
  completed_at: '2026-12-02T03:00:38.900Z',
};

const agentView = (signal: 'buy' | 'hold', confidence: number, reasoning: string) => ({ signal, confidence, reasoning });

export const ANALYSIS_EXAMPLES: Record<string, OperationExample> = {
  analysisAnalyze: example<typeof ZAnalyzeRequest, typeof ZAnalyzeResponse>({
    input: { symbol: 'AAPL', mode: 'standard', inline: false, priority: 0, as_of: '2026-12-01' },
    output: { report_id: REPORT_ID, queue_id: 1287, status: 'queued' },
  }),
  analysisListReports: example<typeof ZReportListQuery, typeof ZReportList>({
    input: { page: 1, size: 20, asset_class: 'us_equity', symbol: 'AAPL', from: '2026-12-01T00:00:00Z', to: '2026-12-02T23:59:59Z' },
    output: { items: [REPORT], total: 1, page: 1, size: 20 },
  }),
  analysisGetReport: example<typeof ZReportIdPath, typeof ZReportDetail>({
    input: { report_id: REPORT_ID },
    output: {
      ...REPORT,
      dashboard_md: '# AAPL: buy (score 0.42, confidence 0.68)\n\nUptrend above the 50-day average; no risk veto.',
      technical_output: agentView('buy', 0.72, 'Close above the 20- and 50-day averages; RSI 61, not overbought.'),
      intel_output: agentView('hold', 0.5, 'No material news in the window.'),
      risk_output: { risk_level: 'medium', veto_buy: false, flags: ['earnings_within_30d'] },
      decision_output: { signal: 'buy', ideal_buy: 236.2, secondary_buy: 231.5, stop_loss: 224.8, take_profit: 252.4, currency: 'USD', confidence: 0.68 },
      error_message: null,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      prompt_version: '2026-11-23.1',
      data_from: '2025-12-01',
      data_to: '2026-12-01',
      as_of: '2026-12-01',
      settings: { mode: 'standard', debate_rounds: 1, tokens_per_report: 60000, bars: 250 },
      tokens_input: 18420,
      tokens_output: 2310,
    },
  }),
  analysisDeleteReport: example<typeof ZReportIdPath, z.ZodVoid>({ input: { report_id: REPORT_ID } }),
  analysisReportTraces: example<typeof ZReportIdPath, typeof ZTraceList>({
    input: { report_id: REPORT_ID },
    output: {
      report_id: REPORT_ID,
      items: [
        {
          agent_name: 'technical',
          step_index: 0,
          role: 'analyst',
          content: '{"signal":"buy","confidence":0.72,"reasoning":"Close above the 20- and 50-day averages; RSI 61, not overbought."}',
          tokens_input: 6120,
          tokens_output: 540,
          latency_ms: 8420,
          created_at: '2026-12-02T03:00:09.700Z',
        },
      ],
    },
  }),
};
