// Saved backtests (stocks and crypto, newest first): open one, or tick two to compare them side
// by side.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TBacktestList, TBacktestResult } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { percent, when } from '../format.ts';
import { BacktestBadge, metricRows, useBacktestResult } from './backtest-result.tsx';

type TSummary = TBacktestList['items'][number];
const HISTORY_SIZE = 50;

const Compare = ({ pair }: { pair: [TSummary, TSummary] }) => {
  const left = useBacktestResult(pair[0]);
  const right = useBacktestResult(pair[1]);
  const results = [left.data, right.data].filter((result): result is TBacktestResult => Boolean(result));
  return (
    <article data-testid="backtest-compare">
      <h2>
        Compare <BacktestBadge />
      </h2>
      <ErrorNotice error={left.error ?? right.error} />
      {results.length === 2 ? (
        <table>
          <thead>
            <tr>
              <th />
              {results.map((result) => (
                <th key={result.result_id}>
                  {result.strategy_name} {result.symbol} {result.start_date}–{result.end_date} <code>{JSON.stringify(result.strategy_params)}</code>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {metricRows(results[0]!).map(([key, label], row) => (
              <tr key={key} data-testid={`compare-${key}`}>
                <th>{label}</th>
                {results.map((result) => (
                  <td key={result.result_id}>{metricRows(result)[row]![2]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>Loading…</p>
      )}
    </article>
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
    <section data-testid="backtest-history">
      <h2>History</h2>
      <ErrorNotice error={equity.error ?? crypto.error} />
      {items.length === 0 ? <p data-testid="no-backtests">No backtests yet.</p> : null}
      {items.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th>Compare</th>
              <th>Run</th>
              <th>Strategy</th>
              <th>Symbol</th>
              <th>Range</th>
              <th>Return</th>
              <th>Sharpe</th>
              <th>Max drawdown</th>
              <th>Round trips</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((summary) => (
              <tr key={summary.result_id} data-testid="backtest-history-row" data-result-id={summary.result_id}>
                <td>
                  <input type="checkbox" aria-label={`compare ${summary.result_id}`} checked={picked.some((item) => item.result_id === summary.result_id)} onChange={() => toggle(summary)} />
                </td>
                <td>{when(summary.created_at)}</td>
                <td>{summary.strategy_name}</td>
                <td>
                  {summary.symbol} ({summary.currency})
                </td>
                <td>
                  {summary.start_date} – {summary.end_date}
                </td>
                <td>{percent(summary.total_return_pct)}</td>
                <td>{summary.sharpe_ratio.toFixed(2)}</td>
                <td>{percent(summary.max_drawdown_pct)}</td>
                <td>{summary.total_trades}</td>
                <td>
                  <button type="button" onClick={() => onOpen(summary)}>
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {picked.length === 2 ? <Compare pair={[picked[0]!, picked[1]!]} /> : <p className="hint">Tick two runs to compare them.</p>}
    </section>
  );
};
