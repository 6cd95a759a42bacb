// Exponential moving average crossover: long from the bar the fast EMA of the closes crosses
// above the slow one to the bar it crosses back below. Quicker to turn than the SMA crossover.
import { z } from 'zod';
import { ema } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, crossedAbove, crossedBelow, periodParam, ZSize } from './common.ts';

export const ZEmaCrossoverParams = z
  .object({
    fast: periodParam(12, 'Bars in the fast exponential moving average of the closes.'),
    slow: periodParam(26, 'Bars in the slow exponential moving average of the closes; more than fast.', 2),
    size: ZSize,
  })
  .strict()
  .refine(({ fast, slow }) => slow > fast, { path: ['slow'], message: 'slow must be greater than fast' });
export type TEmaCrossoverParams = z.infer<typeof ZEmaCrossoverParams>;

export const emaCrossover: StrategyDefinition<TEmaCrossoverParams> = {
  name: 'ema_crossover',
  description: 'Buys when the fast exponential moving average of the closes crosses above the slow one; sells when it crosses below.',
  params: ZEmaCrossoverParams,
  // An EMA is seeded by an SMA and forgets that seed slowly: three spans (DESIGN).
  warmup: ({ slow }) => 3 * slow,
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ fast, slow }): StrategyRun<'fast' | 'slow'> => ({
    indicators: { fast: ema('close', fast), slow: ema('close', slow) },
    decide: ({ inPosition, ind }) => {
      if (!inPosition) return crossedAbove(ind.fast, ind.slow) ? 'buy' : 'hold';
      return crossedBelow(ind.fast, ind.slow) ? 'sell' : 'hold';
    },
  }),
};
