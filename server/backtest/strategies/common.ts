// What every strategy shares: the `size` parameter the engine reads, the shapes of the period and
// threshold parameters, the asset classes, and the strict crossover tests.
import { z } from 'zod';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Lookback } from '../types.ts';

/** The fraction of the cash each entry spends; the engine reads it from the validated params. */
export const ZSize = z.number().gt(0).max(1).default(1).describe('Fraction of the cash each entry spends: more than 0, at most 1 (all of it).');

/** The longest lookback a parameter may ask for: two years of daily bars, and a bound on the work per run. */
export const MAX_PERIOD = 500;

/** A lookback in bars: an integer from `min` (1, or 2 where one bar means nothing) to MAX_PERIOD. */
export const periodParam = (defaultBars: number, description: string, min: 1 | 2 = 1) =>
  z.number().int().min(min).max(MAX_PERIOD).default(defaultBars).describe(description);

/** A level on a 0 to 100 scale, such as an RSI threshold. */
export const levelParam = (defaultLevel: number, description: string) => z.number().int().min(0).max(100).default(defaultLevel).describe(description);

/** Trend and mean-reversion rules on daily bars make sense for stocks and crypto alike. */
export const ALL_ASSET_CLASSES: readonly TAssetClass[] = Object.freeze(['us_equity', 'kr_equity', 'crypto']);

/**
 * Whether `a` crossed above `b` on the current bar: strictly below on the bar before and
 * strictly above now, as backtesting.py's crossover. A tie on either bar is no cross, so two
 * series that touch and part again do not trade; a NaN (not enough history) is no cross either,
 * since every comparison with NaN is false.
 */
export const crossedAbove = (a: Lookback, b: Lookback): boolean => a(1) < b(1) && a(0) > b(0);

/** Whether `a` crossed below `b` on the current bar, strictly on both bars (see crossedAbove). */
export const crossedBelow = (a: Lookback, b: Lookback): boolean => a(1) > b(1) && a(0) < b(0);
