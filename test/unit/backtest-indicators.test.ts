// Backtest indicators: hand-computed values of each builder, causality (no value ever depends on a
// later bar), moving means that do not drift over a million bars, and their speed.
import { seededRandom } from '../../server/brokers/simulator/prices.ts';
import { describe, expect, it } from 'vitest';
import {
  bollingerLower,
  bollingerMiddle,
  bollingerUpper,
  crossing,
  ema,
  highest,
  lowest,
  macdLine,
  macdSignal,
  rsi,
  sma,
  smaCrossing,
} from '../../server/backtest/indicators.ts';
import { crossedAbove, crossedBelow } from '../../server/backtest/strategies/common.ts';
import type { Bars, Indicator, Lookback } from '../../server/backtest/types.ts';

/** Bars whose open, high, low and volume default to the closes. */
const barsOf = (close: ArrayLike<number>, fields: { high?: number[]; low?: number[] } = {}): Bars => {
  const closes = Float64Array.from(close);
  return {
    length: closes.length,
    // Indicators never read the dates; a million real ones would take a second to make.
    dates: new Array<string>(closes.length).fill('2020-01-01'),
    open: closes.slice(),
    high: Float64Array.from(fields.high ?? closes),
    low: Float64Array.from(fields.low ?? closes),
    close: closes,
    volume: new Float64Array(closes.length).fill(1000),
  };
};

const valuesOf = (indicator: Indicator, bars: Bars): number[] => Array.from(indicator.compute(bars));

/** A deterministic random walk (mulberry32), all fields filled, high >= open/close >= low. */
const randomBars = (length: number, seed: number): Bars => {
  const random = seededRandom(seed);
  const bars = barsOf(new Float64Array(length));
  let price = 100;
  for (let i = 0; i < length; i++) {
    const open = price;
    price *= Math.exp((random() - 0.5) * 0.06);
    bars.open[i] = open;
    bars.close[i] = price;
    bars.high[i] = Math.max(open, price) * (1 + random() * 0.01);
    bars.low[i] = Math.min(open, price) * (1 - random() * 0.01);
    bars.volume[i] = 1000 + Math.floor(random() * 1000);
  }
  return bars;
};

/** A Lookback over a whole series, standing at `at.index`. */
const lookbackOf = (values: Float64Array, at: { index: number }): Lookback => (back = 0) => {
  const j = at.index - back;
  return back >= 0 && j >= 0 ? (values[j] ?? NaN) : NaN;
};

// --- exact rational arithmetic, for reference means ---

/** A finite double times 2^1074, exactly, as a BigInt (every double is then an integer). */
const scaled = (x: number): bigint => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const magnitude = exponent === 0 ? fraction : (fraction | (1n << 52n)) << BigInt(exponent - 1);
  return bits >> 63n ? -magnitude : magnitude;
};

/** The double next to a positive x, above (+1) or below (-1). */
const neighbour = (x: number, direction: 1 | -1): number => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(direction));
  return view.getFloat64(0);
};

/**
 * Whether `mean` is the double nearest to the exact mean of values[end - period + 1 .. end]:
 * the window is summed afresh in exact arithmetic and compared with mean and its two neighbours.
 */
const isNearestToExactMean = (values: ArrayLike<number>, end: number, period: number, mean: number): boolean => {
  let sum = 0n;
  for (let j = end - period + 1; j <= end; j++) sum += scaled(values[j] ?? NaN);
  const n = BigInt(period);
  const distance = (candidate: number) => {
    const gap = sum - n * scaled(candidate);
    return gap < 0n ? -gap : gap;
  };
  return distance(mean) <= distance(neighbour(mean, 1)) && distance(mean) <= distance(neighbour(mean, -1));
};

describe('simple moving average', () => {
  it('averages the current bar and the period - 1 before it, NaN until the first full window', () => {
    expect(valuesOf(sma('close', 3), barsOf([1, 2, 3, 4, 5, 6]))).toEqual([NaN, NaN, 2, 3, 4, 5]);
    expect(valuesOf(sma('close', 1), barsOf([7, 8]))).toEqual([7, 8]);
    // The field is the one asked for: highs 10 and 20 average 15 while the closes average 1.5.
    expect(valuesOf(sma('high', 2), barsOf([1, 2], { high: [10, 20] }))).toEqual([NaN, 15]);
  });

  it('is the exact window mean rounded once, not the naive sum divided', () => {
    // 0.1 + 0.2 + 0.3 is 0.6000000000000001 in doubles, and that over 3 is 0.20000000000000004;
    // the exact mean of the three doubles is 0.20000000000000000185..., nearest to the double 0.2.
    expect((0.1 + 0.2 + 0.3) / 3).toBe(0.20000000000000004);
    expect(valuesOf(sma('close', 3), barsOf([0.1, 0.2, 0.3]))[2]).toBe(0.2);
  });

  it('is all NaN when the series is shorter than the period', () => {
    expect(valuesOf(sma('close', 5), barsOf([1, 2, 3]))).toEqual([NaN, NaN, NaN]);
  });

  it('refuses a period that is not a positive integer', () => {
    expect(() => sma('close', 0)).toThrow(RangeError);
    expect(() => sma('close', 2.5)).toThrow(RangeError);
    expect(() => sma('close', Number.NaN)).toThrow(RangeError);
  });
});

describe('exponential moving average', () => {
  it('is seeded with the SMA of the first period closes, then moves by alpha = 2 / (period + 1)', () => {
    // Period 3: alpha 0.5. Seed at index 2: (2 + 4 + 6) / 3 = 4; then 4 + (10 - 4) / 2 = 7,
    // 7 + (4 - 7) / 2 = 5.5, 5.5 + (8 - 5.5) / 2 = 6.75.
    expect(valuesOf(ema('close', 3), barsOf([2, 4, 6, 10, 4, 8]))).toEqual([NaN, NaN, 4, 7, 5.5, 6.75]);
  });

  it('with period 1 is the series itself', () => {
    expect(valuesOf(ema('close', 1), barsOf([3, 1, 4, 1, 5]))).toEqual([3, 1, 4, 1, 5]);
  });

  it('stays exactly on a flat price', () => {
    const values = valuesOf(ema('close', 26), barsOf(new Array<number>(500).fill(0.1)));
    expect(values.slice(25).every((value) => value === 0.1)).toBe(true);
  });
});

describe('RSI', () => {
  it("follows Wilder's smoothing, seeded with the simple average of the first period changes", () => {
    // Changes: +1 +1 -1 +2 0 -1. Period 3, first defined at index 3:
    //   seed: gain (1 + 1 + 0) / 3 = 2/3, loss (0 + 0 + 1) / 3 = 1/3, RS 2, RSI 100 - 100 / 3 = 66.667
    //   +2:   gain (2/3 * 2 + 2) / 3 = 10/9, loss (1/3 * 2) / 3 = 2/9, RS 5, RSI 100 - 100 / 6 = 83.333
    //    0:   gain 20/27, loss 4/27, RS 5, RSI 83.333
    //   -1:   gain 40/81, loss (4/27 * 2 + 1) / 3 = 35/81, RS 8/7, RSI 100 - 100 / (15/7) = 53.333
    const values = valuesOf(rsi(3), barsOf([10, 11, 12, 11, 13, 13, 12]));
    expect(values.slice(0, 3)).toEqual([NaN, NaN, NaN]);
    const expected = [200 / 3, 250 / 3, 250 / 3, 160 / 3];
    expected.forEach((value, i) => expect(values[3 + i]).toBeCloseTo(value, 10));
  });

  it('is 100 when the average loss is 0 (a rise, or a flat window) and 0 when the average gain is 0', () => {
    expect(valuesOf(rsi(3), barsOf([1, 2, 3, 4]))[3]).toBe(100);
    expect(valuesOf(rsi(3), barsOf([5, 5, 5, 5]))[3]).toBe(100);
    expect(valuesOf(rsi(3), barsOf([4, 3, 2, 1]))[3]).toBe(0);
  });
});

describe('Bollinger bands', () => {
  // [2, 4, 4, 4, 5, 5, 7, 9]: mean 5, population variance (9 + 1 + 1 + 1 + 0 + 0 + 4 + 16) / 8 = 4,
  // std 2. The next window [4, 4, 4, 5, 5, 7, 9, 2] also has mean 5 and variance 32 / 8 = 4.
  const bars = barsOf([2, 4, 4, 4, 5, 5, 7, 9, 2]);

  it('are the SMA and the SMA ± k population standard deviations', () => {
    const nan = new Array<number>(7).fill(NaN);
    expect(valuesOf(bollingerMiddle(8), bars)).toEqual([...nan, 5, 5]);
    expect(valuesOf(bollingerUpper(8, 2), bars)).toEqual([...nan, 9, 9]);
    expect(valuesOf(bollingerLower(8, 2), bars)).toEqual([...nan, 1, 1]);
    expect(valuesOf(bollingerUpper(8, 1.5), bars)).toEqual([...nan, 8, 8]);
  });

  it('use the population standard deviation (divide by n, not n - 1)', () => {
    // [1, 3]: population std 1 (sample std would be 1.414).
    expect(valuesOf(bollingerUpper(2, 1), barsOf([1, 3]))).toEqual([NaN, 3]);
    expect(valuesOf(bollingerLower(2, 1), barsOf([1, 3]))).toEqual([NaN, 1]);
  });

  it('have a middle band identical to the SMA and collapse onto a flat price', () => {
    const random = randomBars(3000, 11);
    expect(valuesOf(bollingerMiddle(20), random)).toEqual(valuesOf(sma('close', 20), random));
    const flat = barsOf(new Array<number>(40).fill(123.45));
    expect(valuesOf(bollingerUpper(20, 2), flat).slice(19)).toEqual(new Array<number>(21).fill(123.45));
    expect(valuesOf(bollingerLower(20, 2), flat).slice(19)).toEqual(new Array<number>(21).fill(123.45));
  });

  it('refuse a width that is not positive', () => {
    expect(() => bollingerUpper(20, 0)).toThrow(RangeError);
    expect(() => bollingerLower(20, -1)).toThrow(RangeError);
  });
});

describe('MACD', () => {
  // Closes [2, 4, 6, 10, 4, 8, 12, 6]. ema(1) is the closes; ema(3) (alpha 0.5) is
  // [-, -, 4, 7, 5.5, 6.75, 9.375, 7.6875], so macd(1, 3) = [-, -, 2, 3, -1.5, 1.25, 2.625, -1.6875].
  // signal 3 (alpha 0.5), seeded with (2 + 3 - 1.5) / 3 = 7/6 at index 4, then each step the
  // midpoint of itself and the MACD: 29/24, 23/12, 11/96.
  const bars = barsOf([2, 4, 6, 10, 4, 8, 12, 6]);

  it('has a line of fast EMA minus slow EMA, first defined at slow - 1', () => {
    expect(valuesOf(macdLine(1, 3), bars)).toEqual([NaN, NaN, 2, 3, -1.5, 1.25, 2.625, -1.6875]);
  });

  it('has a signal line that is the EMA of the line, seeded from its first signal defined values', () => {
    const values = valuesOf(macdSignal(1, 3, 3), bars);
    expect(values.slice(0, 4)).toEqual([NaN, NaN, NaN, NaN]);
    [7 / 6, 29 / 24, 23 / 12, 11 / 96].forEach((value, i) => expect(values[4 + i]).toBeCloseTo(value, 12));
  });

  it('is ema(fast) - ema(slow) exactly at the default periods', () => {
    const random = randomBars(500, 5);
    const fast = ema('close', 12).compute(random);
    const slow = ema('close', 26).compute(random);
    expect(valuesOf(macdLine(12, 26), random)).toEqual(Array.from(fast, (value, i) => value - (slow[i] ?? NaN)));
  });

  it('refuses a fast period that is not below the slow one', () => {
    expect(() => macdLine(26, 26)).toThrow(RangeError);
    expect(() => macdSignal(30, 26, 9)).toThrow(RangeError);
  });
});

describe('highest and lowest (Donchian channels)', () => {
  it('look at the period bars before the current one, never the current bar', () => {
    // highest(high, 3) at 3: max(5, 3, 8) = 8; at 4: max(3, 8, 6) = 8; at 5: max(8, 6, 2) = 8; at 6: max(6, 2, 1) = 6.
    const bars = barsOf([0, 0, 0, 0, 0, 0, 0], { high: [5, 3, 8, 6, 2, 1, 4], low: [4, 2, 5, 3, 6, 7, 1] });
    expect(valuesOf(highest('high', 3), bars)).toEqual([NaN, NaN, NaN, 8, 8, 8, 6]);
    // lowest(low, 2) at 2: min(4, 2) = 2; at 3: min(2, 5) = 2; at 4: min(5, 3) = 3; at 5: min(3, 6) = 3; at 6: min(6, 7) = 6.
    expect(valuesOf(lowest('low', 2), bars)).toEqual([NaN, NaN, 2, 2, 3, 3, 6]);
  });

  it('match a direct scan of the window on a long random series', () => {
    const bars = randomBars(2000, 3);
    for (const period of [1, 7, 50]) {
      const high = highest('high', period).compute(bars);
      const low = lowest('low', period).compute(bars);
      for (let i = period; i < bars.length; i++) {
        const window = { high: bars.high.subarray(i - period, i), low: bars.low.subarray(i - period, i) };
        expect(high[i]).toBe(Math.max(...window.high));
        expect(low[i]).toBe(Math.min(...window.low));
      }
    }
  });
});

describe('causality', () => {
  const builders: Indicator[] = [
    sma('close', 5),
    sma('volume', 40),
    ema('close', 5),
    ema('open', 12),
    rsi(5),
    bollingerMiddle(5),
    bollingerUpper(5, 2),
    bollingerLower(5, 2),
    macdLine(3, 6),
    macdSignal(3, 6, 4),
    highest('high', 5),
    lowest('low', 5),
  ];

  it.each(builders.map((indicator) => [indicator.name, indicator] as const))('%s never changes at or before i when bars after i change', (_, indicator) => {
    // Long enough that the moving means re-base (every 1024 bars) inside the changed stretch.
    const bars = randomBars(2600, 17);
    const before = indicator.compute(bars);
    for (const cut of [0, 3, 4, 10, 1023, 1024, 1500, 2598]) {
      const changed = randomBars(bars.length, 1000 + cut);
      for (const field of ['open', 'high', 'low', 'close', 'volume'] as const) changed[field].set(bars[field].subarray(0, cut + 1));
      const after = indicator.compute(changed);
      for (let i = 0; i <= cut; i++) expect(Object.is(after[i], before[i]), `${indicator.name} at ${i} with bars after ${cut} changed`).toBe(true);
    }
  });
});

describe('strict crossovers', () => {
  const cross = (a: number[], b: number[]) => {
    const at = { index: 0 };
    const above = lookbackOf(Float64Array.from(a), at);
    const below = lookbackOf(Float64Array.from(b), at);
    const found: { above: number[]; below: number[] } = { above: [], below: [] };
    for (at.index = 0; at.index < a.length; at.index++) {
      if (crossedAbove(above, below)) found.above.push(at.index);
      if (crossedBelow(above, below)) found.below.push(at.index);
    }
    return found;
  };

  it('cross on the bar a goes from strictly below b to strictly above, and back', () => {
    expect(cross([1, 3, 4, 1], [2, 2, 2, 2])).toEqual({ above: [1], below: [3] });
    expect(cross([1, 3, 1], [2, 2, 2])).toEqual({ above: [1], below: [2] });
  });

  it('do not cross through or onto a tie', () => {
    // 1 -> 2 (tie) -> 3 and 3 -> 2 (tie) -> 1 each pass through a tie: no cross either way.
    expect(cross([1, 2, 3, 2, 1], [2, 2, 2, 2, 2])).toEqual({ above: [], below: [] });
    expect(cross([2, 2, 2], [2, 2, 2])).toEqual({ above: [], below: [] });
  });

  it('do not cross when either value is NaN', () => {
    expect(cross([NaN, 3], [2, 2])).toEqual({ above: [], below: [] });
    expect(cross([1, 3], [2, NaN])).toEqual({ above: [], below: [] });
    // The first bar has no bar before it: back 1 reads NaN.
    expect(cross([3], [2])).toEqual({ above: [], below: [] });
  });
});

describe('moving means over a million bars', () => {
  const N = 1_000_000;

  /** Every index of two series at which one strictly crosses the other. */
  const crossings = (a: Float64Array, b: Float64Array): number[] => {
    const at = { index: 0 };
    const fast = lookbackOf(a, at);
    const slow = lookbackOf(b, at);
    const found: number[] = [];
    for (at.index = 0; at.index < a.length; at.index++) if (crossedAbove(fast, slow) || crossedBelow(fast, slow)) found.push(at.index);
    return found;
  };

  it('tie exactly on a flat stretch after 600,000 bars of random walk, where a plain running sum does not', () => {
    // A random walk, then 123.45 from FLAT_FROM on. From FLAT_FROM + 29 on both windows hold only
    // 123.45, whose exact mean is 123.45: sma(10) and sma(30) must both be exactly that, a tie on
    // every bar, and no strict crossover may fire there.
    const FLAT_FROM = 600_000;
    const bars = randomBars(N, 31);
    bars.close.fill(123.45, FLAT_FROM);
    const fast = sma('close', 10).compute(bars);
    const slow = sma('close', 30).compute(bars);
    let mismatches = 0;
    // Counted, not asserted per bar: 400,000 expect calls would take seconds.
    for (let i = FLAT_FROM + 29; i < N; i++) if (fast[i] !== 123.45 || slow[i] !== 123.45) mismatches++;
    expect(mismatches).toBe(0);
    expect(crossings(fast.subarray(FLAT_FROM + 29), slow.subarray(FLAT_FROM + 29))).toEqual([]);
    // The same windows summed afresh in exact arithmetic, at a few of those bars.
    for (const i of [FLAT_FROM + 29, FLAT_FROM + 30, 777_777, N - 1]) {
      expect(isNearestToExactMean(bars.close, i, 10, fast[i] ?? NaN)).toBe(true);
      expect(isNearestToExactMean(bars.close, i, 30, slow[i] ?? NaN)).toBe(true);
    }
    // What this guards against: a running sum (add the new close, subtract the old) still carries
    // the rounding errors of the walk, so its two averages of the flat stretch differ.
    const plain = (period: number) => {
      let sum = 0;
      for (let i = 0; i < N; i++) sum += (bars.close[i] ?? 0) - (i >= period ? (bars.close[i - period] ?? 0) : 0);
      return sum / period;
    };
    expect(plain(10)).not.toBe(plain(30));
    // Nor would a fresh naive sum per window tie: ten 123.45s over 10 is 123.45000000000002, thirty over 30 is 123.44999999999995.
    const naive = (period: number) => {
      let sum = 0;
      for (let j = 0; j < period; j++) sum += 123.45;
      return sum / period;
    };
    expect(naive(10)).not.toBe(naive(30));
  });

  it('give the same exactly rounded mean for every window holding the same values, whatever their order', () => {
    // 0.1, 0.2, 0.3 repeating: every window of 15 or 30 holds 5 or 10 of each, in one of three
    // rotations. Their exact means are equal, so sma(15) and sma(30) tie on every bar from 29 on.
    const pattern = [0.1, 0.2, 0.3];
    const close = Float64Array.from({ length: N }, (_, i) => pattern[i % 3] ?? NaN);
    const bars = barsOf(close);
    const fast = sma('close', 15).compute(bars);
    const slow = sma('close', 30).compute(bars);
    const expected = fast[29] ?? NaN;
    // The reference: a fresh sum of the window in exact arithmetic, rounded to the nearest double.
    expect(isNearestToExactMean(close, 29, 30, expected)).toBe(true);
    expect(expected).toBe(0.2);
    let mismatches = 0;
    for (let i = 29; i < N; i++) if (fast[i] !== expected || slow[i] !== expected) mismatches++;
    expect(mismatches).toBe(0);
    expect(crossings(fast, slow)).toEqual([]);
    // A fresh naive sum would depend on the rotation: 0.1 + 0.2 + 0.3 + ... over 30 is 0.2, but
    // starting from 0.2 it is 0.19999999999999998.
    const naive = (start: number) => {
      let sum = 0;
      for (let j = start; j < start + 30; j++) sum += close[j] ?? NaN;
      return sum / 30;
    };
    expect(naive(0)).not.toBe(naive(1));
  });

  it('equal the exactly computed window mean on a random walk', () => {
    const bars = randomBars(N, 23);
    for (const period of [1, 10, 30, 500]) {
      const values = sma('close', period).compute(bars);
      // Every 997th window and the ones around each re-base (every 1024 bars), checked against a
      // fresh exact sum of the window.
      const checked: number[] = [];
      for (let i = period - 1; i < N; i += 997) checked.push(i);
      for (let i = 1024; i < N; i += 1024 * 97) checked.push(i - 1, i, i + 1);
      checked.push(N - 1);
      const wrong = checked.filter((i) => !isNearestToExactMean(bars.close, i, period, values[i] ?? NaN));
      expect(wrong, `sma(close, ${period})`).toEqual([]);
    }
  });
});

// The means come from exact running sums where the series allows it (prices between about 2^-21
// (period + 1) and 2^33 / (period + 1)), else from the compensated sum; both must be the exact
// window mean rounded once, and the crossover series of a strategy must be what crossedAbove and
// crossedBelow read bar by bar, in one pass or two.
describe('exact running sums and crossings', () => {
  /** A random walk on a cent grid between about 50 and 200: every value fits the exact sums. */
  const centWalk = (length: number, seed: number): Float64Array => {
    const random = seededRandom(seed);
    const out = new Float64Array(length);
    let price = 100;
    for (let i = 0; i < length; i++) {
      price = Math.min(200, Math.max(50, price * Math.exp((random() - 0.5) * 0.04)));
      out[i] = Math.round(price * 100) / 100;
    }
    return out;
  };

  it('are the exact window means on a cent-grid walk, and where the series does not fit (tiny, huge)', () => {
    const walk = centWalk(200_000, 41);
    const series: [string, Float64Array][] = [
      ['cents', walk],
      ['tiny', walk.map((value) => value * 1e-9)],
      ['huge', walk.map((value) => value * 1e10)],
    ];
    for (const [label, values] of series) {
      const bars = barsOf(values);
      for (const period of [1, 10, 30, 500]) {
        const means = sma('close', period).compute(bars);
        const checked: number[] = [];
        for (let i = period - 1; i < values.length; i += 499) checked.push(i);
        const wrong = checked.filter((i) => !isNearestToExactMean(values, i, period, means[i]!));
        expect(wrong, `${label}, sma(close, ${period})`).toEqual([]);
      }
    }
  });

  it('mark the strict crosses as crossedAbove and crossedBelow find them, in one pass (smaCrossing) or from two series (crossing)', () => {
    const walk = centWalk(100_000, 43);
    // Mostly standing still a cent either side of 0.1 or 1.1: the two means tie on many bars and
    // come within a few units in the last place on others, where a mean's rounding decides.
    const random = seededRandom(44);
    const still = Float64Array.from({ length: 100_000 }, (_, i) => (i % 20_000 < 10_000 ? 0.1 : 1.1) + (random() < 0.1 ? (random() < 0.5 ? 0.01 : -0.01) : 0));
    for (const values of [walk, walk.map((value) => value * 1e10), walk.map((value, i) => (i === 5_000 ? NaN : value)), still]) {
      const bars = barsOf(values);
      for (const [fast, slow] of [
        [1, 2],
        [10, 30],
        [20, 50],
      ] as const) {
        const a = sma('close', fast).compute(bars);
        const b = sma('close', slow).compute(bars);
        const at = { index: 0 };
        const fastAt = lookbackOf(a, at);
        const slowAt = lookbackOf(b, at);
        const expected = new Float64Array(values.length);
        for (at.index = 0; at.index < values.length; at.index++) expected[at.index] = crossedAbove(fastAt, slowAt) ? 1 : crossedBelow(fastAt, slowAt) ? -1 : 0;
        expect(Array.from(crossing(sma('close', fast), sma('close', slow)).compute(bars))).toEqual(Array.from(expected));
        expect(Array.from(smaCrossing('close', fast, slow).compute(bars))).toEqual(Array.from(expected));
        expect(expected.filter((value) => value !== 0).length).toBeGreaterThan(100);
        if (values === still) expect(a.filter((mean, i) => mean === b[i]).length, 'bars where the means tie').toBeGreaterThan(100);
      }
    }
  });
});
