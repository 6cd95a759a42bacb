// The price levels a decision suggests, put on the instrument's tick grid as a trader would place
// them: the buys (ideal and secondary) rounded down, so a buy limit is never above the level
// drawn; the stop loss and the take profit, both sells, rounded up. Applied to the heuristic's
// levels and to an LLM's alike, so no report suggests a price the exchange would refuse.
import { roundToGrid, type TickGrid, type TTickRounding } from '../../instruments/ticks.ts';
import type { TDecisionOutput } from './schemas.ts';

type TLevelName = 'ideal_buy' | 'secondary_buy' | 'stop_loss' | 'take_profit';

function onGrid(value: number, grid: TickGrid, mode: TTickRounding): number;
function onGrid(value: number | null, grid: TickGrid, mode: TTickRounding): number | null;
function onGrid(value: number | null, grid: TickGrid, mode: TTickRounding): number | null {
  // Not a price (an LLM's answer may carry anything): nothing to put on a grid.
  if (value === null || !Number.isFinite(value) || value <= 0) return value;
  const rounded = roundToGrid(value, grid, mode);
  // Below the first tick, rounding down leaves no price: the first tick is the nearest one.
  return (rounded.gt(0) ? rounded : roundToGrid(value, grid, 'up')).toNumber();
}

type TLevels<TValue> = Record<TLevelName, TValue>;

/**
 * The levels on the grid. A stop that rounding up would lift to a buy level is rounded down
 * instead: a stop at the entry would close the position as it opens.
 */
export function levelsOnGrid(levels: TLevels<number>, grid: TickGrid): TLevels<number>;
export function levelsOnGrid(levels: TLevels<number | null>, grid: TickGrid): TLevels<number | null>;
export function levelsOnGrid(levels: TLevels<number | null>, grid: TickGrid): TLevels<number | null> {
  const idealBuy = onGrid(levels.ideal_buy, grid, 'down');
  const secondaryBuy = onGrid(levels.secondary_buy, grid, 'down');
  const buys = [idealBuy, secondaryBuy].filter((buy): buy is number => buy !== null);
  const lowestBuy = buys.length > 0 ? Math.min(...buys) : null;
  let stopLoss = onGrid(levels.stop_loss, grid, 'up');
  if (stopLoss !== null && lowestBuy !== null && stopLoss >= lowestBuy && levels.stop_loss !== null && levels.stop_loss < lowestBuy) stopLoss = onGrid(levels.stop_loss, grid, 'down');
  return { ideal_buy: idealBuy, secondary_buy: secondaryBuy, stop_loss: stopLoss, take_profit: onGrid(levels.take_profit, grid, 'up') };
}

/** A decision with its levels on the instrument's grid (the heuristic's already are; an LLM's may not be). */
export const decisionOnGrid = (decision: TDecisionOutput, grid: TickGrid): TDecisionOutput => ({ ...decision, ...levelsOnGrid(decision, grid) });
