// Donchian channel breakout (the Turtle rule): buys a close above the highest high of the previous
// `entry` bars and sells a close below the lowest low of the previous `exit` bars.
import { z } from 'zod';
import { highest, lowest } from '../indicators.ts';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, periodParam, ZSize } from './common.ts';

export const ZDonchianBreakoutParams = z
  .object({
    entry: periodParam(20, 'Buy when the close is above the highest high of this many previous bars.'),
    exit: periodParam(10, 'Sell when the close is below the lowest low of this many previous bars.'),
    size: ZSize,
  })
  .strict();
export type TDonchianBreakoutParams = z.infer<typeof ZDonchianBreakoutParams>;

export const donchianBreakout: StrategyDefinition<TDonchianBreakoutParams> = {
  name: 'donchian_breakout',
  description: 'Buys when the close breaks above the highest high of the previous entry bars; sells when it breaks below the lowest low of the previous exit bars.',
  params: ZDonchianBreakoutParams,
  // Both channels read the bars before the current one.
  warmup: ({ entry, exit }) => Math.max(entry, exit),
  assetClasses: ALL_ASSET_CLASSES,
  create: ({ entry, exit }): StrategyRun<'upper' | 'lower'> => ({
    // Both channels leave the current bar out: a close can never be above a high that includes its own bar.
    indicators: { upper: highest('high', entry), lower: lowest('low', exit) },
    decide: ({ inPosition, close, ind }) => {
      if (!inPosition) return close(0) > ind.upper(0) ? 'buy' : 'hold';
      return close(0) < ind.lower(0) ? 'sell' : 'hold';
    },
  }),
};
