// One backtest run as plain data, so that it can run on the event loop or in a worker thread
// alike: the bars, the strategy by name with validated params, the money settings. The outcome
// is plain data too (the curve, the round trips, the fills an answer can show, as numbers).
import { MAX_TRADES } from '../../contracts/backtest.ts';
import { profileByName } from '../brokers/fees.ts';
import { tickSizeOf } from '../brokers/simulator/prices.ts';
import { runEngine } from './engine.ts';
import { findStrategy } from './strategies/index.ts';
import type { Bars, RoundTrip } from './types.ts';

export interface BacktestTask {
  bars: Bars;
  strategyName: string;
  /** Already validated by the strategy's schema. */
  params: Record<string, unknown>;
  size: number;
  initialCapital: string;
  profileName: string;
  instrument: { tickRule: 'fixed' | 'krx_bands'; tickSize: string };
  fractional: boolean;
}

export interface TaskFill {
  index: number;
  side: 'buy' | 'sell';
  qty: number;
  price: number;
  fee: number;
}

export interface TaskOutcome {
  equity: Float64Array;
  trips: RoundTrip[];
  /** The first MAX_TRADES fills. */
  fills: TaskFill[];
  fillCount: number;
  finalCapital: string;
}

export const runTask = (task: BacktestTask): TaskOutcome => {
  const strategy = findStrategy(task.strategyName);
  const profile = profileByName(task.profileName);
  if (!strategy || !profile) throw new Error(`unknown strategy ${task.strategyName} or profile ${task.profileName}`);
  const outcome = runEngine({
    bars: task.bars,
    strategy: strategy.create(task.params),
    size: task.size,
    initialCapital: task.initialCapital,
    profile,
    tickSize: tickSizeOf(task.instrument),
    fractional: task.fractional,
  });
  return {
    equity: outcome.equity,
    trips: outcome.trips,
    fills: outcome.fills.slice(0, MAX_TRADES).map((fill) => ({ index: fill.index, side: fill.side, qty: fill.qty.toNumber(), price: fill.price.toNumber(), fee: fill.fee.toNumber() })),
    fillCount: outcome.fills.length,
    finalCapital: outcome.finalCapital,
  };
};
