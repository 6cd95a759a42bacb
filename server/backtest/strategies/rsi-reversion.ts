// RSI mean reversion: buys a close the RSI calls oversold and sells once it calls one overbought.
import { z } from 'zod';
import { rsi } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, levelParam, periodParam, ZSize } from './common.ts';

export const ZRsiReversionParams = z
  .object({
    period: periodParam(14, "Bars in Wilder's RSI of the closes.", 2),
    oversold: levelParam(30, 'Buy when the RSI is below this level (0 to 100); less than overbought.'),
    overbought: levelParam(70, 'Sell when the RSI is above this level (0 to 100); more than oversold.'),
    size: ZSize,
  })
  .strict()
  .refine(({ oversold, overbought }) => oversold < overbought, { path: ['overbought'], message: 'overbought must be greater than oversold' });
export type TRsiReversionParams = z.infer<typeof ZRsiReversionParams>;

export const rsiReversion: StrategyDefinition<TRsiReversionParams> = {
  name: 'rsi_reversion',
  description: "Buys when Wilder's RSI of the closes falls below the oversold level; sells when it rises above the overbought level.",
  params: ZRsiReversionParams,
  // Wilder's smoothing is an EMA of the moves: three spans, and the bar before the first move.
  warmup: ({ period }) => 3 * period + 1,
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ period, oversold, overbought }): StrategyRun<'rsi'> => ({
    indicators: { rsi: rsi(period) },
    decide: ({ inPosition, ind }) => {
      if (!inPosition) return ind.rsi(0) < oversold ? 'buy' : 'hold';
      return ind.rsi(0) > overbought ? 'sell' : 'hold';
    },
  }),
};
