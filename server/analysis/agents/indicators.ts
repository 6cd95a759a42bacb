// The numbers the analysis agents read from a symbol's daily bars: pure functions on plain arrays
// (oldest first), each answering the latest value, or null when the history is too short.
// Also how those numbers are written into reasoning and prompts, so every agent words them alike.
import type { TAssetClass } from '../../../contracts/common.ts';
import type { AnalysisBar } from '../types.ts';

/** Trading days a year, by asset class: crypto trades every calendar day. */
export const PERIODS_PER_YEAR: Record<TAssetClass, number> = { us_equity: 252, kr_equity: 252, crypto: 365 };

// A bad bar (a zero or missing close) would otherwise surface as NaN or Infinity in a report.
const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

const requirePeriod = (name: string, period: number): void => {
  if (!Number.isInteger(period) || period < 1) throw new RangeError(`${name}: period must be a positive integer, got ${period}`);
};

/** The columns of a bar series, oldest first, for the functions below. */
export const columnsOf = (bars: readonly AnalysisBar[]) => ({
  closes: bars.map((bar) => bar.close),
  highs: bars.map((bar) => bar.high),
  lows: bars.map((bar) => bar.low),
  volumes: bars.map((bar) => bar.volume),
});

/** The mean of the last `period` values. */
export const sma = (values: readonly number[], period: number): number | null => {
  requirePeriod('sma', period);
  if (values.length < period) return null;
  let sum = 0;
  for (let i = values.length - period; i < values.length; i++) sum += values[i] ?? NaN;
  return finiteOrNull(sum / period);
};

/** Every EMA value (NaN before the seed): seeded with the mean of the first `period` values, alpha = 2 / (period + 1). */
const emaSeries = (values: readonly number[], period: number): number[] => {
  const out = new Array<number>(values.length).fill(NaN);
  if (values.length < period) return out;
  let average = 0;
  for (let i = 0; i < period; i++) average += values[i] ?? NaN;
  average /= period;
  out[period - 1] = average;
  const alpha = 2 / (period + 1);
  for (let i = period; i < values.length; i++) {
    average += alpha * ((values[i] ?? NaN) - average);
    out[i] = average;
  }
  return out;
};

/** The exponential moving average at the last value (the same seeding as the backtest's `ema`). */
export const ema = (values: readonly number[], period: number): number | null => {
  requirePeriod('ema', period);
  return finiteOrNull(emaSeries(values, period).at(-1) ?? NaN);
};

/**
 * Wilder's RSI, 0 to 100: gains and losses seeded with their simple mean over the first `period`
 * changes, then smoothed with alpha = 1 / period. Needs period + 1 closes. No loss at all is 100;
 * a perfectly flat window is 50 (no move either way), not the top of the scale.
 */
export const rsi = (closes: readonly number[], period = 14): number | null => {
  requirePeriod('rsi', period);
  if (closes.length < period + 1) return null;
  const change = (i: number): number => (closes[i] ?? NaN) - (closes[i - 1] ?? NaN);
  let averageGain = 0;
  let averageLoss = 0;
  for (let i = 1; i <= period; i++) {
    averageGain += Math.max(change(i), 0);
    averageLoss += Math.max(-change(i), 0);
  }
  averageGain /= period;
  averageLoss /= period;
  for (let i = period + 1; i < closes.length; i++) {
    averageGain += (Math.max(change(i), 0) - averageGain) / period;
    averageLoss += (Math.max(-change(i), 0) - averageLoss) / period;
  }
  if (averageLoss === 0) return averageGain === 0 ? 50 : 100;
  return finiteOrNull(100 - 100 / (1 + averageGain / averageLoss));
};

export interface MacdValue {
  line: number;
  signal: number;
  histogram: number;
}

/** MACD (12/26/9 by default): line = EMA(fast) − EMA(slow), signal = EMA of the line; needs slow + signal − 1 closes. */
export const macd = (closes: readonly number[], fast = 12, slow = 26, signalPeriod = 9): MacdValue | null => {
  requirePeriod('macd', fast);
  requirePeriod('macd', slow);
  requirePeriod('macd', signalPeriod);
  if (fast >= slow) throw new RangeError(`macd: fast (${fast}) must be less than slow (${slow})`);
  if (closes.length < slow + signalPeriod - 1) return null;
  const fastSeries = emaSeries(closes, fast);
  const slowSeries = emaSeries(closes, slow);
  const line: number[] = [];
  for (let i = slow - 1; i < closes.length; i++) line.push((fastSeries[i] ?? NaN) - (slowSeries[i] ?? NaN));
  const lastLine = finiteOrNull(line.at(-1) ?? NaN);
  const lastSignal = finiteOrNull(emaSeries(line, signalPeriod).at(-1) ?? NaN);
  if (lastLine === null || lastSignal === null) return null;
  return { line: lastLine, signal: lastSignal, histogram: lastLine - lastSignal };
};

export interface BollingerValue {
  middle: number;
  upper: number;
  lower: number;
  /** Where the close sits in the band: 0 at the lower band, 1 at the upper, outside 0..1 beyond them. */
  percentB: number;
}

/** Bollinger bands (20, 2 by default) around the SMA, with the population standard deviation. */
export const bollinger = (closes: readonly number[], period = 20, k = 2): BollingerValue | null => {
  const middle = sma(closes, period);
  if (middle === null) return null;
  let squares = 0;
  for (let i = closes.length - period; i < closes.length; i++) squares += ((closes[i] ?? NaN) - middle) ** 2;
  const deviation = Math.sqrt(squares / period);
  const upper = middle + k * deviation;
  const lower = middle - k * deviation;
  const close = closes.at(-1) ?? NaN;
  // A flat window has no band to sit in; its close is the middle.
  const percentB = upper === lower ? 0.5 : (close - lower) / (upper - lower);
  if (![upper, lower, percentB].every(Number.isFinite)) return null;
  return { middle, upper, lower, percentB };
};

/**
 * Wilder's average true range: true ranges from the second bar on (each needs the previous close),
 * seeded with the mean of the first `period` of them, then smoothed with alpha = 1 / period.
 * Needs period + 1 bars.
 */
export const atr = (highs: readonly number[], lows: readonly number[], closes: readonly number[], period = 14): number | null => {
  requirePeriod('atr', period);
  if (highs.length !== closes.length || lows.length !== closes.length) throw new RangeError('atr: highs, lows and closes must have the same length');
  if (closes.length < period + 1) return null;
  const trueRange = (i: number): number => {
    const high = highs[i] ?? NaN;
    const low = lows[i] ?? NaN;
    const previousClose = closes[i - 1] ?? NaN;
    return Math.max(high - low, Math.abs(high - previousClose), Math.abs(low - previousClose));
  };
  let average = 0;
  for (let i = 1; i <= period; i++) average += trueRange(i);
  average /= period;
  for (let i = period + 1; i < closes.length; i++) average += (trueRange(i) - average) / period;
  return finiteOrNull(average);
};

/**
 * Annualised volatility: the sample standard deviation of the last `window` daily log returns
 * (all of them by default) times √252, or √365 for crypto. Needs at least two returns.
 */
export const annualisedVolatility = (closes: readonly number[], assetClass: TAssetClass, window = closes.length - 1): number | null => {
  const count = Math.min(window, closes.length - 1);
  if (count < 2) return null;
  const returns: number[] = [];
  for (let i = closes.length - count; i < closes.length; i++) returns.push(Math.log((closes[i] ?? NaN) / (closes[i - 1] ?? NaN)));
  const mean = returns.reduce((sum, r) => sum + r, 0) / count;
  const variance = returns.reduce((sum, r) => sum + (r - mean) ** 2, 0) / (count - 1);
  return finiteOrNull(Math.sqrt(variance * PERIODS_PER_YEAR[assetClass]));
};

/** The deepest fall from a running peak over the whole series, as a negative fraction (0 when it never fell). Needs two closes. */
export const maxDrawdown = (closes: readonly number[]): number | null => {
  if (closes.length < 2) return null;
  let peak = -Infinity;
  let deepest = 0;
  for (const close of closes) {
    peak = Math.max(peak, close);
    deepest = Math.min(deepest, close / peak - 1);
  }
  return finiteOrNull(deepest);
};

/** The mean traded value (close × volume) of the last `period` days, in the instrument's currency. */
export const averageDailyValue = (closes: readonly number[], volumes: readonly number[], period = 20): number | null => {
  requirePeriod('averageDailyValue', period);
  if (volumes.length !== closes.length) throw new RangeError('averageDailyValue: closes and volumes must have the same length');
  if (closes.length < period) return null;
  let sum = 0;
  for (let i = closes.length - period; i < closes.length; i++) sum += (closes[i] ?? NaN) * (volumes[i] ?? NaN);
  return finiteOrNull(sum / period);
};

/** The simple return over the last `days` days, as a fraction: last close / close `days` bars earlier − 1. */
export const periodReturn = (closes: readonly number[], days: number): number | null => {
  requirePeriod('periodReturn', days);
  if (closes.length < days + 1) return null;
  return finiteOrNull((closes.at(-1) ?? NaN) / (closes[closes.length - 1 - days] ?? NaN) - 1);
};

// --- how the numbers are written ---

/** A number rounded to `digits` significant digits, for prompts: enough to reason on, fewer tokens. */
export const significant = (x: number | null, digits = 6): number | null => (x === null ? null : Number(x.toPrecision(digits)));

/** A price or indicator as reasoning quotes it: two decimals from 1 up, four significant digits below; `n/a` for null. */
export const formatNumber = (x: number | null): string => {
  if (x === null) return 'n/a';
  return Math.abs(x) >= 1 || x === 0 ? x.toFixed(2) : x.toPrecision(4);
};

/** A fraction as a signed percentage with one decimal: 0.0431 → "+4.3%". */
export const formatPercent = (fraction: number | null): string => {
  if (fraction === null) return 'n/a';
  const percent = (fraction * 100).toFixed(1);
  return fraction > 0 ? `+${percent}%` : `${percent}%`;
};

/** A fraction as an unsigned percentage with one decimal: 0.623 → "62.3%". */
export const formatShare = (fraction: number | null): string => (fraction === null ? 'n/a' : `${(fraction * 100).toFixed(1)}%`);

/** A large amount in short scale: 1234567 → "1.23M", 2.5e9 → "2.50B". */
export const formatAmount = (x: number | null): string => {
  if (x === null) return 'n/a';
  const scales: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  const scale = scales.find(([size]) => Math.abs(x) >= size);
  return scale ? `${(x / scale[0]).toFixed(2)}${scale[1]}` : x.toFixed(2);
};

/** Rounded to `decimals` places, for confidences and scores. */
export const roundTo = (x: number, decimals: number): number => {
  const factor = 10 ** decimals;
  // + 0 turns a -0 into 0, so a report never shows "-0".
  return Math.round(x * factor) / factor + 0;
};
