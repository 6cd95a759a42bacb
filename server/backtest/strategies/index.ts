// The strategy registry: every strategy a backtest may name, in the order GET /api/strategy/list
// shows them. Adding one is a file in this folder and a line in STRATEGIES.
import type { StrategyDefinition } from '../types.ts';
import { bollingerReversion } from './bollinger-reversion.ts';
import { buyAndHold } from './buy-and-hold.ts';
import { donchianBreakout } from './donchian-breakout.ts';
import { emaCrossover } from './ema-crossover.ts';
import { macdCrossover } from './macd-crossover.ts';
import { rsiReversion } from './rsi-reversion.ts';
import { smaCrossover } from './sma-crossover.ts';

export const STRATEGIES: readonly StrategyDefinition[] = Object.freeze([
  buyAndHold,
  smaCrossover,
  emaCrossover,
  rsiReversion,
  bollingerReversion,
  macdCrossover,
  donchianBreakout,
]);

// A Map, not an object literal, so a name like "toString" or "__proto__" finds nothing.
const BY_NAME = new Map<string, StrategyDefinition>(STRATEGIES.map((strategy) => [strategy.name, strategy]));
if (BY_NAME.size !== STRATEGIES.length) throw new Error('two strategies share a name');

/** The strategy of that exact (lower-case) name, or undefined. */
export const findStrategy = (name: string): StrategyDefinition | undefined => BY_NAME.get(name);
