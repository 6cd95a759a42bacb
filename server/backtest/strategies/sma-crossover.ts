// Simple moving average crossover: long from the bar the fast SMA of the closes crosses above the
// slow one to the bar it crosses back below.
import { z } from 'zod';
import { smaCrossing } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, periodParam, ZSize } from './common.ts';

export const ZSmaCrossoverParams = z
  .object({
    fast: periodParam(10, 'Bars in the fast simple moving average of the closes.'),
    slow: periodParam(30, 'Bars in the slow simple moving average of the closes; more than fast.', 2),
    size: ZSize,
  })
  .strict()
  .refine(({ fast, slow }) => slow > fast, { path: ['slow'], message: 'slow must be greater than fast' });
export type TSmaCrossoverParams = z.infer<typeof ZSmaCrossoverParams>;

export const smaCrossover: StrategyDefinition<TSmaCrossoverParams> = {
  name: 'sma_crossover',
  description: 'Buys when the fast simple moving average of the closes crosses above the slow one; sells when it crosses below.',
  params: ZSmaCrossoverParams,
  // The previous bar's slow mean reads the slow bars before the first traded one.
  warmup: ({ slow }) => slow,
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ fast, slow }): StrategyRun<'cross'> => ({
    // The strict crosses of the two averages (crossedAbove / crossedBelow), found once per run.
    indicators: { cross: smaCrossing('close', fast, slow) },
    decide: ({ inPosition, ind }) => {
      const cross = ind.cross(0);
      if (!inPosition) return cross > 0 ? 'buy' : 'hold';
      return cross < 0 ? 'sell' : 'hold';
    },
  }),
};
