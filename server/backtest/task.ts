// Backtest runs as plain data, so that they run on the event loop or in a worker thread alike:
// a job is the bars (without their dates, which only the answer needs), the money settings, and
// one or more strategy runs over those bars (a sweep sends a share of its grid as one job, so the
// bars cross to a worker once per job, not once per point). Outcomes are plain data too: a run's
// whole outcome (curve, round trips, fills) for an answer that shows them, or only its summary
// (metrics worked out where it ran) for a sweep, which ranks by them and shows nothing else.
import { MAX_TRADES, TRADE_REASONS, type TTradeReason } from '../../contracts/backtest.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { profileByName } from '../brokers/fees.ts';
import { runEngine, type EngineResult, type StrategySwitch } from './engine.ts';
import type { ExitRules } from './exits.ts';
import { exactPriceGrid } from './price-grid.ts';
import { spanMetrics, type BacktestMetrics } from './metrics.ts';
import { findStrategy } from './strategies/index.ts';
import type { Bars, RoundTrip } from './types.ts';

/** The bars a run reads: the price arrays (dates stay with the caller). */
export type JobBars = Omit<Bars, 'dates'>;

export interface StrategyRunSpec {
  strategyName: string;
  /** Already validated by the strategy's schema. */
  params: Record<string, unknown>;
  size: number;
  /**
   * Later windows of the same run (walk-forward): from bar `at` of the range on (decided from the
   * close before it), the strategy runs with these params. The cash, the position and `size` carry on.
   */
  then?: { at: number; params: Record<string, unknown> }[];
}

export interface BacktestJob {
  /** The warm-up bars, then the range's. */
  bars: JobBars;
  /** How many bars at the start of `bars` come before the range (each run warms on as many of them as it needs). */
  warmup: number;
  initialCapital: string;
  profileName: string;
  fractional: boolean;
  /** Exits of every run of the job (none when absent). */
  exits?: ExitRules | undefined;
  runs: StrategyRunSpec[];
}

export interface TaskFill {
  index: number;
  side: 'buy' | 'sell';
  qty: number;
  price: number;
  fee: number;
  /** A sell's why: the strategy's signal, the end of the run, or an exit. */
  reason?: TTradeReason;
}

export interface TaskOutcome {
  equity: Float64Array;
  trips: RoundTrip[];
  /** The first MAX_TRADES fills. */
  fills: TaskFill[];
  fillCount: number;
  finalCapital: string;
}

/** What a run's metrics read besides its curve, round trips and closes: the bars' first and last dates, and the asset class. */
export interface MetricsSpan {
  startDate: string;
  endDate: string;
  assetClass: TAssetClass;
}

/** A run as a sweep ranks it: its metrics over the job's bars, and its exact final capital. */
export interface RunSummary {
  metrics: BacktestMetrics;
  finalCapital: string;
}

/** What the pool runs: every run's whole outcome, or every run's summary. */
export type TaskRequest = { kind: 'outcomes'; job: BacktestJob } | { kind: 'summaries'; job: BacktestJob; span: MetricsSpan };
export type TaskAnswer = TaskOutcome[] | RunSummary[];

/** Whether two validated param sets are the same (the same keys, each the same number or value). */
const sameParams = (a: Record<string, unknown>, b: Record<string, unknown>): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.is(a[key], b[key]));
};

/** The bars from `from` on, as views (no copy). */
export const barsFrom = (bars: Bars, from: number): Bars =>
  from === 0
    ? bars
    : { length: bars.length - from, dates: bars.dates.slice(from), open: bars.open.subarray(from), high: bars.high.subarray(from), low: bars.low.subarray(from), close: bars.close.subarray(from), volume: bars.volume.subarray(from) };

/** Each of the job's runs through the engine, one after another, in order, and what `answer` keeps of it. */
const eachRun = <TAnswer>(job: BacktestJob, answer: (result: EngineResult) => TAnswer): TAnswer[] => {
  const profile = profileByName(job.profileName);
  if (!profile) throw new Error(`unknown profile ${job.profileName}`);
  // Historical prices keep their precision: no fill is moved onto today's tick grid.
  const tickSize = exactPriceGrid(job.bars, profile);
  // The engine never reads dates; they are left behind so a job crosses to a worker lighter.
  const bars: Bars = { ...job.bars, dates: [] };
  return job.runs.map((spec) => {
    const strategy = findStrategy(spec.strategyName);
    if (!strategy) throw new Error(`unknown strategy ${spec.strategyName}`);
    // Each run warms on its own count of bars, no more, so a sweep's point is the single run of those params to the digit.
    const warmup = Math.min(job.warmup, strategy.warmup(spec.params));
    const switches: StrategySwitch[] = [];
    let params = spec.params;
    for (const next of spec.then ?? []) {
      // Unchanged params keep the strategy's state: the windows are then one run, to the digit.
      if (sameParams(params, next.params)) continue;
      params = next.params;
      switches.push({ at: next.at, strategy: strategy.create(params), warmup: strategy.warmup(params) });
    }
    return answer(runEngine({ bars: barsFrom(bars, job.warmup - warmup), warmup, strategy: strategy.create(spec.params), switches, size: spec.size, initialCapital: job.initialCapital, profile, tickSize, fractional: job.fractional, exits: job.exits }));
  });
};

/** The job's runs' whole outcomes, in order. */
export const runJob = (job: BacktestJob): TaskOutcome[] =>
  eachRun(job, (outcome) => {
    // Every sell ends the round trip of the same rank: the k-th sell's why is the k-th trip's.
    const exits = outcome.tripExits;
    let sells = 0;
    return {
      equity: outcome.equity,
      trips: outcome.trips,
      fills: outcome.firstFills(MAX_TRADES).map((fill): TaskFill => (fill.side === 'buy' ? { index: fill.index, side: fill.side, ...fill.numbers() } : { index: fill.index, side: fill.side, ...fill.numbers(), reason: TRADE_REASONS[exits[sells++]!]! })),
      fillCount: outcome.fillCount,
      finalCapital: outcome.finalCapital,
    };
  });

/** The job's runs' summaries over its range (the bars after the warm-up), in order: no curve, round trip or fill leaves the thread (or is made at all). */
export const summarizeJob = (job: BacktestJob, span: MetricsSpan): RunSummary[] => {
  const { close, length } = job.bars;
  const initialCapital = Number(job.initialCapital);
  return eachRun(job, (result) => ({
    metrics: spanMetrics({ initialCapital, equity: result.equity, tripPnls: result.tripPnls, firstClose: close[job.warmup]!, lastClose: close[length - 1]!, ...span }),
    finalCapital: result.finalCapital,
  }));
};

/** A job's bars from a run's bars: the same arrays, without the dates. */
export const jobBarsOf = ({ length, open, high, low, close, volume }: Bars): JobBars => ({ length, open, high, low, close, volume });
