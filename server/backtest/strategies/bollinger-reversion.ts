// Bollinger band mean reversion: buys a close below the lower band and sells once a close is back
// above the middle band (the moving average it is expected to revert to).
import { z } from 'zod';
import { bollingerLower, bollingerMiddle } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, periodParam, ZSize } from './common.ts';

export const ZBollingerReversionParams = z
  .object({
    period: periodParam(20, 'Bars in the moving average and standard deviation of the closes.', 2),
    k: z.number().gt(0).max(10).default(2).describe('Width of the bands in (population) standard deviations: more than 0, at most 10.'),
    size: ZSize,
  })
  .strict();
export type TBollingerReversionParams = z.infer<typeof ZBollingerReversionParams>;

export const bollingerReversion: StrategyDefinition<TBollingerReversionParams> = {
  name: 'bollinger_reversion',
  description: 'Buys when the close falls below the lower Bollinger band; sells when the close rises above the middle band.',
  params: ZBollingerReversionParams,
  warmup: ({ period }) => period,
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ period, k }): StrategyRun<'lower' | 'middle'> => ({
    indicators: { lower: bollingerLower(period, k), middle: bollingerMiddle(period) },
    decide: ({ inPosition, close, ind }) => {
      if (!inPosition) return close(0) < ind.lower(0) ? 'buy' : 'hold';
      return close(0) > ind.middle(0) ? 'sell' : 'hold';
    },
  }),
};
