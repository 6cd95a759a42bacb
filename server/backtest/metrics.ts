// A backtest's metrics (DESIGN, Backtests): pure arithmetic on the equity curve, the round trips
// and the closes, as fractions. Every function is linear with constant memory: curves run to millions of points.
import type { TAssetClass } from '../../contracts/common.ts';

/** An equity curve, one point per close, oldest first. */
export type EquityCurve = Float64Array | readonly number[];

/** The metrics of one run, under the names the API reports them. */
export interface BacktestMetrics {
  final_capital: number;
  total_return_pct: number;
  annual_return: number;
  sharpe_ratio: number;
  max_drawdown_pct: number;
  win_rate: number;
  /** Null when no trip lost: the ratio has no denominator. */
  profit_factor: number | null;
  total_trades: number;
  buy_hold_return_pct: number;
}

export interface MetricsInput {
  initialCapital: number;
  equity: Float64Array;
  /** 'YYYY-MM-DD' of each equity point. */
  dates: readonly string[];
  /** Each closed round trip's cash result (fees included), oldest first. */
  tripPnls: ArrayLike<number>;
  firstClose: number;
  lastClose: number;
  assetClass: TAssetClass;
}

export interface CagrInput {
  initialCapital: number;
  finalCapital: number;
  /** 'YYYY-MM-DD', read as UTC days. */
  startDate: string;
  endDate: string;
}

const DAYS_PER_YEAR = 365.25;
const MS_PER_DAY = 86_400_000;

// Crypto trades every calendar day; the equity markets about 252 sessions a year.
const PERIODS_PER_YEAR: Record<TAssetClass, number> = { crypto: 365, us_equity: 252, kr_equity: 252 };

/**
 * Each return e_t / e_{t-1} - 1 is off by about one epsilon, so a curve growing by the same
 * fraction every bar shows a stdev of that size rather than 0; below this it is rounding, and
 * dividing by it would report a Sharpe ratio near 1e15.
 */
const STDEV_NOISE = 16 * Number.EPSILON;

/** A ratio with a non-positive base has no meaning, and would answer Infinity or a sign flip. */
const requirePositive = (name: string, value: number): void => {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive finite number, got ${value}`);
};

/** Milliseconds since the epoch of a 'YYYY-MM-DD' date at 00:00 UTC. */
const utcDay = (date: string): number => {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(date) : NaN;
  // Date.parse rolls '2024-02-30' over to March 1st; only a date that reads back the same is real.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date) throw new RangeError(`not a YYYY-MM-DD date: '${date}'`);
  return ms;
};

export const totalReturn = (initialCapital: number, finalCapital: number): number => {
  requirePositive('initialCapital', initialCapital);
  return finalCapital / initialCapital - 1;
};

/** Compound annual growth over the calendar days between the two dates, 365.25 days a year. */
export const cagr = ({ initialCapital, finalCapital, startDate, endDate }: CagrInput): number => {
  requirePositive('initialCapital', initialCapital);
  const days = (utcDay(endDate) - utcDay(startDate)) / MS_PER_DAY;
  if (days < 0) throw new RangeError(`endDate ${endDate} is before startDate ${startDate}`);
  if (days === 0) return 0;
  // A wiped-out account lost everything whatever the span; the power of a negative base is NaN.
  if (finalCapital <= 0) return -1;
  // expm1(log) rather than pow - 1: a small gain over many years keeps its digits.
  const growth = Math.expm1(Math.log(finalCapital / initialCapital) * (DAYS_PER_YEAR / days));
  // A few days' gain annualised can pass 1e308; JSON has no Infinity, so report the largest number.
  return Math.min(growth, Number.MAX_VALUE);
};

/** The return from one equity point to the next; nothing is left to move once equity is gone. */
const stepReturn = (previous: number, current: number): number => (previous > 0 ? current / previous - 1 : 0);

/**
 * Mean over sample stdev of the close-to-close returns, annualised by √periodsPerYear, risk-free
 * 0. Two passes over the curve without a returns array: the mean first, then the deviations from
 * it, with their sum as the correction term (Chan, Golub & LeVeque), so no large sums of squares
 * cancel. 0 when there are fewer than two returns or they do not vary.
 */
export const sharpeRatio = (equity: EquityCurve, periodsPerYear: number): number => {
  const count = equity.length - 1;
  if (count < 2) return 0;

  let sum = 0;
  let previous: number | undefined;
  for (const value of equity) {
    if (previous !== undefined) sum += stepReturn(previous, value);
    previous = value;
  }
  const mean = sum / count;

  let deviationSum = 0;
  let squareSum = 0;
  previous = undefined;
  for (const value of equity) {
    if (previous !== undefined) {
      const deviation = stepReturn(previous, value) - mean;
      deviationSum += deviation;
      squareSum += deviation * deviation;
    }
    previous = value;
  }
  const variance = Math.max(0, (squareSum - (deviationSum * deviationSum) / count) / (count - 1));
  const stdev = Math.sqrt(variance);
  if (stdev <= STDEV_NOISE * (1 + Math.abs(mean))) return 0;
  return (mean / stdev) * Math.sqrt(periodsPerYear);
};

/** The deepest fall below the running peak, as a negative fraction; 0 if the curve never falls. */
export const maxDrawdown = (equity: EquityCurve): number => {
  let peak = -Infinity;
  let deepest = 0;
  for (const value of equity) {
    if (value > peak) peak = value;
    // A fall is measured from a positive peak only: from 0 or below no fraction is meaningful.
    if (peak > 0) deepest = Math.min(deepest, value / peak - 1);
  }
  return deepest;
};

/** The share of round trips that made money, from their cash results; a break-even trip is not a win. */
export const winRate = (pnls: ArrayLike<number>): number => {
  if (pnls.length === 0) return 0;
  let wins = 0;
  for (let i = 0; i < pnls.length; i++) if (pnls[i]! > 0) wins++;
  return wins / pnls.length;
};

/** Gross profit over gross loss of the round trips' cash results; null without a losing trip, where the ratio has no denominator. */
export const profitFactor = (pnls: ArrayLike<number>): number | null => {
  let grossProfit = 0;
  let grossLoss = 0;
  for (let i = 0; i < pnls.length; i++) {
    const pnl = pnls[i]!;
    if (pnl > 0) grossProfit += pnl;
    else if (pnl < 0) grossLoss -= pnl;
  }
  return grossLoss > 0 ? grossProfit / grossLoss : null;
};

export const buyHoldReturn = (firstClose: number, lastClose: number): number => {
  requirePositive('firstClose', firstClose);
  return lastClose / firstClose - 1;
};

export const periodsPerYearOf = (assetClass: TAssetClass): number => PERIODS_PER_YEAR[assetClass];

/** MetricsInput with its span's first and last dates instead of every point's (all the CAGR reads). */
export type SpanMetricsInput = Omit<MetricsInput, 'dates'> & { startDate: string | undefined; endDate: string | undefined };

/**
 * Every metric of a run. Final capital is the last equity point (the initial capital for a run
 * without points); the CAGR spans the first to the last date; every round trip is a trade.
 */
export const computeMetrics = ({ dates, ...rest }: MetricsInput): BacktestMetrics => spanMetrics({ ...rest, startDate: dates[0], endDate: dates.at(-1) });

/** computeMetrics from the span's first and last dates alone (a worker ranking a sweep has no other). */
export const spanMetrics = ({ initialCapital, equity, startDate, endDate, tripPnls, firstClose, lastClose, assetClass }: SpanMetricsInput): BacktestMetrics => {
  const finalCapital = equity.at(-1) ?? initialCapital;
  return {
    final_capital: finalCapital,
    total_return_pct: totalReturn(initialCapital, finalCapital),
    annual_return: startDate === undefined || endDate === undefined ? 0 : cagr({ initialCapital, finalCapital, startDate, endDate }),
    sharpe_ratio: sharpeRatio(equity, periodsPerYearOf(assetClass)),
    max_drawdown_pct: maxDrawdown(equity),
    win_rate: winRate(tripPnls),
    profit_factor: profitFactor(tripPnls),
    total_trades: tripPnls.length,
    buy_hold_return_pct: buyHoldReturn(firstClose, lastClose),
  };
};
