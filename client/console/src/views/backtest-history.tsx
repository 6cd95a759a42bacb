// Saved backtests (stocks and crypto, newest first): open one, or tick two to compare them side
// by side.
import { Button, Checkbox, Code, Paper, Stack, Table, Title, VisuallyHidden } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TBacktestList, TBacktestResult } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { percent, percentDirection, pnlPercent, when } from '../format.ts';
import { BacktestBadge, metricRows, useBacktestResult } from './backtest-result.tsx';
import { DataTable, Empty, Hint, Panel } from './page-kit.tsx';

type TSummary = TBacktestList['items'][number];
const HISTORY_SIZE = 50;

const Compare = ({ pair }: { pair: [TSummary, TSummary] }) => {
  const left = useBacktestResult(pair[0]);
  const right = useBacktestResult(pair[1]);
  const results = [left.data, right.data].filter((result): result is TBacktestResult => Boolean(result));
  return (
    <Panel title="Compare" order={3} testId="backtest-compare" aside={<BacktestBadge />}>
      <ErrorNotice error={left.error ?? right.error} />
      {results.length === 2 ? (
        <DataTable label="Two backtests side by side">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>
                <VisuallyHidden>Metric</VisuallyHidden>
              </Table.Th>
              {results.map((result) => (
                <Table.Th key={result.result_id} className="pages-compare-head">
                  {result.strategy_name} {result.symbol} {result.start_date}–{result.end_date} <Code className="pages-code">{JSON.stringify(result.strategy_params)}</Code>
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {metricRows(results[0]!).map(([key, label], row) => (
              <Table.Tr key={key} data-testid={`compare-${key}`}>
                <Table.Th scope="row">{label}</Table.Th>
                {results.map((result) => (
                  <Table.Td key={result.result_id} className="pages-num">
                    {metricRows(result)[row]![2]}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </DataTable>
      ) : (
        <Empty>Loading…</Empty>
      )}
    </Panel>
  );
};

export const BacktestHistory = ({ onOpen }: { onOpen: (summary: TSummary) => void }) => {
  const equity = useQuery(trpc.backtest.equity.list.queryOptions({ page: 1, size: HISTORY_SIZE }));
  const crypto = useQuery(trpc.backtest.crypto.list.queryOptions({ page: 1, size: HISTORY_SIZE }));
  const [picked, setPicked] = useState<TSummary[]>([]);
  const items = [...(equity.data?.items ?? []), ...(crypto.data?.items ?? [])].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const toggle = (summary: TSummary) =>
    setPicked((current) => (current.some((item) => item.result_id === summary.result_id) ? current.filter((item) => item.result_id !== summary.result_id) : [...current, summary].slice(-2)));

  return (
    <Paper component="section" className="pages-panel" data-testid="backtest-history">
      <div className="pages-panel-head">
        <Title order={2}>History</Title>
        <Hint>Tick two runs to compare them.</Hint>
      </div>
      <Stack gap="sm">
        <ErrorNotice error={equity.error ?? crypto.error} />
        {items.length === 0 ? <Empty testId="no-backtests">No backtests yet.</Empty> : null}
        {items.length > 0 ? (
          <DataTable label="Saved backtests">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Compare</Table.Th>
                <Table.Th>Run</Table.Th>
                <Table.Th>Strategy</Table.Th>
                <Table.Th>Symbol</Table.Th>
                <Table.Th>Range</Table.Th>
                <Table.Th className="pages-num">Return</Table.Th>
                <Table.Th className="pages-num">Sharpe</Table.Th>
                <Table.Th className="pages-num">Max drawdown</Table.Th>
                <Table.Th className="pages-num">Round trips</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((summary) => (
                <Table.Tr key={summary.result_id} data-testid="backtest-history-row" data-result-id={summary.result_id}>
                  <Table.Td>
                    <Checkbox aria-label={`compare ${summary.result_id}`} checked={picked.some((item) => item.result_id === summary.result_id)} onChange={() => toggle(summary)} />
                  </Table.Td>
                  {/* The run's time and range may wrap: the figures after them stay in view at a laptop's width. */}
                  <Table.Td>{when(summary.created_at)}</Table.Td>
                  <Table.Td>{summary.strategy_name}</Table.Td>
                  <Table.Td className="pages-nowrap">
                    {summary.symbol} ({summary.currency})
                  </Table.Td>
                  <Table.Td>
                    {summary.start_date} – {summary.end_date}
                  </Table.Td>
                  <Table.Td className={`pages-num ${percentDirection(summary.total_return_pct)}`}>{pnlPercent(summary.total_return_pct)}</Table.Td>
                  <Table.Td className="pages-num">{summary.sharpe_ratio.toFixed(2)}</Table.Td>
                  <Table.Td className="pages-num">{percent(summary.max_drawdown_pct)}</Table.Td>
                  <Table.Td className="pages-num">{summary.total_trades}</Table.Td>
                  <Table.Td>
                    <Button variant="default" onClick={() => onOpen(summary)}>
                      Open
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
        {picked.length === 2 ? <Compare pair={[picked[0]!, picked[1]!]} /> : null}
      </Stack>
    </Paper>
  );
};
