// Other real series checked from outside, as GOOG is (test/integration/backtest.test.ts): SPY
// (1999-2020), BTC-USD (2017-2022) and ORCL (1995-2014), byte-for-byte copies of ../shared/data
// (its SOURCES.md names the repositories and hashes), sma_crossover 10/30, all-in, no fees or
// slippage, 10,000.
// The reference is a plain float loop written here, independently of the engine: the same
// conventions (signal at a close, fill at the next open, the open position closed at the last
// close, strict crosses on both bars), window means summed afresh, units as cash / open.
import { Decimal } from 'decimal.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { profileByName } from '../../server/brokers/fees.ts';
import { runEngine } from '../../server/backtest/engine.ts';
import { computeMetrics } from '../../server/backtest/metrics.ts';
import { smaCrossover } from '../../server/backtest/strategies/sma-crossover.ts';
import type { Bars } from '../../server/backtest/types.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'backtest');

/** The dates, opens and closes of a Yahoo-style CSV, by header name (an unnamed first column of dates, as GOOG's, is not needed here). */
const readSeries = (file: string): Bars => {
  const [header, ...lines] = readFileSync(path.join(FIXTURES, file), 'utf8').trim().split(/\r?\n/);
  const names = header!.split(',').map((name) => name.trim().toLowerCase());
  const column = (name: string) => {
    const at = names.indexOf(name);
    if (at < 0) throw new Error(`${file} has no ${name} column`);
    return at;
  };
  const rows = lines.map((line) => line.split(','));
  const numbers = (name: string) => Float64Array.from(rows.map((row) => Number(row[column(name)])));
  return { length: rows.length, dates: rows.map((row) => row[column('date')]!), open: numbers('open'), high: numbers('high'), low: numbers('low'), close: numbers('close'), volume: numbers('volume') };
};

/** The reference: sma_crossover in plain floats. */
const plainCrossover = (bars: Bars, fast: number, slow: number, initialCapital: number) => {
  const n = bars.length;
  const mean = (end: number, period: number) => {
    if (end < period - 1) return NaN;
    let sum = 0;
    for (let j = end - period + 1; j <= end; j++) sum += bars.close[j]!;
    return sum / period;
  };
  let cash = initialCapital;
  let units = 0;
  let pending = 0;
  let trades = 0;
  let peak = initialCapital;
  let maxDrawdown = 0;
  for (let i = 0; i < n; i++) {
    if (pending === 1) {
      units = cash / bars.open[i]!;
      cash = 0;
    } else if (pending === -1) {
      cash = units * bars.open[i]!;
      units = 0;
      trades++;
    }
    pending = 0;
    let equity = cash + units * bars.close[i]!;
    if (i === n - 1 && units > 0) {
      cash = equity;
      units = 0;
      trades++;
      equity = cash;
    }
    peak = Math.max(peak, equity);
    maxDrawdown = Math.min(maxDrawdown, equity / peak - 1);
    if (i > 0 && i < n - 1) {
      const up = mean(i - 1, fast) < mean(i - 1, slow) && mean(i, fast) > mean(i, slow);
      const down = mean(i - 1, fast) > mean(i - 1, slow) && mean(i, fast) < mean(i, slow);
      if (units === 0 && up) pending = 1;
      else if (units > 0 && down) pending = -1;
    }
  }
  return { totalReturn: cash / initialCapital - 1, trades, maxDrawdown };
};

const noFees = profileByName('us_broker_zero')!;

describe('sma_crossover 10/30 on other real series, against a plain float loop', () => {
  // SPY's prices have at most four places, on a 0.0001 grid; BTC's are doubles with up to 13
  // places, so its grid is 1e-13 (no price is moved) and its fills run in decimals; ORCL's have
  // six (split-adjusted closes near 2 in 1995), on a 0.000001 grid. All agree with the loop:
  // SPY +62.869 %, 89 trades, max drawdown -31.749 %; BTC +5697.460 %, 31 trades, max drawdown
  // -55.674 %; ORCL +448.959 %, 97 trades, max drawdown -59.855 %.
  it.each([
    ['SPY_1d.csv', 'us_equity', '0.0001', 5_241],
    ['BTC-USD_1d.csv', 'crypto', '1e-13', 1_948],
    ['ORCL_1d.csv', 'us_equity', '0.000001', 5_036],
  ] as const)('%s gives the reference loop’s total return, trades and max drawdown', (file, assetClass, tick, length) => {
    const bars = readSeries(file);
    expect(bars.length).toBe(length);
    const result = runEngine({ bars, strategy: smaCrossover.create(smaCrossover.params.parse({ fast: 10, slow: 30 })), size: 1, initialCapital: '10000', profile: noFees, tickSize: new Decimal(tick), fractional: true });
    const metrics = computeMetrics({ initialCapital: 10_000, equity: result.equity, dates: bars.dates, tripPnls: result.tripPnls, firstClose: bars.close[0]!, lastClose: bars.close[bars.length - 1]!, assetClass });
    const reference = plainCrossover(bars, 10, 30, 10_000);
    // Every fill at the bar's own open or last close: nothing slipped or moved by the grid.
    for (const fill of result.fills) expect(fill.price.toNumber()).toBe(fill.index === bars.length - 1 && fill.side === 'sell' ? bars.close[fill.index] : bars.open[fill.index]);
    expect(metrics.total_trades).toBe(reference.trades);
    expect(metrics.total_trades).toBeGreaterThan(30);
    // Ours cuts units to 9 places and keeps cash exact; the loop's floats differ in the 9th digit at most.
    expect(metrics.total_return_pct).toBeCloseTo(reference.totalReturn, 6);
    expect(metrics.max_drawdown_pct).toBeCloseTo(reference.maxDrawdown, 6);
  });
});
