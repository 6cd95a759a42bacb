// The symbol choice of the backtest forms, in Mantine's frame: the registered instruments of an
// asset class, each with its currency, so every price beside it can name one. The same choice as
// symbol-picker.tsx's (which the chart page keeps), read from the same cached query.
import { useEffect } from 'react';
import type { TAssetClass, TInstrument } from '@trading-service/client';
import { ErrorNotice } from '../feedback.tsx';
import { useInstruments } from '../symbol-picker.tsx';
import { ChoiceField } from './page-kit.tsx';

export const SymbolField = ({ assetClass, value, onChange }: { assetClass: TAssetClass; value: string; onChange: (symbol: string, instrument: TInstrument | undefined) => void }) => {
  const instruments = useInstruments(assetClass);
  const items = instruments.data?.items ?? [];
  const chosen = items.find((item) => item.symbol === value);
  // A symbol of another asset class is no choice: fall back to the first of this one.
  useEffect(() => {
    const first = items[0];
    if (first && !chosen) onChange(first.symbol, first);
  }, [items, chosen, onChange]);
  const choices = items.map((item) => ({ value: item.symbol, label: `${item.symbol} (${item.currency})` }));
  return (
    <div>
      <ChoiceField
        name="symbol"
        label="Symbol"
        choices={chosen ? choices : [{ value: '', label: '…' }, ...choices]}
        value={chosen ? value : ''}
        onChange={(next) => onChange(next, items.find((item) => item.symbol === next))}
      />
      <ErrorNotice error={instruments.error} />
    </div>
  );
};
