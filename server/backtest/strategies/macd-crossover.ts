// MACD crossover: long from the bar the MACD line (fast EMA minus slow EMA of the closes) crosses
// above its signal line to the bar it crosses back below.
import { z } from 'zod';
import { macdLine, macdSignal } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, crossedAbove, crossedBelow, periodParam, ZSize } from './common.ts';

export const ZMacdCrossoverParams = z
  .object({
    fast: periodParam(12, 'Bars in the fast exponential moving average of the closes.'),
    slow: periodParam(26, 'Bars in the slow exponential moving average of the closes; more than fast.', 2),
    signal: periodParam(9, 'Bars in the exponential moving average of the MACD line that makes the signal line.'),
    size: ZSize,
  })
  .strict()
  .refine(({ fast, slow }) => slow > fast, { path: ['slow'], message: 'slow must be greater than fast' });
export type TMacdCrossoverParams = z.infer<typeof ZMacdCrossoverParams>;

export const macdCrossover: StrategyDefinition<TMacdCrossoverParams> = {
  name: 'macd_crossover',
  description: 'Buys when the MACD line crosses above its signal line; sells when it crosses below.',
  params: ZMacdCrossoverParams,
  // The signal line is an EMA of the MACD line, itself a difference of EMAs: three spans of each.
  warmup: ({ slow, signal }) => 3 * (slow + signal),
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ fast, slow, signal }): StrategyRun<'macd' | 'signal'> => ({
    indicators: { macd: macdLine(fast, slow), signal: macdSignal(fast, slow, signal) },
    decide: ({ inPosition, ind }) => {
      if (!inPosition) return crossedAbove(ind.macd, ind.signal) ? 'buy' : 'hold';
      return crossedBelow(ind.macd, ind.signal) ? 'sell' : 'hold';
    },
  }),
};
