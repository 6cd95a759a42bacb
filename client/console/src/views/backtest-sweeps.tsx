// Parameter sweeps and rolling walk-forward (stocks: /api/equity/backtest/sweep and
// /walk-forward): a grid of values per parameter, checked with ZSweepRequest or
// ZWalkForwardRequest, and the ranked points or the windows as tables.
import { Button, Code, Fieldset, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZRankMetric, ZSweepRequest, ZWalkForwardRequest, type TSweepResult, type TWalkForwardResult } from '@trading-service/client';
import { trpc } from '../api.ts';
import { EquityChart } from '../charts/equity-chart.tsx';
import { ErrorNotice } from '../feedback.tsx';
import { checkedRequest, fieldText, type TFieldErrors } from '../forms.tsx';
import { money, percent, percentDirection, pnlPercent } from '../format.ts';
import type { TStrategy } from '../strategy-fields.tsx';
import { BacktestBadge } from './backtest-result.tsx';
import { numberOf, RangeFields, runFieldsOf, useRunChoices } from './backtest-form.tsx';
import { ChoiceField, DataTable, Field, Hint } from './page-kit.tsx';

const GRID_PREFIX = 'grid.';
const STOCKS = ['us_equity', 'kr_equity'] as const;

/** The grid typed in: per parameter a comma list of numbers; parameters left empty keep their default. */
const gridOf = (form: FormData, strategy: TStrategy | undefined): Record<string, number[]> => {
  const grid: Record<string, number[]> = {};
  for (const name of Object.keys(strategy?.params ?? {})) {
    const text = fieldText(form, `${GRID_PREFIX}${name}`).trim();
    if (text !== '') grid[name] = text.split(',').map((value) => Number(value.trim()));
  }
  return grid;
};

const GridFields = ({ strategy, errors }: { strategy: TStrategy | undefined; errors: TFieldErrors }) => (
  <Fieldset legend="Grid: values to try, comma separated" variant="filled" className="pages-wide">
    <div className="pages-fields">
      {Object.keys(strategy?.params ?? {}).map((name) => (
        <Field key={`${strategy?.name}-${name}`} name={`${GRID_PREFIX}${name}`} label={name} placeholder="e.g. 5, 10, 20" errors={errors} />
      ))}
    </div>
    {errors.grid ? (
      <Text size="xs" mt={4} className="field-error" data-testid="field-error-grid">
        {errors.grid}
      </Text>
    ) : null}
  </Fieldset>
);

const RankPicker = () => <ChoiceField name="rank_by" label="Rank by" choices={ZRankMetric.options.map((metric) => ({ value: metric, label: metric }))} defaultValue="sharpe_ratio" />;

const SweepTable = ({ result, currency }: { result: TSweepResult; currency: string }) => (
  <Stack gap="xs">
    <Title order={3}>
      {result.points.length} points ranked by {result.rank_by} ({result.symbol}, capital {money(result.initial_capital, currency)}) <BacktestBadge />
    </Title>
    <DataTable label="Sweep points by rank" testId="sweep-points">
      <Table.Thead>
        <Table.Tr>
          <Table.Th className="pages-num">Rank</Table.Th>
          <Table.Th>Parameters</Table.Th>
          <Table.Th className="pages-num">Return</Table.Th>
          <Table.Th className="pages-num">Sharpe</Table.Th>
          <Table.Th className="pages-num">Max drawdown</Table.Th>
          <Table.Th className="pages-num">Round trips</Table.Th>
          <Table.Th className="pages-num">Final capital</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {result.points.map((point) => (
          <Table.Tr key={point.rank} data-testid="sweep-point-row">
            <Table.Td className="pages-num">{point.rank}</Table.Td>
            <Table.Td>
              <Code className="pages-code">{JSON.stringify(point.strategy_params)}</Code>
            </Table.Td>
            <Table.Td className={`pages-num ${percentDirection(point.total_return_pct)}`}>{pnlPercent(point.total_return_pct)}</Table.Td>
            <Table.Td className="pages-num">{point.sharpe_ratio.toFixed(2)}</Table.Td>
            <Table.Td className="pages-num">{percent(point.max_drawdown_pct)}</Table.Td>
            <Table.Td className="pages-num">{point.total_trades}</Table.Td>
            <Table.Td className="pages-num">{money(point.final_capital, currency)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </DataTable>
    {result.skipped.length > 0 ? <Hint>Skipped: {result.skipped.map((skip) => `${JSON.stringify(skip.strategy_params)} (${skip.reason})`).join('; ')}</Hint> : null}
  </Stack>
);

const WalkForwardTable = ({ result, currency }: { result: TWalkForwardResult; currency: string }) => (
  <Stack gap="xs">
    <Title order={3}>
      Out of sample: {money(result.initial_capital, currency)} to {money(result.final_capital, currency)}, return {percent(result.total_return_pct)}, Sharpe {result.sharpe_ratio.toFixed(2)}, max drawdown {percent(result.max_drawdown_pct)} <BacktestBadge />
    </Title>
    <DataTable label="Walk-forward windows" testId="walk-forward-windows">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Train</Table.Th>
          <Table.Th>Test</Table.Th>
          <Table.Th>Best parameters</Table.Th>
          <Table.Th className="pages-num">Train score</Table.Th>
          <Table.Th className="pages-num">Test return</Table.Th>
          <Table.Th className="pages-num">Test round trips</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {result.windows.map((window) => (
          <Table.Tr key={window.test_start} data-testid="walk-forward-row">
            <Table.Td className="pages-nowrap">
              {window.train_start} – {window.train_end}
            </Table.Td>
            <Table.Td className="pages-nowrap">
              {window.test_start} – {window.test_end}
            </Table.Td>
            <Table.Td>
              <Code className="pages-code">{JSON.stringify(window.best_params)}</Code>
            </Table.Td>
            <Table.Td className="pages-num">{window.train_score === null ? '–' : window.train_score.toFixed(3)}</Table.Td>
            <Table.Td className={`pages-num ${percentDirection(window.test.total_return_pct)}`}>{pnlPercent(window.test.total_return_pct)}</Table.Td>
            <Table.Td className="pages-num">{window.test.total_trades}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </DataTable>
    <EquityChart curve={result.equity_curve} currency={currency} testId="walk-forward-chart" />
  </Stack>
);

export const Sweeps = () => {
  const choices = useRunChoices(STOCKS);
  const [kind, setKind] = useState<'sweep' | 'walk_forward'>('sweep');
  const [errors, setErrors] = useState<TFieldErrors>({});
  const sweep = useMutation(trpc.backtest.sweep.mutationOptions());
  const walkForward = useMutation(trpc.backtest.walkForward.mutationOptions());

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const base = { ...runFieldsOf(form, choices), grid: gridOf(form, choices.strategy), rank_by: fieldText(form, 'rank_by') };
    if (kind === 'sweep') {
      const request = checkedRequest(ZSweepRequest, base, setErrors);
      if (request) sweep.mutate(request);
      return;
    }
    const request = checkedRequest(ZWalkForwardRequest, { ...base, train_bars: numberOf(fieldText(form, 'train_bars')), test_bars: numberOf(fieldText(form, 'test_bars')) }, setErrors);
    if (request) walkForward.mutate(request);
  };

  return (
    <Paper component="section" className="pages-panel" data-testid="sweeps">
      <div className="pages-panel-head">
        <Title order={2}>Sweeps and walk-forward (stocks)</Title>
        <BacktestBadge />
      </div>
      <Stack gap="sm">
        <form className="pages-form" onSubmit={submit} noValidate data-testid="sweep-form">
          <div className="pages-fields">
            <ChoiceField
              name="kind"
              label="Kind"
              choices={[
                { value: 'sweep', label: 'sweep' },
                { value: 'walk_forward', label: 'walk-forward' },
              ]}
              value={kind}
              onChange={(next) => setKind(next === 'walk_forward' ? 'walk_forward' : 'sweep')}
            />
            {choices.fields({})}
            <GridFields strategy={choices.strategy} errors={errors} />
            <RankPicker />
            <RangeFields errors={errors} />
            {kind === 'walk_forward' ? (
              <>
                <Field name="train_bars" label="Train bars" inputMode="decimal" placeholder="120" errors={errors} />
                <Field name="test_bars" label="Test bars" inputMode="decimal" placeholder="40" errors={errors} />
              </>
            ) : null}
          </div>
          <div className="pages-actions">
            <Button type="submit" loading={sweep.isPending || walkForward.isPending}>
              {kind === 'sweep' ? 'Run sweep' : 'Run walk-forward'}
            </Button>
          </div>
        </form>
        <ErrorNotice error={kind === 'sweep' ? sweep.error : walkForward.error} />
        {kind === 'sweep' && sweep.data ? <SweepTable result={sweep.data} currency={choices.currency} /> : null}
        {kind === 'walk_forward' && walkForward.data ? <WalkForwardTable result={walkForward.data} currency={choices.currency} /> : null}
      </Stack>
    </Paper>
  );
};
