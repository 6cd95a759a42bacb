// The overview's equity curve: the portfolio history of one paper account (a point per UTC day,
// today's point live, read again with every order event), with its drawdown. The charting code is
// loaded on demand, as on the research pages, so it stays out of the console's first download.
import { Group, Paper, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import type { TAssetClass } from '@trading-service/client';
import { trpc } from '../api.ts';
import { AccountReadNotice } from '../feedback.tsx';
import { direction, pnl, pnlPercent, percentDirection } from '../format.ts';
import { AssetClassPicker } from '../pickers.tsx';

const EquityChart = lazy(async () => ({ default: (await import('../charts/equity-chart.tsx')).EquityChart }));

/**
 * The change over the curve: the last point against the equity before the first. A sum of the
 * points' P&L would leave the paper resets out; this is what the account gained or lost in all.
 */
const Change = ({ base, last, days, currency }: { base: number; last: number; days: number; currency: string }) => {
  const change = last - base;
  const fraction = base > 0 ? change / base : null;
  return (
    <Text size="sm" data-testid="overview-equity-change">
      {days === 1 ? 'Today' : `Over ${days} days`}: <span className={direction(change, currency)}>{pnl(change, currency)}</span>
      {fraction === null ? null : <span className={percentDirection(fraction)}> ({pnlPercent(fraction)})</span>}
    </Text>
  );
};

export const EquityPanel = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const history = useQuery(trpc.equity.portfolioHistory.queryOptions({ asset_class: assetClass, mode: 'paper' }, { retry: false }));
  const data = history.data;
  const last = data?.points.at(-1);
  return (
    <Paper component="article" withBorder p="md" className="panel" data-testid="overview-equity">
      <Group justify="space-between" align="end" mb="xs">
        <Title order={2} size="h4">
          Equity, paper
        </Title>
        <AssetClassPicker id="equity-asset-class" value={assetClass} onChange={setAssetClass} />
      </Group>
      {history.isPending ? (
        <Text size="sm" c="dimmed">
          Loading…
        </Text>
      ) : null}
      <AccountReadNotice error={history.error} mode="paper" />
      {data && last && data.base_value !== null ? (
        <>
          <Change base={data.base_value} last={last.equity} days={data.points.length} currency={data.currency} />
          <Suspense fallback={<Text size="sm" c="dimmed">Loading…</Text>}>
            <EquityChart curve={data.points} currency={data.currency} testId="overview-equity-chart" compact />
          </Suspense>
        </>
      ) : data ? (
        <Text size="sm" c="dimmed" data-testid="overview-equity-empty">
          No day recorded yet: the curve starts with the account’s first order.
        </Text>
      ) : null}
    </Paper>
  );
};
