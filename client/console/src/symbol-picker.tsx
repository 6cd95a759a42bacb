// The symbol picker of the research views: the registered instruments of an asset class
// (GET /api/instruments), each with its currency, so every price beside it can name one.
import { NativeSelect } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { TAssetClass, TInstrument } from '@trading-service/client';
import { trpc } from './api.ts';
import { ErrorNotice } from './feedback.tsx';

/** The instruments of an asset class (the registry's first 100: the seeded universe fits). */
export const instrumentsQuery = (assetClass: TAssetClass) => trpc.instruments.list.queryOptions({ asset_class: assetClass, page: 1, size: 100 }, { staleTime: 60_000 });
export const useInstruments = (assetClass: TAssetClass) => useQuery(instrumentsQuery(assetClass));

export const SymbolPicker = ({
  assetClass,
  value,
  onChange,
  name = 'symbol',
}: {
  assetClass: TAssetClass;
  value: string;
  onChange: (symbol: string, instrument: TInstrument | undefined) => void;
  name?: string;
}) => {
  const instruments = useInstruments(assetClass);
  const items = instruments.data?.items ?? [];
  const chosen = items.find((item) => item.symbol === value);
  // A symbol of another asset class is no choice: fall back to the first of this one.
  useEffect(() => {
    const first = items[0];
    if (first && !chosen) onChange(first.symbol, first);
  }, [items, chosen, onChange]);
  return (
    <>
      <NativeSelect label="Symbol" name={name} value={chosen ? value : ''} onChange={(event) => onChange(event.currentTarget.value, items.find((item) => item.symbol === event.currentTarget.value))}>
        {chosen ? null : <option value="">…</option>}
        {items.map((item) => (
          <option key={item.symbol} value={item.symbol}>
            {item.symbol} ({item.currency})
          </option>
        ))}
      </NativeSelect>
      <ErrorNotice error={instruments.error} />
    </>
  );
};
