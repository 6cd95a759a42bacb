// Parameter sweeps and rolling walk-forward (stocks: /api/equity/backtest/sweep and
// /walk-forward): a grid of values per parameter, checked with ZSweepRequest or
// ZWalkForwardRequest, and the ranked points or the windows as tables.
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZRankMetric, ZSweepRequest, ZWalkForwardRequest, type TSweepResult, type TWalkForwardResult } from '@trading-service/client';
import { trpc } from '../api.ts';
import { EquityChart } from '../charts/equity-chart.tsx';
import { ErrorNotice } from '../feedback.tsx';
import { FieldError, fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { money, percent } from '../format.ts';
import type { TStrategy } from '../strategy-fields.tsx';
import { BacktestBadge } from './backtest-result.tsx';
import { numberOf, RangeFields, runFieldsOf, useRunChoices } from './backtest-form.tsx';

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
  <fieldset className="params">
    <legend>Grid: values to try, comma separated</legend>
    {Object.keys(strategy?.params ?? {}).map((name) => (
      <TextField key={`${strategy?.name}-${name}`} name={`${GRID_PREFIX}${name}`} label={name} placeholder="e.g. 5, 10, 20" errors={errors} />
    ))}
    <FieldError errors={errors} name="grid" />
  </fieldset>
);

const RankPicker = () => (
  <label>
    Rank by{' '}
    <select name="rank_by" defaultValue="sharpe_ratio">
      {ZRankMetric.options.map((metric) => (
        <option key={metric} value={metric}>
          {metric}
        </option>
      ))}
    </select>
  </label>
);

const SweepTable = ({ result, currency }: { result: TSweepResult; currency: string }) => (
  <>
    <h3>
      {result.points.length} points ranked by {result.rank_by} ({result.symbol}, capital {money(result.initial_capital, currency)}) <BacktestBadge />
    </h3>
    <table data-testid="sweep-points">
      <thead>
        <tr>
          <th>Rank</th>
          <th>Parameters</th>
          <th>Return</th>
          <th>Sharpe</th>
          <th>Max drawdown</th>
          <th>Round trips</th>
          <th>Final capital</th>
        </tr>
      </thead>
      <tbody>
        {result.points.map((point) => (
          <tr key={point.rank} data-testid="sweep-point-row">
            <td>{point.rank}</td>
            <td>
              <code>{JSON.stringify(point.strategy_params)}</code>
            </td>
            <td>{percent(point.total_return_pct)}</td>
            <td>{point.sharpe_ratio.toFixed(2)}</td>
            <td>{percent(point.max_drawdown_pct)}</td>
            <td>{point.total_trades}</td>
            <td>{money(point.final_capital, currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    {result.skipped.length > 0 ? <p className="hint">Skipped: {result.skipped.map((skip) => `${JSON.stringify(skip.strategy_params)} (${skip.reason})`).join('; ')}</p> : null}
  </>
);

const WalkForwardTable = ({ result, currency }: { result: TWalkForwardResult; currency: string }) => (
  <>
    <h3>
      Out of sample: {money(result.initial_capital, currency)} to {money(result.final_capital, currency)}, return {percent(result.total_return_pct)}, Sharpe {result.sharpe_ratio.toFixed(2)}, max drawdown {percent(result.max_drawdown_pct)} <BacktestBadge />
    </h3>
    <table data-testid="walk-forward-windows">
      <thead>
        <tr>
          <th>Train</th>
          <th>Test</th>
          <th>Best parameters</th>
          <th>Train score</th>
          <th>Test return</th>
          <th>Test round trips</th>
        </tr>
      </thead>
      <tbody>
        {result.windows.map((window) => (
          <tr key={window.test_start} data-testid="walk-forward-row">
            <td>
              {window.train_start} – {window.train_end}
            </td>
            <td>
              {window.test_start} – {window.test_end}
            </td>
            <td>
              <code>{JSON.stringify(window.best_params)}</code>
            </td>
            <td>{window.train_score === null ? '–' : window.train_score.toFixed(3)}</td>
            <td>{percent(window.test.total_return_pct)}</td>
            <td>{window.test.total_trades}</td>
          </tr>
        ))}
      </tbody>
    </table>
    <EquityChart curve={result.equity_curve} currency={currency} testId="walk-forward-chart" />
  </>
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
      const checked = ZSweepRequest.safeParse(base);
      setErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
      if (checked.success) sweep.mutate(checked.data);
      return;
    }
    const checked = ZWalkForwardRequest.safeParse({ ...base, train_bars: numberOf(fieldText(form, 'train_bars')), test_bars: numberOf(fieldText(form, 'test_bars')) });
    setErrors(checked.success ? {} : fieldErrorsOf(checked.error.issues));
    if (checked.success) walkForward.mutate(checked.data);
  };

  return (
    <section data-testid="sweeps">
      <h2>Sweeps and walk-forward (stocks)</h2>
      <form onSubmit={submit} noValidate data-testid="sweep-form">
        <label>
          Kind{' '}
          <select name="kind" value={kind} onChange={(event) => setKind(event.target.value === 'walk_forward' ? 'walk_forward' : 'sweep')}>
            <option value="sweep">sweep</option>
            <option value="walk_forward">walk-forward</option>
          </select>
        </label>
        {choices.fields({})}
        <GridFields strategy={choices.strategy} errors={errors} />
        <RankPicker />
        <RangeFields errors={errors} />
        {kind === 'walk_forward' ? (
          <>
            <TextField name="train_bars" label="Train bars" inputMode="decimal" placeholder="120" errors={errors} />
            <TextField name="test_bars" label="Test bars" inputMode="decimal" placeholder="40" errors={errors} />
          </>
        ) : null}
        <button type="submit" disabled={sweep.isPending || walkForward.isPending}>
          {kind === 'sweep' ? 'Run sweep' : 'Run walk-forward'}
        </button>
      </form>
      <ErrorNotice error={kind === 'sweep' ? sweep.error : walkForward.error} />
      {kind === 'sweep' && sweep.data ? <SweepTable result={sweep.data} currency={choices.currency} /> : null}
      {kind === 'walk_forward' && walkForward.data ? <WalkForwardTable result={walkForward.data} currency={choices.currency} /> : null}
    </section>
  );
};
