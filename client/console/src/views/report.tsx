// One analysis report: status and decision, the summary as sanitised markdown, each agent's
// output, the per-agent trace timeline, and what it cost against the daily budget. Everything
// an LLM wrote is untrusted: text nodes, or markdown through DOMPurify (markdown.tsx).
import { useQuery } from '@tanstack/react-query';
import type { TReportDetail, TReportStatusFrame, TTrace } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { price, share, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { Markdown } from '../markdown.tsx';
import { useReportProgress } from '../report-progress.ts';

const usd = (value: number) => `${value.toFixed(6)} USD`;
const numberSetting = (settings: Record<string, unknown>, key: string) => (typeof settings[key] === 'number' ? settings[key] : undefined);

const Decision = ({ report }: { report: TReportDetail }) => {
  const decision = report.decision_output;
  // The decision's prices follow the instrument's tick (the currency's minor units until the registry answers).
  const instrument = useInstrumentOf()(report.asset_class, report.symbol);
  return (
    <article className="card" data-testid="report-decision">
      <h3>Decision</h3>
      <p>
        <strong data-testid="decision">{report.decision ?? 'none yet'}</strong>
        {report.confidence === null ? null : `, confidence ${share(report.confidence)}`}
        {report.score === null ? null : `, score ${report.score.toFixed(2)}`}
      </p>
      {decision ? (
        <dl>
          <dt>Ideal buy</dt>
          <dd>{price(decision.ideal_buy, decision.currency, instrument)}</dd>
          <dt>Secondary buy</dt>
          <dd>{price(decision.secondary_buy, decision.currency, instrument)}</dd>
          <dt>Stop loss</dt>
          <dd>{price(decision.stop_loss, decision.currency, instrument)}</dd>
          <dt>Take profit</dt>
          <dd>{price(decision.take_profit, decision.currency, instrument)}</dd>
        </dl>
      ) : null}
      {report.error_message ? <p className="notice error">{report.error_message}</p> : null}
    </article>
  );
};

const Cost = ({ report }: { report: TReportDetail }) => {
  const daily = numberSetting(report.settings, 'daily_budget_usd');
  return (
    <article className="card" data-testid="report-cost">
      <h3>Cost and budget</h3>
      <dl>
        <dt>This report</dt>
        <dd data-testid="cost">{usd(report.cost_usd)}</dd>
        <dt>Tokens</dt>
        <dd>
          {report.tokens_input} in, {report.tokens_output} out
        </dd>
        <dt>Your daily budget</dt>
        <dd data-testid="budget">{daily === undefined ? '–' : `${daily} USD`}</dd>
        <dt>Model</dt>
        <dd>
          {report.provider} {report.model} (prompt {report.prompt_version})
        </dd>
        <dt>Bars read</dt>
        <dd>{report.data_from ? `${report.data_from} to ${report.data_to}` : 'none'}</dd>
      </dl>
    </article>
  );
};

/** Each agent's structured output, its reasoning as plain text. */
const AgentOutputs = ({ report }: { report: TReportDetail }) => {
  const views = [
    ['technical', report.technical_output],
    ['intel', report.intel_output],
  ] as const;
  return (
    <div className="cards" data-testid="agent-outputs">
      {views.map(([name, view]) =>
        view ? (
          <article key={name} className="card" data-testid={`agent-${name}`}>
            <h3>
              {name}: {view.signal} ({share(view.confidence)})
            </h3>
            <p className="untrusted">{view.reasoning}</p>
          </article>
        ) : null,
      )}
      {report.risk_output ? (
        <article className="card" data-testid="agent-risk">
          <h3>
            risk: {report.risk_output.risk_level}
            {report.risk_output.veto_buy ? ', buy vetoed' : ''}
          </h3>
          <ul>
            {report.risk_output.flags.map((flag) => (
              <li key={flag}>{flag}</li>
            ))}
          </ul>
        </article>
      ) : null}
    </div>
  );
};

const Timeline = ({ traces }: { traces: readonly TTrace[] }) => (
  <ol className="timeline" data-testid="traces">
    {traces.map((trace) => (
      <li key={`${trace.agent_name}-${trace.step_index}`} data-testid="trace" data-agent={trace.agent_name}>
        <p>
          <strong>{trace.agent_name}</strong> step {trace.step_index} ({trace.role}), {when(trace.created_at)}: {trace.tokens_input} tokens in, {trace.tokens_output} out,{' '}
          {trace.latency_ms} ms
        </p>
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
    <p className="hint" data-testid="report-progress">
      {frame.agents_done} of {frame.agents_total} agent steps done{frame.agent ? ` (last: ${frame.agent})` : ''}
    </p>
  ) : null;

export const ReportView = ({ reportId }: { reportId: string }) => {
  const { pollEvery, progressOf } = useReportProgress();
  const report = useQuery(trpc.analysis.getReport.queryOptions({ report_id: reportId }, { refetchInterval: (query) => pollEvery(query.state.data?.status) }));
  const traces = useQuery(trpc.analysis.reportTraces.queryOptions({ report_id: reportId }, { refetchInterval: () => pollEvery(report.data?.status) }));
  if (report.error) return <ErrorNotice error={report.error} />;
  if (!report.data) return <p>Loading…</p>;
  const data = report.data;
  return (
    <article data-testid="report" data-report-id={reportId}>
      <h2>
        {data.symbol} ({data.asset_class}), {data.mode}: <span data-testid="report-status">{data.status}</span>
      </h2>
      <Progress frame={progressOf(reportId)} />
      <p className="hint">
        Asked {when(data.requested_at)}
        {data.completed_at ? `, done ${when(data.completed_at)}` : ''}. Analysis only: no order is placed.
      </p>
      <div className="cards">
        <Decision report={data} />
        <Cost report={data} />
      </div>
      <h3>Summary</h3>
      <Markdown text={data.dashboard_md} testId="report-summary" />
      <h3>Agents</h3>
      <AgentOutputs report={data} />
      <h3>Trace</h3>
      <ErrorNotice error={traces.error} />
      <Timeline traces={traces.data?.items ?? []} />
    </article>
  );
};
