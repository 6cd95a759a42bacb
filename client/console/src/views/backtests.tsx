// The backtests page: run a backtest and read its result, the saved history with a side-by-side
// comparison, and sweeps and walk-forward.
import { useState } from 'react';
import type { TBacktestList, TBacktestResult } from '@trading-service/client';
import { ErrorNotice } from '../feedback.tsx';
import { BacktestForm } from './backtest-form.tsx';
import { BacktestHistory } from './backtest-history.tsx';
import { BacktestResultView, useBacktestResult } from './backtest-result.tsx';
import { Sweeps } from './backtest-sweeps.tsx';
import { Empty, Hint, Page } from './page-kit.tsx';

type TSummary = TBacktestList['items'][number];

const SavedResult = ({ summary }: { summary: TSummary }) => {
  const result = useBacktestResult(summary);
  return (
    <>
      <ErrorNotice error={result.error} />
      {result.data ? <BacktestResultView result={result.data} /> : <Empty>Loading…</Empty>}
    </>
  );
};

export const Backtests = () => {
  const [fresh, setFresh] = useState<TBacktestResult>();
  const [opened, setOpened] = useState<TSummary>();
  return (
    <Page title="Backtests" aside={<Hint>Simulations on daily bars: nothing here places an order.</Hint>}>
      <BacktestForm onResult={(result) => (setFresh(result), setOpened(undefined))} />
      {opened ? <SavedResult summary={opened} /> : fresh ? <BacktestResultView result={fresh} /> : null}
      <BacktestHistory onOpen={(summary) => (setOpened(summary), setFresh(undefined))} />
      <Sweeps />
    </Page>
  );
};
