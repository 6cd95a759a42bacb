// The backtest engine: one strategy over one instrument's daily bars. A signal at a bar's close
// fills at the next bar's open, long-only, each entry spending `size` of the cash; every fill is
// priced by the same fill model as the simulated broker (fills.ts: slippage, the tick grid, the
// profile's fees and taxes); the equity is marked at every close; a position still open after
// the last bar is sold at the last close and counted as a round trip. Optional exits
// (stop-loss, take-profit, trailing stop: exits.ts) close a held position within a bar, priced
// by the same fill model.
//
// Fast path: the bars are typed arrays, the indicators are computed once per run, and the loop
// allocates nothing per bar. Cash and units are exact, touched only at fills (ledger.ts: scaled
// integers while they fit, decimals after); the equity marks are floats (a product per bar,
// never a running float sum).
import type { Decimal } from 'decimal.js';
import type { FeeProfile } from '../brokers/fees.ts';
import { END, exitWatchOf, SIGNAL, TAKE_PROFIT, type ExitRules } from './exits.ts';
import { BOUGHT, decimalLedger, FillLog, scaledLedger, UNSURE, type EngineFill, type Ledger, type TEngineTick } from './ledger.ts';
import { TripLog } from './trip-log.ts';
import type { Bars, BarView, Lookback, RoundTrip, StrategyRun, TSignal } from './types.ts';

export type { EngineFill, TEngineTick } from './ledger.ts';

export interface EngineInput {
  bars: Bars;
  strategy: StrategyRun;
  /** The fraction of the cash each entry spends (0 < size <= 1). */
  size: number;
  initialCapital: Decimal.Value;
  profile: FeeProfile;
  /** The instrument's tick, 'krx_bands' for the KRX band table, or another rule giving it at a price. */
  tickSize: TEngineTick;
  /** Fractional units (US stocks, crypto) or whole shares (KRX). */
  fractional: boolean;
  /** Price every fill in decimals, skipping the scaled ledger (the tests compare the two). */
  decimalOnly?: boolean;
  /**
   * Bars at the start that only warm the indicators (default 0): no signal is taken on them, so
   * nothing trades before the first bar after them, and the curve, the fills and the round
   * trips count bars from there (index 0 is the first bar after the warm-up).
   */
  warmup?: number;
  /**
   * Later strategies of the same run, oldest first (walk-forward's test windows): each takes
   * over at the close before its first bar, so it makes the decision that fills at that bar's
   * open, with the position and the cash as they are.
   */
  switches?: readonly StrategySwitch[];
  /** Exits of every position, whichever strategy bought it (none by default). */
  exits?: ExitRules | undefined;
}

export interface StrategySwitch {
  /** The first bar it trades on, counted as the curve is (0 is the first bar after the warm-up); at least 1. */
  at: number;
  strategy: StrategyRun;
  /** Bars before that close its indicators are built on (its warm-up, fewer when fewer are there). */
  warmup: number;
}

export interface EngineResult {
  /** Equity at every close after the warm-up (the last one after the close-out, if any). */
  equity: Float64Array;
  /** Every fill, oldest first (made when read: firstFills makes only those an answer shows). */
  readonly fills: EngineFill[];
  readonly fillCount: number;
  firstFills(count: number): EngineFill[];
  /** Every round trip, oldest first (made when read, as the fills are). */
  readonly trips: RoundTrip[];
  /** Each round trip's cash result, oldest first: what the metrics read, without making the trips. */
  readonly tripPnls: Float64Array;
  /** Why each round trip ended, oldest first: indices of TRADE_REASONS (its sell fill is the trip's). */
  readonly tripExits: Uint8Array;
  finalCapital: string;
}

/** A read-only window on one array at the engine's cursor: back 0 is the current bar, never a later one. */
const lookbackOf = (values: Float64Array, cursor: { i: number }, offset = 0): Lookback => {
  return (back = 0) => {
    // `values` starts at bar `offset` (an indicator rebuilt on a later strategy's warm-up).
    const k = cursor.i - offset - back;
    // back < 0 would be the future, a fraction no bar at all: both read nothing. k is an integer
    // from 0 to the cursor exactly when back is one from 0 to the cursor (and never when NaN).
    return k >= 0 && k <= cursor.i - offset && (k | 0) === k ? values[k]! : Number.NaN;
  };
};

/** The strategy's indicators as lookbacks, computed on the bars from `offset` on. */
const indicatorsOf = (strategy: StrategyRun, bars: Bars, cursor: { i: number }, offset: number): Record<string, Lookback> => {
  const from = offset === 0 ? bars : barsAfter(bars, offset);
  const ind: Record<string, Lookback> = {};
  for (const [key, indicator] of Object.entries(strategy.indicators)) ind[key] = lookbackOf(indicator.compute(from), cursor, offset);
  return ind;
};

/** The bars from `offset` on, as views. */
const barsAfter = (bars: Bars, offset: number): Bars => ({
  length: bars.length - offset,
  dates: bars.dates.slice(offset),
  open: bars.open.subarray(offset),
  high: bars.high.subarray(offset),
  low: bars.low.subarray(offset),
  close: bars.close.subarray(offset),
  volume: bars.volume.subarray(offset),
});

/** What a run's fills change: the ledger (replaced at a hand-over), the fills and the round trips. */
interface Book {
  input: EngineInput;
  ledger: Ledger;
  fills: FillLog;
  trips: TripLog;
  entryIndex: number;
}

const buyAt = (book: Book, index: number, reference: number): void => {
  let outcome = book.ledger.buy(index, reference, book.fills);
  if (outcome === UNSURE) {
    // The scaled ledger cannot be sure of this fill: the decimal one takes over from here.
    book.ledger = decimalLedger(book.input, book.ledger.state());
    outcome = book.ledger.buy(index, reference, book.fills);
  }
  if (outcome === BOUGHT) book.entryIndex = index;
};

/** Sells everything held at the reference (never below `limit`, 0 for none), the trip ending for `exit` (a TRADE_REASONS index). */
const sellAt = (book: Book, index: number, reference: number, limit: number, exit: number): void => {
  let pnl = book.ledger.sell(index, reference, book.fills, limit);
  if (Number.isNaN(pnl)) {
    book.ledger = decimalLedger(book.input, book.ledger.state());
    pnl = book.ledger.sell(index, reference, book.fills, limit);
  }
  book.trips.add(book.entryIndex, index, pnl, exit);
};

// The pending order between a signal at a close and its fill at the next open.
const HOLD = 0;
const BUY = 1;
const SELL = 2;

export const runEngine = (input: EngineInput): EngineResult => {
  const { bars, strategy } = input;
  const n = bars.length;
  const close = bars.close;
  const open = bars.open;
  const high = bars.high;
  const low = bars.low;
  const warmup = Math.min(Math.max(0, input.warmup ?? 0), n);
  const equity = new Float64Array(n - warmup);

  const cursor = { i: 0 };
  const ind = indicatorsOf(strategy, bars, cursor, 0);
  let deciding = strategy;
  const switches = input.switches ?? [];
  let nextSwitch = 0;
  const view: { -readonly [K in keyof BarView<string>]: BarView<string>[K] } = {
    index: 0,
    inPosition: false,
    open: lookbackOf(bars.open, cursor),
    high: lookbackOf(bars.high, cursor),
    low: lookbackOf(bars.low, cursor),
    close: lookbackOf(bars.close, cursor),
    volume: lookbackOf(bars.volume, cursor),
    ind,
  };

  const book: Book = { input, ledger: (!input.decimalOnly && scaledLedger(input)) || decimalLedger(input), fills: new FillLog(), trips: new TripLog(), entryIndex: -1 };
  // The ledger's cash and units as numbers, read again only after a fill.
  let cash = book.ledger.cashNumber;
  let units = 0;
  let pending = HOLD;
  // Decided once: a run without exits never enters their branch (one test of a constant per bar).
  const watch = exitWatchOf(input.exits, input.profile, input.tickSize);
  const exiting = watch !== undefined;
  for (let i = warmup; i < n; i++) {
    cursor.i = i;
    // Yesterday's signal fills at today's open.
    if (pending !== HOLD) {
      if (pending === BUY) buyAt(book, i - warmup, open[i]!);
      else sellAt(book, i - warmup, open[i]!, 0, SIGNAL);
      cash = book.ledger.cashNumber;
      units = book.ledger.unitsNumber;
      // A new position's exits, from its fill price (a sell's leaves units at 0).
      if (exiting && units > 0) watch.arm(book.ledger.entryPrice);
      pending = HOLD;
    }
    if (exiting && units > 0) {
      // The exits against this bar, its entry's bar included. An open at or beyond a level is
      // known to come first and fills there (a gap: a stop at the open, worse than the stop; a
      // take-profit at the open, better). Within the bar the order of the high and the low is
      // unknown: a bar that reaches both the stop and the take-profit fills the stop (the
      // pessimistic rule). A take-profit is a sell limit at its price, as the simulator's.
      const { stop, target } = watch;
      const o = open[i]!;
      let reference = 0;
      let limit = 0;
      let exit = SIGNAL;
      if (o <= stop) {
        reference = o;
        exit = watch.stopReason;
      } else if (o >= target) {
        reference = o;
        limit = target;
        exit = TAKE_PROFIT;
      } else if (low[i]! <= stop) {
        reference = stop;
        exit = watch.stopReason;
      } else if (high[i]! >= target) {
        reference = target;
        limit = target;
        exit = TAKE_PROFIT;
      }
      if (exit !== SIGNAL) {
        sellAt(book, i - warmup, reference, limit, exit);
        cash = book.ledger.cashNumber;
        units = 0;
      } else watch.passed(high[i]!);
    }
    equity[i - warmup] = cash + units * close[i]!;
    view.index = i - warmup;
    view.inPosition = units > 0;
    // The next strategy decides from the close before its first bar, on indicators rebuilt on its own warm-up.
    const due = switches[nextSwitch];
    if (due && i === due.at + warmup - 1) {
      deciding = due.strategy;
      view.ind = indicatorsOf(due.strategy, bars, cursor, Math.max(0, i - due.warmup));
      nextSwitch++;
    }
    const signal: TSignal = deciding.decide(view);
    if (signal === 'buy') {
      if (units === 0) pending = BUY;
    } else if (signal === 'sell' && units > 0) pending = SELL;
  }
  // What is still held is sold at the last close, and the last mark is the cash it leaves.
  if (n > warmup && units > 0) {
    sellAt(book, n - 1 - warmup, close[n - 1]!, 0, END);
    equity[n - 1 - warmup] = book.ledger.cashNumber;
  }
  const log = book.fills;
  const tripLog = book.trips;
  let fills: EngineFill[] | undefined;
  let trips: RoundTrip[] | undefined;
  return {
    equity,
    get fills() {
      return (fills ??= log.list());
    },
    fillCount: log.count,
    firstFills: (count: number) => log.list(count),
    get trips() {
      return (trips ??= tripLog.list());
    },
    tripPnls: tripLog.pnls(),
    tripExits: tripLog.exits(),
    finalCapital: book.ledger.finalCapital(),
  };
};
