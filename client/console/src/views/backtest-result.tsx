// One backtest result in full: metric cards, the equity curve with its drawdown pane, the fills
// as markers on the price chart, and the fills table. A backtest is a simulation: its numbers
// are marked so, never paper or live.
import { Badge, Code, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { TBacktestResult, TAssetClass, TInstrument } from '@trading-service/client';
import { trpc } from '../api.ts';
import { EquityChart } from '../charts/equity-chart.tsx';
import { PriceChart, type TFillMarker } from '../charts/price-chart.tsx';
import { ErrorNotice } from '../feedback.tsx';
import { money, percent, percentDirection, pnlPercent, price, quantity, share, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { DataTable, SideText } from './page-kit.tsx';

/** A backtest is a simulation: marked so, in its own colour, never paper's or live's. */
export const BacktestBadge = () => (
  <Badge component="span" variant="light" color="grape" size="sm" data-testid="mode">
    backtest
  </Badge>
);

const ratio = (value: number | null) => (value === null ? '–' : value.toFixed(2));

/** The metrics every result view shows, as label and text (money with its currency). */
export const metricRows = (result: TBacktestResult): [string, string, string][] => [
  ['total_return_pct', 'Total return', pnlPercent(result.total_return_pct)],
  ['annual_return', 'Annual return (CAGR)', percent(result.annual_return)],
  ['sharpe_ratio', 'Sharpe ratio', ratio(result.sharpe_ratio)],
  ['max_drawdown_pct', 'Max drawdown', percent(result.max_drawdown_pct)],
  ['win_rate', 'Win rate', share(result.win_rate)],
  ['profit_factor', 'Profit factor', ratio(result.profit_factor)],
  ['total_trades', 'Round trips', String(result.total_trades)],
  ['buy_hold_return_pct', 'Buy and hold', percent(result.buy_hold_return_pct)],
  ['initial_capital', 'Initial capital', money(result.initial_capital, result.currency)],
  ['final_capital', 'Final capital', money(result.final_capital, result.currency)],
];

/** The returns coloured by their sign (the sign and arrow in the text say it without colour). */
const SIGNED: Partial<Record<string, (result: TBacktestResult) => number>> = {
  total_return_pct: (result) => result.total_return_pct,
  buy_hold_return_pct: (result) => result.buy_hold_return_pct,
};

const MetricCards = ({ result }: { result: TBacktestResult }) => (
  <div className="pages-metrics" data-testid="metric-cards">
    {metricRows(result).map(([key, label, text]) => {
      const signed = SIGNED[key]?.(result);
      return (
        <article key={key} className="metric" data-testid={`metric-${key}`}>
          <h3>{label}</h3>
          <p className={`metric-value${signed === undefined ? '' : ` ${percentDirection(signed)}`}`}>{text}</p>
        </article>
      );
    })}
  </div>
);

const TradesTable = ({ result, instrument }: { result: TBacktestResult; instrument: TInstrument | undefined }) => (
  <>
    <Title order={3}>
      Fills ({result.trades.length}
      {result.trades_total > result.trades.length ? ` of ${result.trades_total}` : ''})
    </Title>
    <DataTable label="Fills of the backtest" testId="backtest-trades">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Time</Table.Th>
          <Table.Th>Side</Table.Th>
          <Table.Th className="pages-num">Price</Table.Th>
          <Table.Th className="pages-num">Amount</Table.Th>
          <Table.Th className="pages-num">Fee</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {result.trades.map((trade, index) => (
          <Table.Tr key={`${trade.timestamp}-${index}`} data-testid="backtest-trade-row">
            <Table.Td className="pages-nowrap">{when(trade.timestamp)}</Table.Td>
            <Table.Td>
              <SideText side={trade.side} />
            </Table.Td>
            <Table.Td className="pages-num">{price(trade.price, result.currency, instrument)}</Table.Td>
            <Table.Td className="pages-num">{quantity(trade.amount, instrument)}</Table.Td>
            <Table.Td className="pages-num">{money(trade.fee, result.currency)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </DataTable>
  </>
);

/** The result's fills on the daily candles of its range. */
const TradesChart = ({ result, instrument }: { result: TBacktestResult; instrument: TInstrument | undefined }) => {
  const bars = useQuery(trpc.marketData.ohlcv.queryOptions({ asset_class: result.asset_class as TAssetClass, symbol: result.symbol, from: result.start_date, to: result.end_date }, { retry: false }));
  const fills = useMemo(
    (): TFillMarker[] => result.trades.map((trade) => ({ date: trade.timestamp.slice(0, 10), side: trade.side, price: trade.price, text: `${trade.side} @ ${price(trade.price, result.currency, instrument)}` })),
    [result, instrument],
  );
  return (
    <>
      <ErrorNotice error={bars.error} />
      <PriceChart candles={bars.data?.bars ?? []} fills={fills} testId="backtest-price-chart" />
    </>
  );
};

export const BacktestResultView = ({ result }: { result: TBacktestResult }) => {
  // Prices and amounts follow the instrument's tick and lot; capital, fees and curve the currency's minor units.
  const instrument = useInstrumentOf()(result.asset_class as TAssetClass, result.symbol);
  return (
    <Paper component="article" className="pages-panel" data-testid="backtest-result" data-result-id={result.result_id}>
      <Stack gap="sm">
        <div className="pages-panel-head">
          <Title order={2}>
            {result.strategy_name} on {result.symbol} ({result.asset_class}), {result.start_date} to {result.end_date} <BacktestBadge />
          </Title>
        </div>
        <Text size="xs" c="dimmed">
          Profile {result.profile_name}; amounts in {result.currency}; parameters <Code className="pages-code">{JSON.stringify(result.strategy_params)}</Code>; curve of {result.equity_curve.length}
          {result.equity_curve_total > result.equity_curve.length ? ` (of ${result.equity_curve_total})` : ''} points.
        </Text>
        <MetricCards result={result} />
        <div>
          <Title order={3}>Equity ({result.currency}) and drawdown</Title>
          <EquityChart curve={result.equity_curve} currency={result.currency} />
        </div>
        <div>
          <Title order={3}>Fills on the price ({result.currency})</Title>
          <TradesChart result={result} instrument={instrument} />
        </div>
        <TradesTable result={result} instrument={instrument} />
      </Stack>
    </Paper>
  );
};

/** Which family's routes hold a result: crypto results live at /api/backtest. */
export const familyOf = (assetClass: string) => (assetClass === 'crypto' ? 'crypto' : 'equity');

/** A saved result read in full by its id. */
export const useBacktestResult = (summary: { result_id: string; asset_class: string } | undefined) => {
  const family = familyOf(summary?.asset_class ?? '');
  const input = { result_id: summary?.result_id ?? '' };
  const equity = useQuery(trpc.backtest.equity.get.queryOptions(input, { enabled: Boolean(summary) && family === 'equity' }));
  const crypto = useQuery(trpc.backtest.crypto.get.queryOptions(input, { enabled: Boolean(summary) && family === 'crypto' }));
  return family === 'crypto' ? crypto : equity;
};
