// The bot's bars: which bar an instant belongs to (a UTC minute, or the exchange's local day, as
// daily bars are dated), the bar a stream of ticks builds, and the closed bars as the typed
// arrays a strategy reads. Pure: no clock, no database.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TBotTimeframe } from '../../contracts/bot.ts';
import { ExactDecimal } from '../decimal.ts';
import { localDateTimeOf } from '../markets/zoned.ts';
import type { Bars } from '../backtest/types.ts';

/** A bar as the bot keeps it: its start (the minute, or midnight UTC of the local date) and exact prices. */
export interface BuiltBar {
  start: Date;
  open: string;
  high: string;
  low: string;
  close: string;
}

const MINUTE_MS = 60_000;
const TIME_ZONE: Record<TAssetClass, string> = { crypto: 'UTC', us_equity: 'America/New_York', kr_equity: 'Asia/Seoul' };

/** The local date a daily bar of the asset class carries for an instant. */
export const barDateOf = (assetClass: TAssetClass, at: Date): string => localDateTimeOf(at, TIME_ZONE[assetClass]).date;

/** The start of the bar `at` falls in: its UTC minute, or its local date written as midnight UTC. */
export const barStartOf = (timeframe: TBotTimeframe, assetClass: TAssetClass, at: Date): Date =>
  timeframe === '1m' ? new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS) : new Date(`${barDateOf(assetClass, at)}T00:00:00.000Z`);

/** Builds one bar at a time from ticks; a tick of a later bar closes the current one. */
export interface BarBuilder {
  /** The bar in progress, if a tick came since the last close. */
  current(): BuiltBar | undefined;
  /**
   * Adds a tick. Returns the bar it closed when the tick opens a later bar. A tick of a bar
   * already closed (a late delivery) is ignored: a closed bar never changes.
   */
  add(price: string, at: Date): BuiltBar | undefined;
}

export const createBarBuilder = ({ timeframe, assetClass, after }: { timeframe: TBotTimeframe; assetClass: TAssetClass; after?: Date | undefined }): BarBuilder => {
  let current: BuiltBar | undefined;
  /** Bars up to this start are closed (restored history included). */
  let closedUpTo = after?.getTime() ?? Number.NEGATIVE_INFINITY;
  return {
    current: () => current,
    add: (price, at) => {
      const start = barStartOf(timeframe, assetClass, at);
      if (start.getTime() <= closedUpTo) return undefined;
      if (!current) {
        current = { start, open: price, high: price, low: price, close: price };
        return undefined;
      }
      if (start.getTime() < current.start.getTime()) return undefined;
      if (start.getTime() === current.start.getTime()) {
        const value = new ExactDecimal(price);
        if (value.gt(current.high)) current.high = price;
        if (value.lt(current.low)) current.low = price;
        current.close = price;
        return undefined;
      }
      const closed = current;
      closedUpTo = closed.start.getTime();
      current = { start, open: price, high: price, low: price, close: price };
      return closed;
    },
  };
};

/** Closed bars, oldest first, as a strategy's typed arrays. */
export const toBars = (history: readonly BuiltBar[]): Bars => {
  const n = history.length;
  const bars = { length: n, dates: history.map((bar) => bar.start.toISOString()), open: new Float64Array(n), high: new Float64Array(n), low: new Float64Array(n), close: new Float64Array(n), volume: new Float64Array(n) };
  history.forEach((bar, i) => {
    bars.open[i] = Number(bar.open);
    bars.high[i] = Number(bar.high);
    bars.low[i] = Number(bar.low);
    bars.close[i] = Number(bar.close);
  });
  return bars;
};
