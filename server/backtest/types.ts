// The shapes the backtest engine, its strategies and its metrics share. A strategy never sees
// the bar arrays: it declares causal indicators (built by indicators.ts from the bars up to each
// index) and decides bar by bar through a view whose reads go back in time only, so no strategy
// can look ahead, whatever it tries.
import type { z } from 'zod';
import type { TAssetClass } from '../../contracts/common.ts';

/** Daily bars of one instrument, oldest first, in typed arrays (one index per bar). */
export interface Bars {
  readonly length: number;
  /** 'YYYY-MM-DD' of each bar. */
  readonly dates: readonly string[];
  readonly open: Float64Array;
  readonly high: Float64Array;
  readonly low: Float64Array;
  readonly close: Float64Array;
  readonly volume: Float64Array;
}

export type TBarField = 'open' | 'high' | 'low' | 'close' | 'volume';

/**
 * A causal indicator: computes, from the bars, one value per index that depends only on bars at
 * or before that index (NaN until it has enough history). Only indicators.ts makes these.
 */
export interface Indicator {
  readonly name: string;
  compute(bars: Bars): Float64Array;
}

/**
 * A series as a strategy reads it at the current bar: `back` 0 is the current bar, 1 the bar
 * before, and so on. A negative `back`, or one before the first bar, reads NaN: there is no
 * way to ask for a later bar.
 */
export type Lookback = (back?: number) => number;

/** What a strategy sees at the current bar. */
export interface BarView<TKeys extends string> {
  /** The current bar's index (0 is the first bar of the run). */
  readonly index: number;
  /** Whether the run holds a position now. */
  readonly inPosition: boolean;
  readonly open: Lookback;
  readonly high: Lookback;
  readonly low: Lookback;
  readonly close: Lookback;
  readonly volume: Lookback;
  /** The strategy's indicators, by the names it declared. */
  readonly ind: Readonly<Record<TKeys, Lookback>>;
}

/** At a bar's close: enter long (when flat), exit (when long), or do nothing. */
export type TSignal = 'buy' | 'sell' | 'hold';

/** One run's strategy: its indicators, and the decision at each close. */
export interface StrategyRun<TKeys extends string = string> {
  readonly indicators: Readonly<Record<TKeys, Indicator>>;
  decide(view: BarView<TKeys>): TSignal;
}

/**
 * A registered strategy: a lower-case name, a description, a strict zod object for its params
 * (every field with its default and bounds; an unknown key is refused), the asset classes it
 * suits, and `create`, which builds one run from validated params.
 */
export interface StrategyDefinition<TParams extends Record<string, unknown> = Record<string, unknown>> {
  readonly name: string;
  readonly description: string;
  readonly params: z.ZodType<TParams, Record<string, unknown>>;
  readonly assetClasses: readonly TAssetClass[];
  /**
   * Bars its indicators need before the first bar it trades on (its longest lookback; three
   * spans for EMA-based ones, seeded by an SMA): a backtest reads up to that many before
   * `start_date`, and the bot as many before today.
   */
  warmup(params: TParams): number;
  create(params: TParams): StrategyRun;
}

/** One closed round trip (the position closed at the end of the run included). */
export interface RoundTrip {
  entryIndex: number;
  exitIndex: number;
  /** Cash in at the exit minus cash out at the entry: fees and taxes included. */
  pnl: number;
}
