// An account's performance over a range (DESIGN §6), from its history's points and its FIFO lots:
// the time-weighted return (the daily returns chained, flows removed, so a reset is no loss), the
// drawdown and Sharpe ratio of that flow-free index by the backtests' own functions, and the
// results of the lots closed in the range, in all and per symbol.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TPerformance, TPortfolioPoint, TSymbolPerformance } from '../../contracts/portfolio.ts';
import { maxDrawdown, periodsPerYearOf, profitFactor, sharpeRatio, winRate } from '../backtest/metrics.ts';
import { isTradingDay } from '../markets/calendar.ts';
import { approximately, fixedPointOf, numberOf, times, ZERO, type FixedPoint } from './fixed-point.ts';
import type { ClosedLot, OpenLot } from './lots.ts';
import type { AccountFill } from './queries.ts';

/** The ISO week of a UTC day, `2026-W48`. */
export const isoWeekOf = (day: string): string => {
  const date = new Date(`${day}T00:00:00Z`);
  // The week's Thursday decides its year (ISO 8601).
  const thursday = new Date(date.getTime() + (3 - ((date.getUTCDay() + 6) % 7)) * 86_400_000);
  const yearStart = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = 1 + Math.floor((thursday.getTime() - yearStart) / (7 * 86_400_000));
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
};

/** Returns chained within each key, in order of first appearance. */
const chainedBy = <K extends string>(daily: readonly { date: string; return: number }[], keyOf: (day: string) => string, name: K): (Record<K, string> & { return: number })[] => {
  const growth = new Map<string, number>();
  for (const { date, return: r } of daily) growth.set(keyOf(date), (growth.get(keyOf(date)) ?? 1) * (1 + r));
  return [...growth].map(([key, factor]) => ({ [name]: key, return: factor - 1 }) as Record<K, string> & { return: number });
};

const sum = (values: readonly FixedPoint[]) => values.reduce((total, value) => total + value, ZERO);

/** A fill's fee and tax, read once for the whole and for its symbol. */
interface FillCost {
  symbol: string;
  fee: FixedPoint;
  tax: FixedPoint;
}

/** Realised and unrealised results, fees, taxes and the lots' counts of one group of lots and fills. */
const resultsOf = (closed: readonly ClosedLot[], open: readonly OpenLot[], fills: readonly FillCost[], priceOf: ((symbol: string) => string | undefined) | undefined) => {
  // For the ratios only (win rate, profit factor): the sums reported are exact.
  const gains = closed.map((lot) => approximately(lot.gain));
  const taxes = sum(fills.map((fill) => fill.tax));
  let unrealized: FixedPoint | null = priceOf ? ZERO : null;
  for (const lot of open) {
    const price = priceOf?.(lot.symbol);
    // A symbol with no price now is valued at its cost: no result either way.
    if (unrealized !== null && price !== undefined) unrealized += times(lot.qty, fixedPointOf(price)) - lot.costBasis;
  }
  return {
    realized_pnl: numberOf(sum(closed.map((lot) => lot.gain))),
    unrealized_pnl: unrealized === null ? null : numberOf(unrealized),
    fees: numberOf(sum(fills.map((fill) => fill.fee)) - taxes),
    taxes: numberOf(taxes),
    closed_lots: closed.length,
    win_rate: winRate(gains),
    gains,
  };
};

export interface PerformanceInputs {
  assetClass: TAssetClass;
  from: string;
  to: string;
  points: readonly TPortfolioPoint[];
  /** Lots closed at any time, and the lots open at the range's end. */
  closed: readonly ClosedLot[];
  open: readonly OpenLot[];
  /** The fills inside the range. */
  fills: readonly AccountFill[];
  /** Today's price of a symbol, when the range ends today; undefined for an earlier end. */
  priceOf: ((symbol: string) => string | undefined) | undefined;
}

export const performanceOf = ({ assetClass, from, to, points, closed, open, fills, priceOf }: PerformanceInputs): Omit<TPerformance, 'asset_class' | 'mode' | 'currency'> => {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`) + 86_400_000;
  const closedInRange = closed.filter((lot) => lot.soldAt.getTime() >= start && lot.soldAt.getTime() < end);
  // A day whose return has no base (an empty account before it) adds nothing to the chain.
  const daily = points.map((point) => ({ date: point.date, return: point.pnl_pct ?? 0 }));
  const index = [1];
  for (const { return: r } of daily) index.push(index.at(-1)! * (1 + r));
  // Stocks' Sharpe over their exchange's trading days: a weekend's flat day is no observation.
  const sessions = assetClass === 'crypto' ? daily : daily.filter(({ date }) => isTradingDay(assetClass, date));
  const sessionIndex = [1];
  for (const { return: r } of sessions) sessionIndex.push(sessionIndex.at(-1)! * (1 + r));

  const costs: FillCost[] = fills.map((fill) => ({ symbol: fill.symbol, fee: fixedPointOf(fill.fee), tax: fixedPointOf(fill.tax) }));
  const { gains, ...totals } = resultsOf(closedInRange, open, costs, priceOf);
  const symbols = [...new Set([...closedInRange, ...open, ...fills].map((row) => row.symbol))].sort();
  const by_symbol: TSymbolPerformance[] = symbols.map((symbol) => {
    const { gains: _gains, ...results } = resultsOf(
      closedInRange.filter((lot) => lot.symbol === symbol),
      open.filter((lot) => lot.symbol === symbol),
      costs.filter((fill) => fill.symbol === symbol),
      priceOf,
    );
    return { symbol, ...results };
  });
  return {
    from,
    to,
    time_weighted_return: index.at(-1)! - 1,
    ...totals,
    max_drawdown_pct: maxDrawdown(index),
    sharpe_ratio: sharpeRatio(sessionIndex, periodsPerYearOf(assetClass)),
    profit_factor: profitFactor(gains),
    by_symbol,
    daily,
    weekly: chainedBy(daily, isoWeekOf, 'week'),
    monthly: chainedBy(daily, (day) => day.slice(0, 7), 'month'),
  };
};
