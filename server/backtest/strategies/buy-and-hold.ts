// Buy and hold: the benchmark every other strategy is measured against. It buys at the first
// bar's close and never sells; the engine closes the position at the end of the run.
import { z } from 'zod';
import type { StrategyDefinition, StrategyRun } from '../types.ts';
import { ALL_ASSET_CLASSES, ZSize } from './common.ts';

export const ZBuyAndHoldParams = z.object({ size: ZSize }).strict();
export type TBuyAndHoldParams = z.infer<typeof ZBuyAndHoldParams>;

export const buyAndHold: StrategyDefinition<TBuyAndHoldParams> = {
  name: 'buy_and_hold',
  description: 'Buys at the first bar and holds to the end of the run.',
  params: ZBuyAndHoldParams,
  // Nothing to warm: it reads no history.
  warmup: () => 0,
  assetClasses: ALL_ASSET_CLASSES,
  create: (): StrategyRun<never> => ({
    indicators: {},
    // "Whenever flat" rather than "on bar 0": it is the same on a normal run, and an entry the
    // engine could not fill on the first bar is tried again on the next.
    decide: ({ inPosition }) => (inPosition ? 'hold' : 'buy'),
  }),
};
