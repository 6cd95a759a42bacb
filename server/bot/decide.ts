// The bot's decision at a closed bar, by the backtest's rule: the registered strategy's causal
// indicators over the closed bars, read through look-back views whose newest value is the bar
// that just closed (no later bar exists to read), and how much a buy spends. Pure.
import type { Decimal } from 'decimal.js';
import { roundDownToLot } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import type { Bars, BarView, Lookback, StrategyRun, TSignal } from '../backtest/types.ts';

const lookbackOf = (values: Float64Array): Lookback => {
  const last = values.length - 1;
  return (back = 0) => {
    const k = last - back;
    return back >= 0 && k >= 0 && Number.isInteger(back) ? values[k]! : Number.NaN;
  };
};

/**
 * What the strategy says at the close of the newest bar: buy (when flat), sell (when long) or
 * hold, as the backtest engine reads it at the same bar.
 */
export const decideAtClose = (strategy: StrategyRun, bars: Bars, inPosition: boolean): TSignal => {
  if (bars.length === 0) return 'hold';
  const ind: Record<string, Lookback> = {};
  for (const [key, indicator] of Object.entries(strategy.indicators)) ind[key] = lookbackOf(indicator.compute(bars));
  const view: BarView<string> = {
    index: bars.length - 1,
    inPosition,
    open: lookbackOf(bars.open),
    high: lookbackOf(bars.high),
    low: lookbackOf(bars.low),
    close: lookbackOf(bars.close),
    volume: lookbackOf(bars.volume),
    ind,
  };
  const signal = strategy.decide(view);
  if (signal === 'buy' && !inPosition) return 'buy';
  if (signal === 'sell' && inPosition) return 'sell';
  return 'hold';
};

export interface BuySizing {
  /** The account's cash free to spend (buying power) and its equity. */
  buyingPower: Decimal.Value;
  equity: Decimal.Value;
  /** The latest price of the symbol. */
  price: Decimal.Value;
  /** The strategy's `size`: the fraction of the cash an entry spends. */
  size: number;
  /** The risk manager's sizing rule: risk = notional × default stop %, at most max risk % of equity. */
  defaultStopPct: Decimal.Value;
  maxRiskPerTradePct: Decimal.Value;
  lotSize: Decimal.Value;
  fractional: boolean;
}

/**
 * Room left under both limits for slippage and fees, so the bot's buy is not refused by the
 * funds or sizing checks it was sized to pass.
 */
const HEADROOM = new ExactDecimal('0.98');

/**
 * The quantity of a buy: `size` of the buying power, cut to what the risk manager's sizing rule
 * allows (equity × max risk % / default stop %), kept under both by a little, and rounded down
 * to the instrument's lot (whole units where it trades no fractions). Zero when nothing fits.
 */
export const buyQuantity = (sizing: BuySizing): Decimal => {
  const price = new ExactDecimal(sizing.price);
  if (!price.isFinite() || price.lte(0)) return new ExactDecimal(0);
  const byCash = new ExactDecimal(sizing.buyingPower).times(sizing.size);
  const byRisk = new ExactDecimal(sizing.equity).times(sizing.maxRiskPerTradePct).div(sizing.defaultStopPct);
  const budget = ExactDecimal.min(byCash, byRisk).times(HEADROOM);
  if (budget.lte(0)) return new ExactDecimal(0);
  return roundDownToLot(budget.div(price), sizing.lotSize, sizing.fractional);
};
