// The backtest engine: one strategy over one instrument's daily bars. A signal at a bar's close
// fills at the next bar's open, long-only, each entry spending `size` of the cash; every fill is
// priced by the same fill model as the simulated broker (fills.ts: slippage, the tick grid, the
// profile's fees and taxes); the equity is marked at every close; a position still open after
// the last bar is sold at the last close and counted as a round trip.
//
// Fast path: the bars are typed arrays, the indicators are computed once per run, and the loop
// allocates nothing per bar. Cash and units are exact decimals, touched only at fills; the
// equity marks are floats (a product per bar, never a running float sum).
import type { Decimal } from 'decimal.js';
import type { FeeProfile } from '../brokers/fees.ts';
import { computeFill, executionPrice, ExactDecimal, FRACTIONAL_SHARE_DECIMALS, type Fill, type TTickSizeAt } from '../brokers/fills.ts';
import type { Bars, BarView, Lookback, RoundTrip, StrategyRun, TSignal } from './types.ts';

export interface EngineInput {
  bars: Bars;
  strategy: StrategyRun;
  /** The fraction of the cash each entry spends (0 < size <= 1). */
  size: number;
  initialCapital: Decimal.Value;
  profile: FeeProfile;
  /** The instrument's tick, or its rule (KRX bands). */
  tickSize: Decimal | TTickSizeAt;
  /** Fractional units (US stocks, crypto) or whole shares (KRX). */
  fractional: boolean;
}

export interface EngineFill {
  /** The bar whose open (or, for the final close-out, close) it filled at. */
  index: number;
  side: 'buy' | 'sell';
  /** Exact decimals, turned into text or numbers only for the fills an answer shows. */
  qty: Decimal;
  price: Decimal;
  fee: Decimal;
}

export interface EngineResult {
  /** Equity at every close (the last one after the close-out, if any). */
  equity: Float64Array;
  fills: EngineFill[];
  trips: RoundTrip[];
  finalCapital: string;
}

const ZERO = new ExactDecimal(0);

/** A read-only window on one array at the engine's cursor: back 0 is the current bar, never a later one. */
const lookbackOf = (values: Float64Array, cursor: { i: number }): Lookback => {
  return (back = 0) => {
    const k = cursor.i - back;
    // back < 0 would be the future, a fraction no bar at all: both read nothing.
    return back >= 0 && k >= 0 && Number.isInteger(back) ? values[k]! : Number.NaN;
  };
};

/**
 * The largest quantity whose cost (price and commission) fits the budget: whole shares, or
 * fractional units cut to FRACTIONAL_SHARE_DECIMALS, never rounded up.
 */
const affordableQty = (budget: Decimal, price: Decimal, profile: FeeProfile, fractional: boolean): Decimal => {
  const raw = budget.dividedBy(price.times(profile.commissionRate.plus(1)));
  return fractional ? raw.toDecimalPlaces(FRACTIONAL_SHARE_DECIMALS, ExactDecimal.ROUND_DOWN) : raw.floor();
};

export const runEngine = (input: EngineInput): EngineResult => {
  const { bars, strategy, profile, tickSize, fractional } = input;
  const n = bars.length;
  const equity = new Float64Array(n);
  const fills: EngineFill[] = [];
  const trips: RoundTrip[] = [];
  const size = new ExactDecimal(input.size);

  const cursor = { i: 0 };
  const ind: Record<string, Lookback> = {};
  for (const [key, indicator] of Object.entries(strategy.indicators)) ind[key] = lookbackOf(indicator.compute(bars), cursor);
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

  let cash = new ExactDecimal(input.initialCapital);
  let units = ZERO;
  // Float mirrors for the per-bar mark; refreshed from the decimals at every fill.
  let cashNumber = cash.toNumber();
  let unitsNumber = 0;
  let entryIndex = -1;
  let entryCash: Decimal = ZERO;

  const record = (index: number, fill: Fill) => {
    cash = cash.plus(fill.cashDelta);
    cashNumber = cash.toNumber();
    fills.push({ index, side: fill.side, qty: fill.qty, price: fill.price, fee: fill.fee });
  };
  const buy = (index: number, reference: number) => {
    const referencePrice = new ExactDecimal(reference);
    const price = executionPrice({ side: 'buy', referencePrice, tickSize, profile });
    const qty = affordableQty(cash.times(size), price, profile, fractional);
    if (qty.lte(0)) return;
    const fill = computeFill({ side: 'buy', qty, referencePrice, tickSize, profile }, price);
    record(index, fill);
    units = qty;
    unitsNumber = qty.toNumber();
    entryIndex = index;
    entryCash = fill.cashDelta;
  };
  const sell = (index: number, reference: number) => {
    const fill = computeFill({ side: 'sell', qty: units, referencePrice: new ExactDecimal(reference), tickSize, profile });
    record(index, fill);
    trips.push({ entryIndex, exitIndex: index, pnl: entryCash.plus(fill.cashDelta).toNumber() });
    units = ZERO;
    unitsNumber = 0;
  };

  let pending: TSignal = 'hold';
  for (let i = 0; i < n; i++) {
    cursor.i = i;
    // Yesterday's signal fills at today's open.
    if (pending === 'buy') buy(i, bars.open[i]!);
    else if (pending === 'sell') sell(i, bars.open[i]!);
    equity[i] = cashNumber + unitsNumber * bars.close[i]!;
    view.index = i;
    view.inPosition = unitsNumber > 0;
    const signal = strategy.decide(view);
    pending = signal === 'buy' && unitsNumber === 0 ? 'buy' : signal === 'sell' && unitsNumber > 0 ? 'sell' : 'hold';
  }
  // What is still held is sold at the last close, and the last mark is the cash it leaves.
  if (n > 0 && unitsNumber > 0) {
    sell(n - 1, bars.close[n - 1]!);
    equity[n - 1] = cashNumber;
  }
  return { equity, fills, trips, finalCapital: cash.toFixed() };
};
