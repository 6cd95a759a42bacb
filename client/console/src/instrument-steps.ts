// The registry's instruments of every asset class, to format each price and quantity by its own
// instrument (its tick and lot). Shares the symbol picker's queries (same keys), read once a minute.
import { useQueries } from '@tanstack/react-query';
import type { TAssetClass, TInstrument } from '@trading-service/client';
import { ASSET_CLASSES } from './format.ts';
import { instrumentsQuery } from './symbol-picker.tsx';

/** The instrument of a symbol, or undefined while the registry loads (the currency's decimals then apply). */
export type TInstrumentOf = (assetClass: TAssetClass, symbol: string) => TInstrument | undefined;

/** Every registered instrument of every asset class (none while the registry loads). */
export const useAllInstruments = (): TInstrument[] => useQueries({ queries: ASSET_CLASSES.map(instrumentsQuery) }).flatMap((list) => list.data?.items ?? []);

export const useInstrumentOf = (): TInstrumentOf => {
  const items = useAllInstruments();
  return (assetClass, symbol) => items.find((item) => item.asset_class === assetClass && item.symbol === symbol);
};
