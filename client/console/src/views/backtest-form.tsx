// The backtest run form: asset class, symbol, strategy with its parameters (bounds from the
// registry), dates and capital; checked with the API's ZBacktestRequest and the strategy's
// parameter schema before it is sent. Also the fields a sweep and a walk-forward share.
import { Button } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useCallback, useState, type FormEvent, type ReactNode } from 'react';
import { ZBacktestRequest, type TAssetClass, type TBacktestResult, type TInstrument } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, type TFieldErrors } from '../forms.tsx';
import { checkedParams, StrategyParamFields, StrategyPicker, strategiesFor, useStrategies, type TStrategy } from '../strategy-fields.tsx';
import { BacktestBadge } from './backtest-result.tsx';
import { AssetClassField, Field, Panel } from './page-kit.tsx';
import { SymbolField } from './symbol-field.tsx';

export const BACKTEST_ASSET_CLASSES: readonly TAssetClass[] = ['us_equity', 'kr_equity', 'crypto'];

/** A number field as the schema should see it: empty is absent, anything else a number (NaN fails the check). */
export const numberOf = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The choices every run form starts with; the caller renders the rest of its form inside. */
export const useRunChoices = (assetClasses: readonly TAssetClass[] = BACKTEST_ASSET_CLASSES) => {
  const [assetClass, setAssetClass] = useState<TAssetClass>(assetClasses[0] ?? 'us_equity');
  const [symbol, setSymbol] = useState('');
  const [currency, setCurrency] = useState('');
  const [strategyName, setStrategyName] = useState('');
  const strategies = useStrategies();
  const available = strategiesFor(strategies.data, assetClass);
  const strategy: TStrategy | undefined = available.find((item) => item.name === strategyName) ?? available[0];
  const chooseSymbol = useCallback((next: string, instrument: TInstrument | undefined) => (setSymbol(next), setCurrency(instrument?.currency ?? '')), []);
  // Laid out in the caller's `.pages-fields` grid: the choices in its cells, the parameters across it.
  const fields = (errors: TFieldErrors): ReactNode => (
    <>
      <AssetClassField choices={assetClasses} value={assetClass} onChange={(next) => (setAssetClass(next), setSymbol(''))} />
      <SymbolField assetClass={assetClass} value={symbol} onChange={chooseSymbol} />
      <StrategyPicker strategies={available} value={strategy?.name ?? ''} onChange={setStrategyName} />
      {strategies.error ? (
        <div className="pages-wide">
          <ErrorNotice error={strategies.error} />
        </div>
      ) : null}
      <StrategyParamFields strategy={strategy} errors={errors} />
    </>
  );
  return { assetClass, symbol, currency, strategy, fields };
};

/** The range and capital fields every run form has. */
export const RangeFields = ({ errors }: { errors: TFieldErrors }) => (
  <>
    <Field name="start_date" label="Start date" type="date" errors={errors} />
    <Field name="end_date" label="End date" type="date" errors={errors} />
    <Field name="initial_capital" label="Initial capital" inputMode="decimal" placeholder="10000" errors={errors} />
  </>
);

/** The fields of ZBacktestRequest read from a form (the caller adds the rest). */
export const runFieldsOf = (form: FormData, choices: { assetClass: TAssetClass; symbol: string; strategy: TStrategy | undefined }) => ({
  asset_class: choices.assetClass,
  symbol: choices.symbol,
  strategy_name: choices.strategy?.name ?? '',
  start_date: fieldText(form, 'start_date'),
  end_date: fieldText(form, 'end_date'),
  initial_capital: numberOf(fieldText(form, 'initial_capital')),
});

export const BacktestForm = ({ onResult }: { onResult: (result: TBacktestResult) => void }) => {
  const choices = useRunChoices();
  const [errors, setErrors] = useState<TFieldErrors>({});
  const onSuccess = (result: TBacktestResult) => {
    onResult(result);
    void queryClient.invalidateQueries(trpc.backtest.equity.list.pathFilter());
    void queryClient.invalidateQueries(trpc.backtest.crypto.list.pathFilter());
  };
  const equityRun = useMutation(trpc.backtest.equity.run.mutationOptions({ onSuccess }));
  const cryptoRun = useMutation(trpc.backtest.crypto.run.mutationOptions({ onSuccess }));
  const run = choices.assetClass === 'crypto' ? cryptoRun : equityRun;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const params = checkedParams(form, choices.strategy);
    const checked = ZBacktestRequest.safeParse({ ...runFieldsOf(form, choices), ...(params.ok && params.params ? { strategy_params: params.params } : {}) });
    setErrors({ ...(checked.success ? {} : fieldErrorsOf(checked.error.issues)), ...(params.ok ? {} : params.errors) });
    if (checked.success && params.ok) {
      equityRun.reset();
      cryptoRun.reset();
      run.mutate(checked.data);
    }
  };

  return (
    <Panel title="Run a backtest" testId="backtest-run" aside={<BacktestBadge />}>
      <form className="pages-form" onSubmit={submit} noValidate data-testid="backtest-form">
        <div className="pages-fields">
          {choices.fields(errors)}
          <RangeFields errors={errors} />
        </div>
        <div className="pages-actions">
          <Button type="submit" loading={run.isPending}>
            {run.isPending ? 'Running…' : 'Run backtest'}
          </Button>
        </div>
      </form>
      <ErrorNotice error={run.error} />
      <DoneNotice text={run.data ? `Backtest ${run.data.result_id} saved: ${run.data.total_trades} round trips (backtest, ${run.data.currency})` : undefined} />
    </Panel>
  );
};
