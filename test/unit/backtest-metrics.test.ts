// Backtest metrics on series small enough to work out by hand (the arithmetic beside each
// expectation), their edges (a flat curve, one bar, no trades, no losses), and a million-point
// random walk whose Sharpe ratio must match a plain two-pass reference.
import { describe, expect, it } from 'vitest';
import {
  buyHoldReturn,
  cagr,
  computeMetrics,
  maxDrawdown,
  periodsPerYearOf,
  profitFactor,
  sharpeRatio,
  totalReturn,
  winRate,
} from '../../server/backtest/metrics.ts';


/** Asserts |actual - expected| <= tolerance × |expected|. */
const expectRelative = (actual: number, expected: number, tolerance: number) => {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance * Math.abs(expected));
};

/** mulberry32 and Box-Muller: a seeded normal stream, so the big curve is the same every run. */
const seededNormals = (seed: number) => {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
};

describe('totalReturn and buyHoldReturn', () => {
  it('are the ratio less one, as fractions', () => {
    expect(totalReturn(10_000, 12_500)).toBe(0.25); // 12 500 / 10 000 − 1
    expect(totalReturn(10_000, 7_500)).toBe(-0.25);
    expect(totalReturn(10_000, 10_000)).toBe(0);
    expect(buyHoldReturn(50, 55)).toBeCloseTo(0.1, 15); // 55 / 50 − 1
    expect(buyHoldReturn(80, 60)).toBe(-0.25);
  });

  it('refuse a base that is not positive rather than answer Infinity', () => {
    expect(() => totalReturn(0, 100)).toThrow(RangeError);
    expect(() => buyHoldReturn(-1, 100)).toThrow(RangeError);
    expect(() => buyHoldReturn(Number.NaN, 100)).toThrow(RangeError);
  });
});

describe('cagr', () => {
  it('annualises over calendar days with 365.25 days a year', () => {
    // 2020-01-01 → 2024-01-01 is 1461 days = 4 × 365.25, exactly four years.
    // Quadrupling: 4^(1/4) − 1 = √2 − 1 = 0.414213562…
    expect(cagr({ initialCapital: 100, finalCapital: 400, startDate: '2020-01-01', endDate: '2024-01-01' })).toBeCloseTo(Math.SQRT2 - 1, 12);
    // Doubling: 2^(1/4) − 1 = 0.189207115…
    expect(cagr({ initialCapital: 100, finalCapital: 200, startDate: '2020-01-01', endDate: '2024-01-01' })).toBeCloseTo(0.18920711500272103, 12);
    // Doubling over two calendar years: 2020 is a leap year, so 731 days: 2^(365.25/731) − 1 = 0.413878…
    expect(cagr({ initialCapital: 100, finalCapital: 200, startDate: '2020-01-01', endDate: '2022-01-01' })).toBeCloseTo(0.4138783565025832, 12);
    // 2021 → 2023 is 730 days: 2^(365.25/730) − 1 = 0.414549…
    expect(cagr({ initialCapital: 100, finalCapital: 200, startDate: '2021-01-01', endDate: '2023-01-01' })).toBeCloseTo(0.4145493070645705, 12);
  });

  it('keeps the digits of a small gain over a long span', () => {
    // 1.0001 over 1461 days (4 years): 1.0001^(1/4) − 1 = 2.49990625…e-5 (series: x/4 − 3x²/32 + …)
    const x = 1e-4;
    const expected = x / 4 - (3 * x * x) / 32 + (7 * x * x * x) / 128;
    expectRelative(cagr({ initialCapital: 1, finalCapital: 1 + x, startDate: '2020-01-01', endDate: '2024-01-01' }), expected, 1e-10);
  });

  it('is 0 over zero days and −1 when the account is wiped out', () => {
    expect(cagr({ initialCapital: 100, finalCapital: 150, startDate: '2024-03-01', endDate: '2024-03-01' })).toBe(0);
    expect(cagr({ initialCapital: 100, finalCapital: 0, startDate: '2024-01-01', endDate: '2025-01-01' })).toBe(-1);
    expect(cagr({ initialCapital: 100, finalCapital: -5, startDate: '2024-01-01', endDate: '2025-01-01' })).toBe(-1);
  });

  it('stays finite when a few days of gain annualise past the largest double', () => {
    // 1000^(365.25 / 1) overflows; the answer is capped, never Infinity.
    const growth = cagr({ initialCapital: 1, finalCapital: 1000, startDate: '2024-01-01', endDate: '2024-01-02' });
    expect(growth).toBe(Number.MAX_VALUE);
  });

  it('refuses dates that are not real YYYY-MM-DD days, or run backwards', () => {
    const base = { initialCapital: 100, finalCapital: 110 };
    expect(() => cagr({ ...base, startDate: '2024-02-30', endDate: '2024-03-31' })).toThrow(RangeError);
    expect(() => cagr({ ...base, startDate: '2024-1-1', endDate: '2024-03-31' })).toThrow(RangeError);
    expect(() => cagr({ ...base, startDate: '2024-01-01T00:00:00Z', endDate: '2024-03-31' })).toThrow(RangeError);
    expect(() => cagr({ ...base, startDate: '2024-03-31', endDate: '2024-01-01' })).toThrow(RangeError);
  });
});

describe('sharpeRatio', () => {
  // 100 → 110 → 99 → 108.9: returns 0.1, −0.1, 0.1.
  // mean = 0.1/3 = 0.0333…; deviations 0.0667, −0.1333, 0.0667; squares sum to 0.02667;
  // sample variance 0.02667 / 2 = 0.01333, stdev 0.11547; mean / stdev = 1/(2√3) = 0.288675.
  const zigzag = [100, 110, 99, 108.9];

  it('is mean / sample stdev × √252 for equities', () => {
    // 0.288675 × √252 = √(252/12) = √21 = 4.582576
    expect(sharpeRatio(zigzag, 252)).toBeCloseTo(4.58257569495584, 4);
    expect(sharpeRatio(Float64Array.from(zigzag), periodsPerYearOf('us_equity'))).toBeCloseTo(4.58257569495584, 4);
    expect(sharpeRatio(zigzag, periodsPerYearOf('kr_equity'))).toBeCloseTo(4.58257569495584, 4);
  });

  it('uses √365 for crypto, which trades every day', () => {
    // 0.288675 × √365 = √(365/12) = 5.515131
    expect(periodsPerYearOf('crypto')).toBe(365);
    expect(sharpeRatio(zigzag, periodsPerYearOf('crypto'))).toBeCloseTo(5.515130702591432, 4);
  });

  it('is negative when the curve loses on average', () => {
    // 100 → 90 → 99 → 89.1: returns −0.1, 0.1, −0.1, the mirror image of the zigzag.
    expect(sharpeRatio([100, 90, 99, 89.1], 252)).toBeCloseTo(-4.58257569495584, 4);
  });

  it('is 0 with fewer than two returns, and on a flat curve', () => {
    expect(sharpeRatio([], 252)).toBe(0);
    expect(sharpeRatio([100], 252)).toBe(0);
    expect(sharpeRatio([100, 120], 252)).toBe(0); // one return: no sample stdev
    expect(sharpeRatio(new Float64Array(50).fill(10_000), 252)).toBe(0);
  });

  it('is 0 on a curve growing by the same fraction every bar, whose stdev is only rounding', () => {
    const steady = Float64Array.from({ length: 500 }, (_, t) => 100 * 1.01 ** t);
    expect(sharpeRatio(steady, 252)).toBe(0);
  });

  it('still sees a single small move on an otherwise flat curve', () => {
    // Returns 0, 0, r: mean r/3; deviations −r/3, −r/3, 2r/3; sample variance (6r²/9)/2 = r²/3;
    // mean / stdev = (r/3)/(r/√3) = 1/√3 whatever r is, so × √252 = √84 = 9.165151
    expect(sharpeRatio([100, 100, 100, 100.01], 252)).toBeCloseTo(9.16515138991168, 6);
  });

  it('measures a tiny wobble on a large mean without cancelling it away', () => {
    // 1001 points whose returns alternate 0.01 + d and 0.01 − d (d = 1e-9), 1000 returns:
    // mean 0.01, each deviation ±d, sample stdev = d·√(1000/999); Sharpe = 0.01/that × √252.
    // A one-pass Σr² − n·mean² would lose these digits (0.01² against d² = 1e-18).
    const d = 1e-9;
    const equity = new Float64Array(1001);
    equity[0] = 100;
    for (let t = 1; t < equity.length; t++) equity[t] = equity[t - 1]! * (1 + 0.01 + (t % 2 === 1 ? d : -d));
    const expected = (0.01 / (d * Math.sqrt(1000 / 999))) * Math.sqrt(252);
    // Each stored point carries one rounding (~1e-16 against d), hence the 1e-5 tolerance.
    expectRelative(sharpeRatio(equity, 252), expected, 1e-5);
  });
});

describe('maxDrawdown', () => {
  it('is the deepest fall below the running peak, as a negative fraction', () => {
    // Peaks 100, 120, 120, 120; points over peak 1, 1, 0.5, 0.75 → worst 60/120 − 1 = −0.5
    expect(maxDrawdown([100, 120, 60, 90])).toBe(-0.5);
    // 50/100 − 1 = −0.5 before the new peak 200; 150/200 − 1 = −0.25 after it: the worst stays.
    expect(maxDrawdown(Float64Array.from([100, 50, 200, 150]))).toBe(-0.5);
    // A fall from the first point: 80/100 − 1 = −0.2
    expect(maxDrawdown([100, 80, 90, 95])).toBeCloseTo(-0.2, 15);
  });

  it('is 0 for a curve that never falls, flat or rising', () => {
    expect(maxDrawdown([])).toBe(0);
    expect(maxDrawdown([100])).toBe(0);
    expect(maxDrawdown(new Float64Array(10).fill(100))).toBe(0);
    expect(maxDrawdown([100, 101, 101, 150, 200])).toBe(0);
  });

  it('is −1 when the account is wiped out', () => {
    expect(maxDrawdown([100, 120, 0, 0])).toBe(-1);
  });
});

describe('winRate and profitFactor', () => {
  it('without trades: win rate 0, no profit factor', () => {
    expect(winRate([])).toBe(0);
    expect(profitFactor([])).toBeNull();
  });

  it('mixed trips: the share of winners, gross profit over gross loss', () => {
    const mixed = [300, -100, 0, 200, -50];
    expect(winRate(mixed)).toBe(0.4); // 2 of 5 (the break-even trip is not a win)
    expect(profitFactor(mixed)).toBeCloseTo(500 / 150, 15); // (300 + 200) / |−100 − 50| = 3.333…
  });

  it('all losses: win rate 0, profit factor 0 (no profit over some loss)', () => {
    const losses = [-100, -20.5];
    expect(winRate(losses)).toBe(0);
    expect(profitFactor(losses)).toBe(0); // 0 / 120.5
  });

  it('all wins, or only break-evens: no loss, so no profit factor', () => {
    expect(winRate([10, 20])).toBe(1);
    expect(profitFactor([10, 20])).toBeNull();
    expect(winRate([0, 0])).toBe(0);
    expect(profitFactor([0, 0])).toBeNull();
  });
});

describe('computeMetrics', () => {
  it('reports every metric of a small run', () => {
    const metrics = computeMetrics({
      initialCapital: 10_000,
      // Returns 0.1, −0.1, 0.1, as in the zigzag above.
      equity: Float64Array.from([10_000, 11_000, 9_900, 10_890]),
      dates: ['2024-01-01', '2024-04-01', '2024-07-01', '2025-01-01'],
      tripPnls: [1_000, -1_100, 990],
      firstClose: 50,
      lastClose: 55,
      assetClass: 'us_equity',
    });
    expect(metrics.final_capital).toBe(10_890);
    expect(metrics.total_return_pct).toBeCloseTo(0.089, 12); // 10 890 / 10 000 − 1
    // 2024-01-01 → 2025-01-01 is 366 days: 1.089^(365.25/366) − 1 = 0.0888098
    expect(metrics.annual_return).toBeCloseTo(0.08880975438592076, 12);
    expect(metrics.sharpe_ratio).toBeCloseTo(4.58257569495584, 4); // √21
    expect(metrics.max_drawdown_pct).toBeCloseTo(-0.1, 12); // 9 900 / 11 000 − 1
    expect(metrics.win_rate).toBeCloseTo(2 / 3, 15);
    expect(metrics.profit_factor).toBeCloseTo(1990 / 1100, 12); // (1 000 + 990) / 1 100 = 1.809
    expect(metrics.total_trades).toBe(3);
    expect(metrics.buy_hold_return_pct).toBeCloseTo(0.1, 12); // 55 / 50 − 1
  });

  it('on a single bar: everything 0 and no profit factor', () => {
    expect(
      computeMetrics({
        initialCapital: 10_000,
        equity: Float64Array.from([10_000]),
        dates: ['2024-06-03'],
        tripPnls: [],
        firstClose: 187.5,
        lastClose: 187.5,
        assetClass: 'crypto',
      }),
    ).toEqual({
      final_capital: 10_000,
      total_return_pct: 0,
      annual_return: 0,
      sharpe_ratio: 0,
      max_drawdown_pct: 0,
      win_rate: 0,
      profit_factor: null,
      total_trades: 0,
      buy_hold_return_pct: 0,
    });
  });

  it('on a flat run without trades: zero return, zero drawdown, Sharpe 0', () => {
    const metrics = computeMetrics({
      initialCapital: 5_000,
      equity: new Float64Array(5).fill(5_000),
      dates: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05'],
      tripPnls: [],
      firstClose: 100,
      lastClose: 120,
      assetClass: 'kr_equity',
    });
    expect(metrics).toMatchObject({ final_capital: 5_000, total_return_pct: 0, annual_return: 0, sharpe_ratio: 0, max_drawdown_pct: 0, total_trades: 0, profit_factor: null });
    expect(metrics.buy_hold_return_pct).toBeCloseTo(0.2, 15);
  });
});

describe('a million-point random walk', () => {
  const n = 1_000_000;
  const normal = seededNormals(20_240_601);
  const equity = new Float64Array(n);
  equity[0] = 100_000;
  for (let t = 1; t < n; t++) equity[t] = equity[t - 1]! * (1 + 0.0004 + 0.01 * normal());

  it('gives the Sharpe ratio of a straightforward two-pass reference, to 1e-9 relative', () => {
    const returns = new Float64Array(n - 1);
    for (let t = 1; t < n; t++) returns[t - 1] = equity[t]! / equity[t - 1]! - 1;
    let sum = 0;
    for (const r of returns) sum += r;
    const mean = sum / returns.length;
    let squares = 0;
    for (const r of returns) squares += (r - mean) ** 2;
    const stdev = Math.sqrt(squares / (returns.length - 1));
    for (const periods of [252, 365]) expectRelative(sharpeRatio(equity, periods), (mean / stdev) * Math.sqrt(periods), 1e-9);
  });

  it('gives finite metrics throughout', () => {
    // Only the first and last dates are read; a million real ones would cost a second to build.
    // 2000-01-01 plus 999 999 days is 4737-11-27.
    const dates = new Array<string>(n).fill('2000-01-01');
    dates[n - 1] = new Date(Date.UTC(2000, 0, 1) + (n - 1) * 86_400_000).toISOString().slice(0, 10);
    const metrics = computeMetrics({ initialCapital: 100_000, equity, dates, tripPnls: [5, -3], firstClose: 10, lastClose: 12, assetClass: 'crypto' });
    for (const [name, value] of Object.entries(metrics)) expect(Number.isFinite(value), name).toBe(true);
    expect(metrics.max_drawdown_pct).toBeLessThan(0);
    expect(metrics.max_drawdown_pct).toBeGreaterThanOrEqual(-1);
  });
});
