// The analysis page: ask for a report (checked with ZAnalyzeRequest), the list of reports, and
// the one opened (views/report.tsx).
import { Button, Table, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZAnalysisMode, ZAnalyzeRequest, type TAnalysisMode } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, type TFieldErrors } from '../forms.tsx';
import { when } from '../format.ts';
import { isUnfinished, useReportProgress } from '../report-progress.ts';
import { ChoiceField, DataTable, Empty, Field, Hint, Page, Panel, SwitchField } from './page-kit.tsx';
import { ReportStatusBadge, ReportView } from './report.tsx';

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
    const request = checkedRequest(ZAnalyzeRequest, { symbol: fieldText(form, 'symbol').trim(), mode, inline }, setErrors);
    if (request) analyze.mutate(request);
  };
  return (
    <Panel title="Ask for a report" testId="analyze" aside={<Hint>Analysis only: no order is placed.</Hint>}>
      <form className="pages-form" onSubmit={submit} noValidate data-testid="analyze-form">
        <div className="pages-fields pages-analyze-fields">
          <Field name="symbol" label="Symbol" placeholder="AAPL, BTC/USDT, 005930" errors={errors} />
          <ChoiceField name="mode" label="Depth" choices={ZAnalysisMode.options.map((option) => ({ value: option, label: option }))} value={mode} onChange={(next) => setMode(ZAnalysisMode.parse(next))} />
          <div className="pages-switch-cell">
            <SwitchField name="inline" label="Wait for it (quick only)" disabled={mode !== 'quick'} defaultChecked />
          </div>
          <div className="pages-switch-cell">
            <Button type="submit" loading={analyze.isPending}>
              {analyze.isPending ? 'Asking…' : 'Analyse'}
            </Button>
          </div>
        </div>
      </form>
      <ErrorNotice error={analyze.error} />
      <DoneNotice text={analyze.data ? `Report ${analyze.data.report_id}: ${analyze.data.status}` : undefined} />
    </Panel>
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
    <Page title="Analysis">
      <AnalyzeForm onAsked={setOpened} />
      {opened ? <ReportView reportId={opened} /> : null}
      <Panel title="Reports" testId="reports-panel">
        <ErrorNotice error={reports.error} />
        {reports.data && reports.data.items.length === 0 ? <Empty testId="no-reports">No reports yet.</Empty> : null}
        {reports.data && reports.data.items.length > 0 ? (
          <DataTable label="Reports" testId="reports">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Asked</Table.Th>
                <Table.Th>Symbol</Table.Th>
                <Table.Th>Depth</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Decision</Table.Th>
                <Table.Th className="pages-num">Cost</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {reports.data.items.map((report) => (
                <Table.Tr key={report.report_id} data-testid="report-row" data-report-id={report.report_id}>
                  <Table.Td className="pages-nowrap">{when(report.requested_at)}</Table.Td>
                  <Table.Td>{report.symbol}</Table.Td>
                  <Table.Td>{report.mode}</Table.Td>
                  <Table.Td>
                    <ReportStatusBadge status={report.status} />
                  </Table.Td>
                  <Table.Td>{report.decision ?? '–'}</Table.Td>
                  <Table.Td className="pages-num">{report.cost_usd.toFixed(6)} USD</Table.Td>
                  <Table.Td>
                    <Button variant="default" onClick={() => setOpened(report.report_id)}>
                      Open
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
      </Panel>
    </Page>
  );
};
