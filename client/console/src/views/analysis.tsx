// The analysis page: ask for a report (checked with ZAnalyzeRequest), the list of reports, and
// the one opened (views/report.tsx).
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZAnalysisMode, ZAnalyzeRequest, type TAnalysisMode } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { when } from '../format.ts';
import { isUnfinished, useReportProgress } from '../report-progress.ts';
import { ReportView } from './report.tsx';

const LIST_SIZE = 20;

const AnalyzeForm = ({ onAsked }: { onAsked: (reportId: string) => void }) => {
  const [mode, setMode] = useState<TAnalysisMode>('quick');
  const [errors, setErrors] = useState<TFieldErrors>({});
  const analyze = useMutation(
    trpc.analysis.analyze.mutationOptions({
      onSuccess: (answer) => onAsked(answer.report_id),
      onSettled: () => queryClient.invalidateQueries(trpc.analysis.listReports.pathFilter()),
    }),
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    // Inline runs exist only in quick mode (the API answers 400 INLINE_REQUIRES_QUICK otherwise).
    const inline = mode === 'quick' && form.get('inline') === 'on';
    const checked = ZAnalyzeRequest.safeParse({ symbol: fieldText(form, 'symbol').trim(), mode, inline });
    setErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) analyze.mutate(checked.data);
  };
  return (
    <>
      <form onSubmit={submit} noValidate data-testid="analyze-form">
        <TextField name="symbol" label="Symbol" placeholder="AAPL, BTC/USDT, 005930" errors={errors} />
        <label>
          Depth{' '}
          <select name="mode" value={mode} onChange={(event) => setMode(ZAnalysisMode.parse(event.target.value))}>
            {ZAnalysisMode.options.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        <label>
          Wait for it (quick only) <input type="checkbox" name="inline" disabled={mode !== 'quick'} defaultChecked />
        </label>
        <button type="submit" disabled={analyze.isPending}>
          {analyze.isPending ? 'Asking…' : 'Analyse'}
        </button>
      </form>
      <ErrorNotice error={analyze.error} />
      <DoneNotice text={analyze.data ? `Report ${analyze.data.report_id}: ${analyze.data.status}` : undefined} />
    </>
  );
};

export const Analysis = () => {
  const [opened, setOpened] = useState<string>();
  const { pollEvery } = useReportProgress();
  const reports = useQuery(
    trpc.analysis.listReports.queryOptions(
      { page: 1, size: LIST_SIZE },
      // The list follows unfinished reports the same way the opened report does.
      { refetchInterval: (query) => pollEvery(query.state.data?.items.some((item) => isUnfinished(item.status)) ? 'running' : undefined) },
    ),
  );
  return (
    <section>
      <h1>Analysis</h1>
      <AnalyzeForm onAsked={setOpened} />
      {opened ? <ReportView reportId={opened} /> : null}
      <h2>Reports</h2>
      <ErrorNotice error={reports.error} />
      {reports.data && reports.data.items.length === 0 ? <p data-testid="no-reports">No reports yet.</p> : null}
      {reports.data && reports.data.items.length > 0 ? (
        <table data-testid="reports">
          <thead>
            <tr>
              <th>Asked</th>
              <th>Symbol</th>
              <th>Depth</th>
              <th>Status</th>
              <th>Decision</th>
              <th>Cost</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {reports.data.items.map((report) => (
              <tr key={report.report_id} data-testid="report-row" data-report-id={report.report_id}>
                <td>{when(report.requested_at)}</td>
                <td>{report.symbol}</td>
                <td>{report.mode}</td>
                <td>{report.status}</td>
                <td>{report.decision ?? '–'}</td>
                <td>{report.cost_usd.toFixed(6)} USD</td>
                <td>
                  <button type="button" onClick={() => setOpened(report.report_id)}>
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
