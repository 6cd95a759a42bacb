// The causal indicators strategies declare: each builder names a series computed from the bars,
// whose value at index i depends on bars 0..i only and is NaN until there is enough history.
import type { Bars, Indicator, TBarField } from './types.ts';

// Dekker's exact product below splits a quotient into 26-bit halves and needs the divisor (the
// period) to fit in the other 27 bits; a million bars is far beyond any daily lookback anyway.
const MAX_PERIOD = 1_000_000;

const requirePeriod = (builder: string, period: number, min = 1): void => {
  if (!Number.isInteger(period) || period < min || period > MAX_PERIOD) {
    throw new RangeError(`${builder}: period must be an integer from ${min} to ${MAX_PERIOD}, got ${period}`);
  }
};

const nanSeries = (length: number): Float64Array => new Float64Array(length).fill(NaN);

// --- window means that do not drift ---
//
// A plain running sum (add the new value, subtract the old) carries every rounding error it ever
// made, so over a long series sma(10) and sma(30) of a flat stretch stop being equal and a strict
// crossover fires on noise. A fresh naive sum per window does not drift, but it is not the mean
// either: ten 0.1s sum to 0.9999999999999999, so sma(10) of a flat 0.1 is 0.09999999999999999
// while sma(30) is 0.10000000000000005, and a series that steps onto a flat stretch "crosses".
// So the window sum is kept as an unevaluated pair hi + lo in which every addition's rounding
// error is caught exactly (Knuth's TwoSum), re-based from a fresh sum every REBASE_EVERY bars, and
// divided with the remainder carried. The mean is then the exact window mean rounded once (unless
// that mean lies within a relative 2^-90 or so of a midpoint between two doubles): a flat window's
// mean is its value, and windows holding the same values give the same mean whatever their order.

const REBASE_EVERY = 1024;

// 2^27 + 1: Veltkamp's splitter, which cuts a double into two halves of at most 26 bits.
const SPLITTER = 134_217_729;

/** (hi + lo) / n rounded once, for an integer 1 <= n <= MAX_PERIOD. */
const divideSum = (hi: number, lo: number, n: number): number => {
  const q = hi / n;
  // q * n exactly, as product + productError (Dekker): n needs no split, having under 27 bits.
  const product = q * n;
  const scaled = SPLITTER * q;
  const qHigh = scaled - (scaled - q);
  const qLow = q - qHigh;
  const productError = qHigh * n - product + qLow * n;
  // hi - product is exact (the two are within a factor of two); the rest is far below q's ulp.
  const remainder = hi - product - productError;
  return q + (remainder + lo) / n;
};

/** values[start .. start + count - 1] summed afresh, as the pair [hi, lo] of TwoSum's sum and gathered errors. */
const compensatedSum = (values: Float64Array, start: number, count: number): [number, number] => {
  let hi = 0;
  let lo = 0;
  for (let j = start; j < start + count; j++) {
    const x = values[j] ?? NaN;
    const sum = hi + x;
    const virtual = sum - hi;
    lo += hi - (sum - virtual) + (x - virtual);
    hi = sum;
  }
  return [hi, lo];
};

/** The mean of values[start .. start + count - 1]. */
const windowMean = (values: Float64Array, start: number, count: number): number => {
  const [hi, lo] = compensatedSum(values, start, count);
  return divideSum(hi, lo, count);
};

/** movingMean by a compensated running sum: any series, finite or not. */
const compensatedMovingMean = (values: Float64Array, period: number): Float64Array => {
  const out = nanSeries(values.length);
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < values.length; i++) {
    if (i >= period && i % REBASE_EVERY === 0) {
      // Re-based so that what lo gathered while prices were maybe far larger is dropped.
      [hi, lo] = compensatedSum(values, i - period + 1, period);
      out[i] = divideSum(hi, lo, period);
      continue;
    }
    // Two TwoSums, written out: this loop is the hot path of every SMA and Bollinger band.
    const x = values[i] ?? NaN;
    let sum = hi + x;
    let virtual = sum - hi;
    lo += hi - (sum - virtual) + (x - virtual);
    hi = sum;
    if (i >= period) {
      const y = -(values[i - period] ?? NaN);
      sum = hi + y;
      virtual = sum - hi;
      lo += hi - (sum - virtual) + (y - virtual);
      hi = sum;
    }
    if (i >= period - 1) out[i] = divideSum(hi, lo, period);
  }
  return out;
};

// --- the same means from exact running sums, where the series allows them ---
//
// Each value v splits exactly into a head, v rounded to a multiple of 2^-20, and a tail v - head
// (at most 2^-21 in size, a multiple of v's own spacing). The heads are integers in units of
// 2^-20 and the tails integers in units of the smallest value's spacing; while every partial sum
// stays under 2^53 of those units, plain double additions of them are exact. So two running sums,
// one add each per bar, hold every window's sum exactly, forever, with no rebasing: the pair
// (heads, tails) is that sum, normalised by one TwoSum and divided as above. This is about twice
// as fast as the compensated sum (whose four dependent additions per bar set its pace) and gives
// the same means: both divide the exact window sum, rounded once.

// x + HEAD_SPLITTER lands in [2^32, 2^33), where doubles are 2^-20 apart: subtracting it again
// leaves x rounded to a multiple of 2^-20, exactly, for any |x| < 2^31 (two additions, where
// Math.round and two scalings are several times slower).
const HEAD_SPLITTER = 1.5 * 2 ** 32;

/** The exact window mean of the pair heads + tails over `period`, rounded once (divideSum). */
const meanOfParts = (heads: number, tails: number, period: number): number => {
  // TwoSum: sum + error is heads + tails exactly, the error within half a unit of the sum's last place.
  const sum = heads + tails;
  const virtual = sum - heads;
  return divideSum(sum, heads - (sum - virtual) + (tails - virtual), period);
};

/**
 * movingMean from exact running sums of heads and tails, or undefined for a series they cannot
 * hold: every partial sum over `period` + 1 values must stay within 2^53 units. Heads need
 * |v| (period + 1) 2^20 <= 2^53 (and |v| < 2^31 to split); tails, each at most 2^-21 and a
 * multiple of the spacing of the smallest |v| (more than |v| 2^-53), need |v| >= (period + 1)
 * 2^-21. Zeros split into zeros and count for neither; a NaN or an infinity fails.
 */
const exactMovingMean = (values: Float64Array, period: number): Float64Array | undefined => {
  const most = Math.min(2 ** 33 / (period + 1), 2 ** 30);
  const least = (period + 1) * 2 ** -21;
  const n = values.length;
  // Every index from period - 1 on is written below; only the ones before are NaN.
  const out = new Float64Array(n).fill(NaN, 0, Math.min(n, period - 1));
  let heads = 0;
  let tails = 0;
  for (let i = 0; i < n; i++) {
    const x = values[i]!;
    const size = Math.abs(x);
    // Written so that a NaN fails both comparisons.
    if (!(size <= most) || (size !== 0 && !(size >= least))) return undefined;
    const xHead = x + HEAD_SPLITTER - HEAD_SPLITTER;
    let headStep = xHead;
    let tailStep = x - xHead;
    if (i >= period) {
      const y = values[i - period]!;
      const yHead = y + HEAD_SPLITTER - HEAD_SPLITTER;
      // Differences of heads (of tails) are exact too: at most 2^33 (2^-20) of their units apart.
      headStep -= yHead;
      tailStep -= y - yHead;
    }
    heads += headStep;
    tails += tailStep;
    if (i >= period - 1) out[i] = meanOfParts(heads, tails, period);
  }
  return out;
};

/** The mean of each window of `period` values ending at i (NaN before the first full window). */
const movingMean = (values: Float64Array, period: number): Float64Array => exactMovingMean(values, period) ?? compensatedMovingMean(values, period);

/**
 * The exponential moving average of a series that may start with NaNs (the MACD line does):
 * seeded at its first `period` defined values with their mean, then alpha = 2 / (period + 1).
 */
const exponentialMean = (values: Float64Array, period: number): Float64Array => {
  const out = nanSeries(values.length);
  let first = 0;
  while (first < values.length && Number.isNaN(values[first])) first++;
  const seedAt = first + period - 1;
  if (seedAt >= values.length) return out;
  const alpha = 2 / (period + 1);
  let average = windowMean(values, first, period);
  out[seedAt] = average;
  for (let i = seedAt + 1; i < values.length; i++) {
    // prev + alpha * (x - prev), not alpha * x + (1 - alpha) * prev: on a flat stretch the
    // average then stays exactly at the price, so two averages of it tie instead of wobbling.
    average += alpha * ((values[i] ?? NaN) - average);
    out[i] = average;
  }
  return out;
};

/** Population standard deviation (divided by n, as pandas' std(ddof=0)) of each window, around `means`. */
const movingDeviation = (values: Float64Array, means: Float64Array, period: number): Float64Array => {
  const out = nanSeries(values.length);
  // A fresh two-pass sum per window, O(n * period): a running sum of squares loses every digit to
  // cancellation when prices are large and quiet, and a flat window must give exactly 0.
  for (let i = period - 1; i < values.length; i++) {
    const mean = means[i] ?? NaN;
    let squares = 0;
    for (let j = i - period + 1; j <= i; j++) {
      const deviation = (values[j] ?? NaN) - mean;
      squares += deviation * deviation;
    }
    out[i] = Math.sqrt(squares / period);
  }
  return out;
};

/**
 * sign * max(sign * values) over the `period` values before index i (the current one excluded),
 * with a monotonic deque of indices: O(n) whatever the period. sign 1 is the highest, -1 the lowest.
 */
const extremeBefore = (values: Float64Array, period: number, sign: 1 | -1): Float64Array => {
  const out = nanSeries(values.length);
  const deque = new Int32Array(values.length);
  let head = 0;
  let tail = 0;
  for (let i = 1; i < values.length; i++) {
    const entering = i - 1;
    const candidate = sign * (values[entering] ?? NaN);
    while (tail > head && sign * (values[deque[tail - 1] ?? 0] ?? NaN) <= candidate) tail--;
    deque[tail++] = entering;
    while ((deque[head] ?? 0) < i - period) head++;
    if (i >= period) out[i] = values[deque[head] ?? 0] ?? NaN;
  }
  return out;
};

// No loss in the window (a flat window included) is the top of the scale, as in Wilder's
// definition taken to its limit; TA-Lib answers 0 for a flat window instead.
const rsiOf = (averageGain: number, averageLoss: number): number => (averageLoss === 0 ? 100 : 100 - 100 / (1 + averageGain / averageLoss));

/** The closes' Wilder RSI: gains and losses averaged with alpha = 1 / period, seeded with their simple mean. */
const wilderRsi = (close: Float64Array, period: number): Float64Array => {
  const out = nanSeries(close.length);
  if (close.length <= period) return out;
  let gains = 0;
  let losses = 0;
  for (let i = 1; i <= period; i++) {
    const change = (close[i] ?? NaN) - (close[i - 1] ?? NaN);
    if (change > 0) gains += change;
    else losses -= change;
  }
  let averageGain = gains / period;
  let averageLoss = losses / period;
  out[period] = rsiOf(averageGain, averageLoss);
  for (let i = period + 1; i < close.length; i++) {
    const change = (close[i] ?? NaN) - (close[i - 1] ?? NaN);
    averageGain += ((change > 0 ? change : 0) - averageGain) / period;
    averageLoss += ((change < 0 ? -change : 0) - averageLoss) / period;
    out[i] = rsiOf(averageGain, averageLoss);
  }
  return out;
};

/** middle + side * k * std: the upper band for side 1, the lower for -1. */
const bollingerBand = (close: Float64Array, period: number, k: number, side: 1 | -1): Float64Array => {
  const middle = movingMean(close, period);
  const deviation = movingDeviation(close, middle, period);
  for (let i = 0; i < middle.length; i++) middle[i] = (middle[i] ?? NaN) + side * k * (deviation[i] ?? NaN);
  return middle;
};

const requireWidth = (builder: string, k: number): void => {
  if (!Number.isFinite(k) || k <= 0) throw new RangeError(`${builder}: k must be a positive number, got ${k}`);
};

const requireFastBelowSlow = (builder: string, fast: number, slow: number): void => {
  requirePeriod(builder, fast);
  requirePeriod(builder, slow);
  if (fast >= slow) throw new RangeError(`${builder}: fast (${fast}) must be less than slow (${slow})`);
};

const macdOf = (close: Float64Array, fast: number, slow: number): Float64Array => {
  const fastMean = exponentialMean(close, fast);
  const line = exponentialMean(close, slow);
  for (let i = 0; i < line.length; i++) line[i] = (fastMean[i] ?? NaN) - (line[i] ?? NaN);
  return line;
};

// --- the builders ---

/** Simple moving average of a bar field over `period` bars, the current one included. */
export const sma = (field: TBarField, period: number): Indicator => {
  requirePeriod('sma', period);
  return { name: `sma(${field},${period})`, compute: (bars: Bars) => movingMean(bars[field], period) };
};

/** Exponential moving average, seeded with the SMA of the first `period` bars, alpha = 2 / (period + 1). */
export const ema = (field: TBarField, period: number): Indicator => {
  requirePeriod('ema', period);
  return { name: `ema(${field},${period})`, compute: (bars: Bars) => exponentialMean(bars[field], period) };
};

/** Wilder's RSI of the closes, 0 to 100; first defined at index `period`. */
export const rsi = (period: number): Indicator => {
  requirePeriod('rsi', period);
  return { name: `rsi(${period})`, compute: (bars: Bars) => wilderRsi(bars.close, period) };
};

/** The middle Bollinger band: the SMA of the closes (identical to sma('close', period)). */
export const bollingerMiddle = (period: number): Indicator => {
  requirePeriod('bollingerMiddle', period);
  return { name: `bollinger_middle(${period})`, compute: (bars: Bars) => movingMean(bars.close, period) };
};

/** The upper Bollinger band: middle + k population standard deviations of the closes. */
export const bollingerUpper = (period: number, k: number): Indicator => {
  requirePeriod('bollingerUpper', period);
  requireWidth('bollingerUpper', k);
  return { name: `bollinger_upper(${period},${k})`, compute: (bars: Bars) => bollingerBand(bars.close, period, k, 1) };
};

/** The lower Bollinger band: middle - k population standard deviations of the closes. */
export const bollingerLower = (period: number, k: number): Indicator => {
  requirePeriod('bollingerLower', period);
  requireWidth('bollingerLower', k);
  return { name: `bollinger_lower(${period},${k})`, compute: (bars: Bars) => bollingerBand(bars.close, period, k, -1) };
};

/** The MACD line of the closes: ema(fast) - ema(slow); first defined at index slow - 1. */
export const macdLine = (fast: number, slow: number): Indicator => {
  requireFastBelowSlow('macdLine', fast, slow);
  return { name: `macd(${fast},${slow})`, compute: (bars: Bars) => macdOf(bars.close, fast, slow) };
};

/** The MACD signal line: the EMA of the MACD line, seeded with the mean of its first `signal` defined values. */
export const macdSignal = (fast: number, slow: number, signal: number): Indicator => {
  requireFastBelowSlow('macdSignal', fast, slow);
  requirePeriod('macdSignal', signal);
  return { name: `macd_signal(${fast},${slow},${signal})`, compute: (bars: Bars) => exponentialMean(macdOf(bars.close, fast, slow), signal) };
};

/** The highest value of a field over the `period` bars before the current one (a Donchian upper channel). */
export const highest = (field: TBarField, period: number): Indicator => {
  requirePeriod('highest', period);
  return { name: `highest(${field},${period})`, compute: (bars: Bars) => extremeBefore(bars[field], period, 1) };
};

/** The lowest value of a field over the `period` bars before the current one (a Donchian lower channel). */
export const lowest = (field: TBarField, period: number): Indicator => {
  requirePeriod('lowest', period);
  return { name: `lowest(${field},${period})`, compute: (bars: Bars) => extremeBefore(bars[field], period, -1) };
};

/**
 * Where `a` crosses `b`: 1 on a bar where a crossed above b (strictly below on the bar before,
 * strictly above now), -1 where it crossed below, 0 elsewhere (a tie or a NaN on either bar is no
 * cross), as crossedAbove and crossedBelow read them bar by bar. Computed once per run, so a
 * crossover strategy reads one value per bar instead of four.
 */
export const crossing = (a: Indicator, b: Indicator): Indicator => ({
  name: `crossing(${a.name},${b.name})`,
  compute: (bars: Bars) => {
    const x = a.compute(bars);
    const y = b.compute(bars);
    // Written over x (a fresh array of a's), from the last bar down, so that x[i - 1] is still a's.
    for (let i = x.length - 1; i >= 1; i--) {
      const before = x[i - 1]!;
      const beforeOther = y[i - 1]!;
      const now = x[i]!;
      const nowOther = y[i]!;
      x[i] = before < beforeOther && now > nowOther ? 1 : before > beforeOther && now < nowOther ? -1 : 0;
    }
    if (x.length > 0) x[0] = 0;
    return x;
  },
});

// Whether the fast mean is above the slow one is whether fast sum × slow is above slow sum ×
// fast. Each of those, the rounded sum times the other period, is within 2u of the exact value
// (u = 2^-53: one rounding in the sum, one in the product), and a rounded exact mean is within u
// of the exact mean: so the products are within 3u (|fast side| + |slow side|) of the rounded
// means scaled alike. When they are farther apart than 8u times that, their order is the rounded
// means' order; only closer (a tie or nearly) are the rounded means themselves needed.
const NEAR_TIE = 2 ** -50;

/**
 * crossing(sma(field, fast), sma(field, slow)) in one pass over the bars, keeping only the order
 * of the two averages on the bar before: the same exact running sums as exactMovingMean, in the
 * same order, so the same means and crosses (falling back to the two series whenever
 * exactMovingMean would fall back for the longer period, which is the stricter one). Each bar
 * orders the two means by two products (NEAR_TIE), and divides for the rounded means only near a tie.
 */
const exactSmaCrossing = (values: Float64Array, fast: number, slow: number): Float64Array | undefined => {
  const longest = Math.max(fast, slow);
  const most = Math.min(2 ** 33 / (longest + 1), 2 ** 30);
  const least = (longest + 1) * 2 ** -21;
  const n = values.length;
  const out = new Float64Array(n);
  let fastHeads = 0;
  let fastTails = 0;
  let slowHeads = 0;
  let slowTails = 0;
  // The sign of fast mean - slow mean on the bar before: 0 for a tie and before both are defined
  // (a NaN mean compares false both ways, which is no cross, as a tie is).
  let orderBefore = 0;
  for (let i = 0; i < n; i++) {
    const x = values[i]!;
    const size = Math.abs(x);
    if (!(size <= most) || (size !== 0 && !(size >= least))) return undefined;
    const xHead = x + HEAD_SPLITTER - HEAD_SPLITTER;
    const xTail = x - xHead;
    let fastHeadStep = xHead;
    let fastTailStep = xTail;
    if (i >= fast) {
      const y = values[i - fast]!;
      const yHead = y + HEAD_SPLITTER - HEAD_SPLITTER;
      fastHeadStep -= yHead;
      fastTailStep -= y - yHead;
    }
    fastHeads += fastHeadStep;
    fastTails += fastTailStep;
    let slowHeadStep = xHead;
    let slowTailStep = xTail;
    if (i >= slow) {
      const y = values[i - slow]!;
      const yHead = y + HEAD_SPLITTER - HEAD_SPLITTER;
      slowHeadStep -= yHead;
      slowTailStep -= y - yHead;
    }
    slowHeads += slowHeadStep;
    slowTails += slowTailStep;
    let order = 0;
    if (i >= longest - 1) {
      const fastPlain = (fastHeads + fastTails) * slow;
      const slowPlain = (slowHeads + slowTails) * fast;
      const apart = fastPlain - slowPlain;
      if (Math.abs(apart) > NEAR_TIE * (Math.abs(fastPlain) + Math.abs(slowPlain))) order = apart > 0 ? 1 : -1;
      else {
        const fastMean = meanOfParts(fastHeads, fastTails, fast);
        const slowMean = meanOfParts(slowHeads, slowTails, slow);
        order = fastMean > slowMean ? 1 : fastMean < slowMean ? -1 : 0;
      }
    }
    out[i] = orderBefore < 0 && order > 0 ? 1 : orderBefore > 0 && order < 0 ? -1 : 0;
    orderBefore = order;
  }
  return out;
};

/** crossing(sma(field, fast), sma(field, slow)), the same values, computed in one pass where it can be. */
export const smaCrossing = (field: TBarField, fast: number, slow: number): Indicator => {
  const twoSeries = crossing(sma(field, fast), sma(field, slow));
  return { name: twoSeries.name, compute: (bars: Bars) => exactSmaCrossing(bars[field], fast, slow) ?? twoSeries.compute(bars) };
};
