// The backtest worker pool: a job run in a worker thread gives exactly what the same job gives on
// the event loop (one run or many over the same bars), and while it runs the event loop stays
// free for other work.
import { afterAll, describe, expect, it } from 'vitest';
import { createBacktestPool } from '../../server/backtest/pool.ts';
import { computeMetrics } from '../../server/backtest/metrics.ts';
import { runJob, summarizeJob, type BacktestJob } from '../../server/backtest/task.ts';
import { createLogger } from '../../server/observability/logger.ts';

/** A deterministic series long enough to take a while: a slow sine with a faster wiggle. */
const job = (n: number, runs: BacktestJob['runs'] = [{ strategyName: 'sma_crossover', params: { fast: 5, slow: 20, size: 1 }, size: 1 }]): BacktestJob => {
  const close = Float64Array.from({ length: n }, (_, i) => Math.round((100 + 20 * Math.sin(i / 50) + 3 * Math.sin(i / 7)) * 100) / 100);
  const open = Float64Array.from(close, (value, i) => (i === 0 ? value : close[i - 1]!));
  return {
    bars: { length: n, open, high: close.map((value, i) => Math.max(value, open[i]!)), low: close.map((value, i) => Math.min(value, open[i]!)), close, volume: new Float64Array(n).fill(1) },
    warmup: 0,
    initialCapital: '10000',
    profileName: 'crypto_default',
    fractional: true,
    runs,
  };
};

const pool = createBacktestPool({ size: 2, logger: createLogger('silent') });
afterAll(() => pool.close());

const plain = (outcome: ReturnType<typeof runJob>[number]) => ({ ...outcome, equity: Array.from(outcome.equity) });

describe('the backtest pool', () => {
  it('gives exactly the result of the same job on the event loop, for one run and for several over the same bars', async () => {
    const one = job(20_000);
    expect((await pool.run(one)).map(plain)).toEqual(runJob(one).map(plain));
    const several = job(5_000, [
      { strategyName: 'sma_crossover', params: { fast: 5, slow: 20, size: 1 }, size: 1 },
      { strategyName: 'ema_crossover', params: { fast: 12, slow: 26, size: 0.5 }, size: 0.5 },
      { strategyName: 'buy_and_hold', params: { size: 1 }, size: 1 },
    ]);
    const pooled = await pool.run(several);
    expect(pooled).toHaveLength(3);
    expect(pooled.map(plain)).toEqual(runJob(several).map(plain));
  });

  it('summarises each run (as a sweep ranks them) with the metrics of its whole outcome, in a worker as on the event loop', async () => {
    const several = job(3_000, [
      { strategyName: 'sma_crossover', params: { fast: 5, slow: 20, size: 1 }, size: 1 },
      { strategyName: 'rsi_reversion', params: { period: 14, oversold: 30, overbought: 70, size: 1 }, size: 1 },
      { strategyName: 'buy_and_hold', params: { size: 1 }, size: 1 },
    ]);
    const dates = Array.from({ length: 3_000 }, (_, i) => new Date(Date.UTC(2010, 0, 1 + i)).toISOString().slice(0, 10));
    const span = { startDate: dates[0]!, endDate: dates.at(-1)!, assetClass: 'crypto' } as const;
    const { close } = several.bars;
    const expected = runJob(several).map((outcome) => ({
      metrics: computeMetrics({ initialCapital: 10_000, equity: outcome.equity, dates, tripPnls: outcome.trips.map((trip) => trip.pnl), firstClose: close[0]!, lastClose: close[close.length - 1]!, assetClass: 'crypto' }),
      finalCapital: outcome.finalCapital,
    }));
    expect(expected.map(({ metrics }) => metrics.total_trades).filter((trades) => trades > 1)).toHaveLength(2);
    expect(summarizeJob(several, span)).toEqual(expected);
    expect(await pool.summarize(several, span)).toEqual(expected);
  });

  it('leaves the event loop free while long jobs work, and runs several at once', async () => {
    let turns = 0;
    let running = true;
    const spin = () => {
      if (!running) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const turnsWhenAnswered: number[] = [];
    await Promise.all([job(300_000), job(300_000)].map((input) => pool.run(input).then(() => turnsWhenAnswered.push(turns))));
    running = false;
    // On the event loop a job would have held it from start to end: not one turn in between.
    expect(Math.min(...turnsWhenAnswered)).toBeGreaterThan(0);
  });

  it('fails a job it cannot run, and goes on with the next', async () => {
    await expect(pool.run(job(100, [{ strategyName: 'no_such_strategy', params: {}, size: 1 }]))).rejects.toThrow(/unknown strategy/);
    expect((await pool.run(job(100))).map(plain)).toEqual(runJob(job(100)).map(plain));
  });
});
