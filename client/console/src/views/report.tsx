// One analysis report: status and decision, the summary as sanitised markdown, each agent's
// output, the per-agent trace timeline, and what it cost against the daily budget. Everything
// an LLM wrote is untrusted: text nodes, or markdown through DOMPurify (markdown.tsx).
import { Badge, Paper, Stack, Text, Title, type MantineColor } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { TReportDetail, TReportStatus, TReportStatusFrame, TTrace } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { price, share, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { Markdown } from '../markdown.tsx';
import { useReportProgress } from '../report-progress.ts';
import { Empty, Hint, KeyValues, Panel } from './page-kit.tsx';

const STATUS_COLORS: Record<TReportStatus, MantineColor> = { queued: 'gray', running: 'blue', done: 'green', partial: 'yellow', failed: 'red' };

/** A report's status as a badge; the word says it without the colour. */
export const ReportStatusBadge = ({ status, testId }: { status: TReportStatus; testId?: string }) => (
  <Badge component="span" variant="light" color={STATUS_COLORS[status]} size="sm" data-testid={testId}>
    {status}
  </Badge>
);

/** A decision's word in the gain colour for a buy, the loss colour for a sell. */
const decisionClass = (decision: string | null) => (decision === 'buy' ? 'gain' : decision === 'sell' ? 'loss' : undefined);

const usd = (value: number) => `${value.toFixed(6)} USD`;
const numberSetting = (settings: Record<string, unknown>, key: string) => (typeof settings[key] === 'number' ? settings[key] : undefined);

const Decision = ({ report }: { report: TReportDetail }) => {
  const decision = report.decision_output;
  // The decision's prices follow the instrument's tick (the currency's minor units until the registry answers).
  const instrument = useInstrumentOf()(report.asset_class, report.symbol);
  return (
    <Panel title="Decision" order={3} testId="report-decision">
      <Text size="sm" mb="xs">
        <Text span fw={700} fz="lg" tt="uppercase" className={decisionClass(report.decision)} data-testid="decision">
          {report.decision ?? 'none yet'}
        </Text>
        {report.confidence === null ? null : `, confidence ${share(report.confidence)}`}
        {report.score === null ? null : `, score ${report.score.toFixed(2)}`}
      </Text>
      {decision ? (
        <KeyValues
          rows={[
            ['Ideal buy', price(decision.ideal_buy, decision.currency, instrument)],
            ['Secondary buy', price(decision.secondary_buy, decision.currency, instrument)],
            ['Stop loss', price(decision.stop_loss, decision.currency, instrument)],
            ['Take profit', price(decision.take_profit, decision.currency, instrument)],
          ]}
        />
      ) : null}
      {report.error_message ? <p className="notice error">{report.error_message}</p> : null}
    </Panel>
  );
};

const Cost = ({ report }: { report: TReportDetail }) => {
  const daily = numberSetting(report.settings, 'daily_budget_usd');
  return (
    <Panel title="Cost and budget" order={3} testId="report-cost">
      <KeyValues
        rows={[
          ['This report', usd(report.cost_usd), 'cost'],
          ['Tokens', `${report.tokens_input} in, ${report.tokens_output} out`],
          ['Your daily budget', daily === undefined ? '–' : `${daily} USD`, 'budget'],
          ['Model', `${report.provider} ${report.model} (prompt ${report.prompt_version})`],
          ['Bars read', report.data_from ? `${report.data_from} to ${report.data_to}` : 'none'],
        ]}
      />
    </Panel>
  );
};

/** Each agent's structured output, its reasoning as plain text. */
const AgentOutputs = ({ report }: { report: TReportDetail }) => {
  const views = [
    ['technical', report.technical_output],
    ['intel', report.intel_output],
  ] as const;
  return (
    <div className="pages-grid" data-testid="agent-outputs">
      {views.map(([name, view]) =>
        view ? (
          <Panel key={name} order={4} testId={`agent-${name}`} title={`${name}: ${view.signal} (${share(view.confidence)})`}>
            <Text size="sm" className="untrusted">
              {view.reasoning}
            </Text>
          </Panel>
        ) : null,
      )}
      {report.risk_output ? (
        <Panel order={4} testId="agent-risk" title={`risk: ${report.risk_output.risk_level}${report.risk_output.veto_buy ? ', buy vetoed' : ''}`}>
          <ul className="pages-flags">
            {report.risk_output.flags.map((flag) => (
              <li key={flag}>{flag}</li>
            ))}
          </ul>
        </Panel>
      ) : null}
    </div>
  );
};

const Timeline = ({ traces }: { traces: readonly TTrace[] }) => (
  <ol className="pages-timeline" data-testid="traces">
    {traces.map((trace) => (
      <li key={`${trace.agent_name}-${trace.step_index}`} data-testid="trace" data-agent={trace.agent_name}>
        <Text size="sm">
          <strong>{trace.agent_name}</strong> step {trace.step_index} ({trace.role}),{' '}
          <Text span size="xs" c="dimmed" className="pages-nowrap">
            {when(trace.created_at)}: {trace.tokens_input} tokens in, {trace.tokens_output} out, {trace.latency_ms} ms
          </Text>
        </Text>
        <pre className="untrusted" data-testid="trace-content">
          {trace.content}
        </pre>
      </li>
    ))}
  </ol>
);

/** The agents' progress as the last report_status frame told it. */
const Progress = ({ frame }: { frame: TReportStatusFrame | undefined }) =>
  frame ? (
    <Hint testId="report-progress">
      {frame.agents_done} of {frame.agents_total} agent steps done{frame.agent ? ` (last: ${frame.agent})` : ''}
    </Hint>
  ) : null;

export const ReportView = ({ reportId }: { reportId: string }) => {
  const { pollEvery, progressOf } = useReportProgress();
  const report = useQuery(trpc.analysis.getReport.queryOptions({ report_id: reportId }, { refetchInterval: (query) => pollEvery(query.state.data?.status) }));
  const traces = useQuery(trpc.analysis.reportTraces.queryOptions({ report_id: reportId }, { refetchInterval: () => pollEvery(report.data?.status) }));
  if (report.error) return <ErrorNotice error={report.error} />;
  if (!report.data) return <Empty>Loading…</Empty>;
  const data = report.data;
  return (
    <Paper component="article" className="pages-panel" data-testid="report" data-report-id={reportId}>
      <Stack gap="sm">
        <div>
          <Title order={2}>
            {data.symbol} ({data.asset_class}), {data.mode}: <ReportStatusBadge status={data.status} testId="report-status" />
          </Title>
          <Progress frame={progressOf(reportId)} />
          <Hint>
            Asked {when(data.requested_at)}
            {data.completed_at ? `, done ${when(data.completed_at)}` : ''}. Analysis only: no order is placed.
          </Hint>
        </div>
        <div className="pages-grid">
          <Decision report={data} />
          <Cost report={data} />
        </div>
        <Title order={3}>Summary</Title>
        <Markdown text={data.dashboard_md} testId="report-summary" />
        <Title order={3}>Agents</Title>
        <AgentOutputs report={data} />
        <Title order={3}>Trace</Title>
        <ErrorNotice error={traces.error} />
        <Timeline traces={traces.data?.items ?? []} />
      </Stack>
    </Paper>
  );
};
