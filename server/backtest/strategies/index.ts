// The strategy registry: every strategy a backtest may name, in the order GET /api/strategy/list
// shows them. Adding one is a file in this folder and a line in STRATEGIES.
import { AppError } from '../../errors.ts';
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

/**
 * A strategy by name with its params checked and defaults filled in, as backtests and the bot
 * take them: 422 STRATEGY_NOT_FOUND for an unknown name, 422 VALIDATION_ERROR (paths under
 * `strategy_params`) for bad params.
 */
export const resolveStrategy = (name: string, given: Record<string, unknown> | null | undefined) => {
  const strategy = findStrategy(name.toLowerCase());
  if (!strategy) throw new AppError('STRATEGY_NOT_FOUND', `No strategy named ${name.slice(0, 64)}; see GET /api/strategy/list`);
  const parsed = strategy.params.safeParse(given ?? {});
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({ path: ['strategy_params', ...issue.path.map(String)].join('.'), message: issue.message }));
    throw new AppError('VALIDATION_ERROR', `strategy_params: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}`, { errors });
  }
  return { strategy, params: parsed.data };
};
