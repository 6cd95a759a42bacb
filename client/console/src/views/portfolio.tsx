// The portfolio of one paper account over a range: its performance (time-weighted return,
// realised and unrealised P&L, fees and taxes, drawdown, Sharpe, win rate), the equity curve with
// its drawdown, a calendar of daily P&L, the results per symbol, and the ledger (fills, FIFO lots,
// flows) a page at a time with its CSV download. Loaded on demand, with the charting code.
import { Button, Group, NativeSelect, Paper, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TActivity, TActivityType, TAssetClass, TPerformance, TPortfolioPoint } from '@trading-service/client';
import { trpc } from '../api.ts';
import { EquityChart } from '../charts/equity-chart.tsx';
import { AccountReadNotice, ErrorNotice } from '../feedback.tsx';
import { direction, money, percent, percentDirection, pnl, pnlPercent, share, when } from '../format.ts';
import { AssetClassPicker, PaperBadge } from '../pickers.tsx';
import { session } from '../session.ts';
import { TableScroll } from '../table-scroll.tsx';

const LEDGER_PAGE = 20;
const LEDGER_TYPES: { value: TActivityType; label: string }[] = [
  { value: 'fill', label: 'Fills' },
  { value: 'lot', label: 'Closed lots' },
  { value: 'flow', label: 'Flows' },
];
/** The ranges offered, in days back from today (the API's default is the year). */
const RANGES = [
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
  { value: '365', label: 'Last year' },
];
const DAY_MS = 86_400_000;
/** The range's first day; none for the year, the API's own default (it ends on the server's today). */
const fromOf = (days: string): string | undefined => (days === '365' ? undefined : new Date(Date.now() - Number(days) * DAY_MS).toISOString().slice(0, 10));

const Figures = ({ performance }: { performance: TPerformance }) => {
  const { currency } = performance;
  return (
    <dl className="stats" data-testid="performance">
      <dt className="stats-hero-label">Time-weighted return</dt>
      <dd className={`stats-hero ${percentDirection(performance.time_weighted_return)}`} data-testid="twr">
        {pnlPercent(performance.time_weighted_return)}
      </dd>
      <dt>Realised P&amp;L (FIFO)</dt>
      <dd className={direction(performance.realized_pnl, currency)} data-testid="realized">
        {pnl(performance.realized_pnl, currency)}
      </dd>
      <dt>Unrealised P&amp;L</dt>
      <dd className={performance.unrealized_pnl === null ? '' : direction(performance.unrealized_pnl, currency)}>{pnl(performance.unrealized_pnl, currency)}</dd>
      <dt>Fees</dt>
      <dd>{money(performance.fees, currency)}</dd>
      <dt>Taxes</dt>
      <dd>{money(performance.taxes, currency)}</dd>
      <dt>Max drawdown</dt>
      <dd>{percent(performance.max_drawdown_pct)}</dd>
      <dt>Sharpe ratio</dt>
      <dd>{performance.sharpe_ratio.toFixed(2)}</dd>
      <dt>Win rate ({performance.closed_lots} closed lots)</dt>
      <dd>{share(performance.win_rate)}</dd>
      <dt>Profit factor</dt>
      <dd>{performance.profit_factor === null ? '–' : performance.profit_factor.toFixed(2)}</dd>
    </dl>
  );
};

/** Each day's P&L in a week row, Monday first: the sign and an arrow read without colour. */
const Calendar = ({ points, currency }: { points: readonly TPortfolioPoint[]; currency: string }) => {
  const weeks: (TPortfolioPoint | null)[][] = [];
  for (const point of points) {
    const weekday = (new Date(`${point.date}T00:00:00Z`).getUTCDay() + 6) % 7;
    if (weeks.length === 0 || weekday === 0) weeks.push(Array.from({ length: 7 }, () => null));
    weeks.at(-1)![weekday] = point;
  }
  return (
    <TableScroll label="Daily P&L">
      <Table data-testid="pnl-calendar" className="pnl-calendar">
        <Table.Thead>
          <Table.Tr>
            {['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((day) => (
              <Table.Th key={day}>{day}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {weeks.map((week) => (
            <Table.Tr key={week.find((point) => point)?.date}>
              {week.map((point, i) => (
                <Table.Td key={i} className={point ? direction(point.pnl, currency) : undefined} data-testid={point ? 'pnl-day' : undefined}>
                  {point ? (
                    <>
                      <span className="pnl-date">{point.date.slice(5)}</span> {pnl(point.pnl, currency)}
                    </>
                  ) : null}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </TableScroll>
  );
};

const COLUMNS: Record<TActivityType, { key: string; label: string; num?: boolean; time?: boolean }[]> = {
  fill: [
    { key: 'at', label: 'Time', time: true },
    { key: 'symbol', label: 'Symbol' },
    { key: 'side', label: 'Side' },
    { key: 'qty', label: 'Qty', num: true },
    { key: 'price', label: 'Price', num: true },
    { key: 'fee', label: 'Fee', num: true },
    { key: 'tax', label: 'Tax', num: true },
  ],
  lot: [
    { key: 'symbol', label: 'Symbol' },
    { key: 'qty', label: 'Qty', num: true },
    { key: 'acquired_at', label: 'Acquired', time: true },
    { key: 'sold_at', label: 'Sold', time: true },
    { key: 'cost_basis', label: 'Cost basis', num: true },
    { key: 'proceeds', label: 'Proceeds', num: true },
    { key: 'gain', label: 'Gain', num: true },
  ],
  flow: [
    { key: 'at', label: 'Time', time: true },
    { key: 'kind', label: 'Kind' },
    { key: 'amount', label: 'Amount', num: true },
    { key: 'equity_before', label: 'Equity before', num: true },
    { key: 'equity_after', label: 'Equity after', num: true },
  ],
};

const cellOf = (row: TActivity, column: { key: string; time?: boolean }): string => {
  const value = (row as Record<string, string>)[column.key] ?? '';
  return column.time && value ? when(value) : value;
};

/** The whole ledger of a type as CSV, as the API writes it, saved by the browser. */
const downloadCsv = async (query: Record<string, string>) => {
  const url = `/api/equity/activities?${new URLSearchParams({ ...query, format: 'csv' }).toString()}`;
  const token = await session.accessToken();
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!response.ok) throw new Error(`${response.status}: the download was refused`);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = `${query.asset_class}-${query.type}${query.from ? `-from-${query.from}` : ''}.csv`;
  link.click();
  URL.revokeObjectURL(link.href);
};

const Ledger = ({ assetClass, from }: { assetClass: TAssetClass; from: string | undefined }) => {
  const [type, setType] = useState<TActivityType>('fill');
  const [page, setPage] = useState(1);
  const [failed, setFailed] = useState<unknown>(undefined);
  const list = useQuery(trpc.equity.activities.queryOptions({ asset_class: assetClass, mode: 'paper', type, ...(from ? { from } : {}), page, size: LEDGER_PAGE, format: 'json' }, { retry: false }));
  const columns = COLUMNS[type];
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / LEDGER_PAGE));
  return (
    <Paper withBorder className="panel table-panel">
      <Group justify="space-between" px="md" pt="md" pb="xs">
        <Title order={2} size="h4">
          Ledger
        </Title>
        <Group gap="xs">
          <NativeSelect
            id="ledger-type"
            aria-label="Ledger rows"
            size="xs"
            value={type}
            data={LEDGER_TYPES}
            onChange={(event) => {
              setType(LEDGER_TYPES.find((option) => option.value === event.currentTarget.value)?.value ?? 'fill');
              setPage(1);
            }}
          />
          <Button size="compact-sm" variant="light" data-testid="ledger-csv" onClick={() => void downloadCsv({ asset_class: assetClass, mode: 'paper', type, ...(from ? { from } : {}) }).then(() => setFailed(undefined), setFailed)}>
            Download CSV
          </Button>
        </Group>
      </Group>
      <ErrorNotice error={list.error ?? failed} />
      <TableScroll label="Ledger">
        <Table data-testid="ledger" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              {columns.map((column) => (
                <Table.Th key={column.key} className={column.num ? 'num' : undefined}>
                  {column.label}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data && list.data.items.length === 0 ? (
              <Table.Tr>
                <Table.Td colSpan={columns.length} c="dimmed" data-testid="ledger-empty">
                  Nothing in this range.
                </Table.Td>
              </Table.Tr>
            ) : null}
            {list.data?.items.map((row: TActivity, i) => (
              <Table.Tr key={i} data-testid="ledger-row">
                {columns.map((column) => (
                  <Table.Td key={column.key} className={column.num ? 'num' : undefined}>
                    {cellOf(row, column)}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </TableScroll>
      {pages > 1 ? (
        <Group gap="xs" m="md" className="pager">
          <Button variant="default" size="compact-sm" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <Text component="span" size="sm" c="dimmed" data-testid="ledger-page">
            page {page} of {pages}
          </Text>
          <Button variant="default" size="compact-sm" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </Group>
      ) : null}
    </Paper>
  );
};

export const Portfolio = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [days, setDays] = useState('365');
  const from = fromOf(days);
  const range = { asset_class: assetClass, mode: 'paper' as const, ...(from ? { from } : {}) };
  const history = useQuery(trpc.equity.portfolioHistory.queryOptions(range, { retry: false }));
  const performance = useQuery(trpc.equity.performance.queryOptions(range, { retry: false }));
  return (
    <section>
      <Title order={1} mb="md">
        Portfolio <PaperBadge />
      </Title>
      <div className="filters">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} />
        <NativeSelect id="portfolio-range" label="Range" value={days} data={RANGES} onChange={(event) => setDays(event.currentTarget.value)} />
      </div>
      <AccountReadNotice error={history.error ?? performance.error} mode="paper" />
      {history.isPending || performance.isPending ? (
        <Text size="sm" c="dimmed">
          Loading…
        </Text>
      ) : null}
      {history.data && performance.data ? (
        <>
          <div className="portfolio-top">
            <Paper component="article" withBorder p="md" className="panel">
              <Title order={2} size="h4" mb="xs">
                Performance
              </Title>
              <Figures performance={performance.data} />
            </Paper>
            <Paper component="article" withBorder p="md" className="panel">
              <Title order={2} size="h4" mb="xs">
                Equity and drawdown
              </Title>
              {history.data.points.length > 0 ? (
                <EquityChart curve={history.data.points} currency={history.data.currency} testId="portfolio-equity-chart" compact />
              ) : (
                <Text size="sm" c="dimmed" data-testid="portfolio-empty">
                  No day recorded yet: the curve starts with the account’s first order.
                </Text>
              )}
            </Paper>
          </div>
          <Paper withBorder className="panel table-panel portfolio-section">
            <Title order={2} size="h4" px="md" pt="md" pb="xs">
              Daily P&amp;L
            </Title>
            <Calendar points={history.data.points} currency={history.data.currency} />
          </Paper>
          <Paper withBorder className="panel table-panel portfolio-section">
            <Title order={2} size="h4" px="md" pt="md" pb="xs">
              By symbol
            </Title>
            <TableScroll label="Results by symbol">
              <Table data-testid="by-symbol" highlightOnHover>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Symbol</Table.Th>
                    <Table.Th className="num">Realised</Table.Th>
                    <Table.Th className="num">Unrealised</Table.Th>
                    <Table.Th className="num">Fees</Table.Th>
                    <Table.Th className="num">Closed lots</Table.Th>
                    <Table.Th className="num">Win rate</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {performance.data.by_symbol.length === 0 ? (
                    <Table.Tr>
                      <Table.Td colSpan={6} c="dimmed">
                        No trades in this range.
                      </Table.Td>
                    </Table.Tr>
                  ) : null}
                  {performance.data.by_symbol.map((row) => (
                    <Table.Tr key={row.symbol} data-testid="symbol-row">
                      <Table.Td fw={500}>{row.symbol}</Table.Td>
                      <Table.Td className={`num ${direction(row.realized_pnl, performance.data.currency)}`}>{pnl(row.realized_pnl, performance.data.currency)}</Table.Td>
                      <Table.Td className="num">{pnl(row.unrealized_pnl, performance.data.currency)}</Table.Td>
                      <Table.Td className="num">{money(row.fees, performance.data.currency)}</Table.Td>
                      <Table.Td className="num">{row.closed_lots}</Table.Td>
                      <Table.Td className="num">{share(row.win_rate)}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </TableScroll>
          </Paper>
          <div className="portfolio-section">
            <Ledger assetClass={assetClass} from={from} />
          </div>
        </>
      ) : null}
    </section>
  );
};
