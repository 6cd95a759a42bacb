// The backtest worker pool: a run in a worker thread gives exactly what the same run gives on
// the event loop, and while it runs the event loop stays free for other work.
import { afterAll, describe, expect, it } from 'vitest';
import { createBacktestPool } from '../../server/backtest/pool.ts';
import { runTask, type BacktestTask } from '../../server/backtest/task.ts';
import { createLogger } from '../../server/observability/logger.ts';

/** A deterministic series long enough to take a while: a slow sine with a faster wiggle. */
const task = (n: number): BacktestTask => {
  const close = Float64Array.from({ length: n }, (_, i) => Math.round((100 + 20 * Math.sin(i / 50) + 3 * Math.sin(i / 7)) * 100) / 100);
  const open = Float64Array.from(close, (value, i) => (i === 0 ? value : close[i - 1]!));
  return {
    bars: { length: n, dates: Array.from({ length: n }, (_, i) => new Date(Date.UTC(2000, 0, 1 + i)).toISOString().slice(0, 10)), open, high: close.map((value, i) => Math.max(value, open[i]!)), low: close.map((value, i) => Math.min(value, open[i]!)), close, volume: new Float64Array(n).fill(1) },
    strategyName: 'sma_crossover',
    params: { fast: 5, slow: 20, size: 1 },
    size: 1,
    initialCapital: '10000',
    profileName: 'crypto_default',
    instrument: { tickRule: 'fixed', tickSize: '0.01' },
    fractional: true,
  };
};

const pool = createBacktestPool({ size: 2, logger: createLogger('silent') });
afterAll(() => pool.close());

describe('the backtest pool', () => {
  it('gives exactly the result of the same run on the event loop', async () => {
    const input = task(20_000);
    const inline = runTask(input);
    const pooled = await pool.run(input);
    expect(pooled.finalCapital).toBe(inline.finalCapital);
    expect(pooled.fillCount).toBe(inline.fillCount);
    expect(pooled.fills).toEqual(inline.fills);
    expect(pooled.trips).toEqual(inline.trips);
    expect(Array.from(pooled.equity)).toEqual(Array.from(inline.equity));
  });

  it('leaves the event loop free while a long run works, and runs several at once', async () => {
    let turns = 0;
    let running = true;
    const spin = () => {
      if (!running) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const turnsWhenAnswered: number[] = [];
    await Promise.all([task(300_000), task(300_000)].map((input) => pool.run(input).then(() => turnsWhenAnswered.push(turns))));
    running = false;
    // On the event loop the run would have held it from start to end: not one turn in between.
    expect(Math.min(...turnsWhenAnswered)).toBeGreaterThan(0);
  });

  it('fails a task it cannot run, and goes on with the next', async () => {
    await expect(pool.run({ ...task(100), strategyName: 'no_such_strategy' })).rejects.toThrow(/unknown strategy/);
    expect((await pool.run(task(100))).finalCapital).toBe(runTask(task(100)).finalCapital);
  });
});
