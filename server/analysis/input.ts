// What one report's agents read: the instrument's daily bars up to the run's as-of date, and its
// tick grid, which every price level the report suggests is placed on.
import { CURRENCY_OF_ASSET_CLASS, type TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { TickGrid } from '../instruments/ticks.ts';
import { readRecentBars } from '../marketdata/queries.ts';
import type { AnalysisInput } from './types.ts';

/**
 * The grid of an instrument the registry no longer answers for (admission checked it was there):
 * the asset class's usual one, KRX's bands, US cents, a crypto satoshi.
 */
const FALLBACK_GRID: Record<TAssetClass, TickGrid> = {
  kr_equity: { rule: 'krx_bands', size: 1 },
  us_equity: { rule: 'fixed', size: '0.01' },
  crypto: { rule: 'fixed', size: '0.00000001' },
};

export const readAnalysisInput = async (
  { db, instruments, barsLimit }: { db: Queryable; instruments: Pick<Instruments, 'find'>; barsLimit: number },
  { assetClass, symbol, asOf }: { assetClass: TAssetClass; symbol: string; asOf: string | null },
): Promise<AnalysisInput> => {
  const [stored, instrument] = await Promise.all([readRecentBars(db, { assetClass, symbol, to: asOf ?? undefined, limit: barsLimit }), instruments.find({ assetClass, symbol })]);
  const bars = stored.map((bar) => ({ date: bar.date, open: Number(bar.open), high: Number(bar.high), low: Number(bar.low), close: Number(bar.close), volume: Number(bar.volume) }));
  const tick = instrument ? { rule: instrument.tickRule, size: instrument.tickSize } : FALLBACK_GRID[assetClass];
  return { assetClass, symbol, currency: CURRENCY_OF_ASSET_CLASS[assetClass], bars, tick };
};
