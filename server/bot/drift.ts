// The drift report of a bot run (DESIGN §6 "Portfolio, performance and the ledger"): the bars the
// run decided on are replayed through the backtest engine with the run's strategy, params and
// fill model, and each of the engine's fills is lined up with the bot's own for the same decision
// (the bar whose close decided it, and the side): its time, price and fee, how far the bot's
// differs, and what that did to the return. Pure: the bot area reads the rows and calls it.
import type { Decimal } from 'decimal.js';
import type { TBotDrift, TBotDriftRow } from '../../contracts/bot.ts';
import type { FeeProfile } from '../brokers/fees.ts';
import { ExactDecimal } from '../decimal.ts';
import { runEngine, type EngineFill, type TEngineTick } from '../backtest/engine.ts';
import { END } from '../backtest/exits.ts';
import type { StrategyRun } from '../backtest/types.ts';
import { toBars, type BuiltBar } from './bars.ts';

/** One fill of the bot's order, as order_fills keeps it (none for an order that never filled). */
export interface LiveFillRow {
  clientOrderId: string;
  side: 'buy' | 'sell';
  barStart: Date;
  qty: string | null;
  price: string | null;
  fee: string | null;
  at: Date | null;
}

export interface DriftInput {
  bars: readonly BuiltBar[];
  /** How many of the bars closed before the run started: they only warm the indicators. */
  warmup: number;
  strategy: StrategyRun;
  size: number;
  profile: FeeProfile;
  tickSize: TEngineTick;
  fractional: boolean;
  live: readonly LiveFillRow[];
}

/** The engine's capital: the report compares prices and fees per unit, so any amount serves. */
const REPLAY_CAPITAL = '100000';
const ZERO = new ExactDecimal(0);
const HUNDRED = new ExactDecimal(100);

interface Side {
  side: 'buy' | 'sell';
  at: Date;
  qty: Decimal;
  /** The average price of the fills. */
  price: Decimal;
  fee: Decimal;
  clientOrderId?: string;
}

/** A decision's key: the bar whose close decided it, and the side. */
const keyOf = (barStart: Date, side: 'buy' | 'sell') => `${barStart.toISOString()}|${side}`;

/** The engine's fills by decision, the final close-out left out (the bot has none: its position stays). */
const replayed = (input: DriftInput): Map<string, Side> => {
  const { bars, warmup } = input;
  const result = runEngine({ bars: toBars(bars), warmup, strategy: input.strategy, size: input.size, initialCapital: REPLAY_CAPITAL, profile: input.profile, tickSize: input.tickSize, fractional: input.fractional });
  const fills: EngineFill[] = result.fills;
  const closedOut = result.tripExits.at(-1) === END;
  const byDecision = new Map<string, Side>();
  fills.forEach((fill, k) => {
    if (closedOut && k === fills.length - 1) return;
    const at = warmup + fill.index;
    const decided = bars[at - 1];
    if (!decided) return;
    byDecision.set(keyOf(decided.start, fill.side), { side: fill.side, at: bars[at]!.start, qty: fill.qty, price: fill.price, fee: fill.fee });
  });
  return byDecision;
};

/** The bot's orders by decision, each order's fills summed (its price their average); null for an order that never filled. */
const lived = (rows: readonly LiveFillRow[]): Map<string, Side | null> => {
  const byOrder = new Map<string, { row: LiveFillRow; fills: LiveFillRow[] }>();
  for (const row of rows) {
    const order = byOrder.get(row.clientOrderId) ?? { row, fills: [] };
    if (row.qty !== null) order.fills.push(row);
    byOrder.set(row.clientOrderId, order);
  }
  const byDecision = new Map<string, Side | null>();
  for (const { row, fills } of byOrder.values()) {
    const qty = fills.reduce((sum, fill) => sum.plus(fill.qty!), ZERO);
    const side: Side | null = qty.isZero()
      ? null
      : {
          side: row.side,
          at: fills[0]!.at!,
          qty,
          price: fills.reduce((sum, fill) => sum.plus(new ExactDecimal(fill.qty!).times(fill.price!)), ZERO).dividedBy(qty),
          fee: fills.reduce((sum, fill) => sum.plus(fill.fee!), ZERO),
          clientOrderId: row.clientOrderId,
        };
    byDecision.set(keyOf(row.barStart, row.side), side);
  }
  return byDecision;
};

/** The fee per unit of notional. */
const feeRate = (side: Side) => side.fee.dividedBy(side.qty.times(side.price));

/**
 * What one unit of a round trip returned, fees included: the sell's net per unit over the buy's
 * cost per unit. Trips pair each buy with the sell after it; an open one does not count.
 */
const tripsReturn = (sides: readonly Side[]): Decimal => {
  let growth = new ExactDecimal(1);
  let bought: Side | undefined;
  for (const side of sides) {
    if (side.side === 'buy') bought = side;
    else if (bought) {
      const cost = bought.price.plus(bought.fee.dividedBy(bought.qty));
      const net = side.price.minus(side.fee.dividedBy(side.qty));
      growth = growth.times(net.dividedBy(cost));
      bought = undefined;
    }
  }
  return growth.minus(1).times(HUNDRED);
};

const pct = (value: Decimal) => value.toDecimalPlaces(6).toNumber();
const fillOf = (side: Side) => ({ at: side.at.toISOString(), qty: side.qty.toNumber(), price: side.price.toNumber(), fee: side.fee.toNumber() });

/** One decision lined up, and its parts of the return gap (percentage points, a first-order account). */
interface LinedUp {
  row: TBotDriftRow;
  priceEffect: Decimal;
  feeEffect: Decimal;
}

/** One decision lined up: the two fills, their gaps, and what the bot's differences did to the return. */
const lineUp = (barStart: string, side: 'buy' | 'sell', backtest: Side | undefined, live: Side | null | undefined): LinedUp => {
  const base = { bar_start: barStart, side, backtest: backtest ? fillOf(backtest) : null, live: live ? { ...fillOf(live), client_order_id: live.clientOrderId! } : null };
  const unmatched = { price_gap_pct: null, fee_gap_pct: null, effect_pct: null };
  if (!backtest || !live) {
    const cause = live === null ? 'unfilled' : backtest ? 'missing_live' : 'extra_live';
    return { row: { ...base, cause, ...unmatched }, priceEffect: ZERO, feeEffect: ZERO };
  }
  const priceGap = live.price.dividedBy(backtest.price).minus(1).times(HUNDRED);
  const feeGap = feeRate(live).minus(feeRate(backtest)).times(HUNDRED);
  // A dearer buy or a cheaper sell costs the return; so does every point of fee.
  const priceEffect = side === 'buy' ? priceGap.negated() : priceGap;
  const feeEffect = feeGap.negated();
  const cause = !priceGap.isZero() ? 'price' : !feeGap.isZero() ? 'fee' : 'match';
  return { row: { ...base, cause, price_gap_pct: pct(priceGap), fee_gap_pct: pct(feeGap), effect_pct: pct(priceEffect.plus(feeEffect)) }, priceEffect, feeEffect };
};

/** The report's rows and figures (the run's own facts are the caller's). */
export const driftOf = (input: DriftInput): Omit<TBotDrift, 'run_id' | 'symbol' | 'strategy_name' | 'timeframe'> => {
  const backtest = replayed(input);
  const live = lived(input.live);
  const keys = [...new Set([...backtest.keys(), ...live.keys()])].sort();
  const linedUp = keys.map((key) => {
    const [barStart, side] = key.split('|') as [string, 'buy' | 'sell'];
    return lineUp(barStart, side, backtest.get(key), live.get(key));
  });
  const byTime = (a: Side, b: Side) => a.at.getTime() - b.at.getTime();
  const backtestReturn = tripsReturn([...backtest.values()].sort(byTime));
  const liveReturn = tripsReturn([...live.values()].filter((side): side is Side => side !== null).sort(byTime));
  const gap = liveReturn.minus(backtestReturn);
  const price = linedUp.reduce((sum, each) => sum.plus(each.priceEffect), ZERO);
  const fee = linedUp.reduce((sum, each) => sum.plus(each.feeEffect), ZERO);
  const rows = linedUp.map((each) => each.row);
  return {
    bars: input.bars.length - input.warmup,
    warmup_bars: input.warmup,
    backtest_return_pct: pct(backtestReturn),
    live_return_pct: pct(liveReturn),
    return_gap_pct: pct(gap),
    // What the prices and the fees of matched fills account for; the rest is trades one side made and the other did not.
    gap_by_cause: { price_pct: pct(price), fee_pct: pct(fee), trades_pct: pct(gap.minus(price).minus(fee)) },
    compared: rows.filter((row) => row.backtest && row.live).length,
    differing: rows.filter((row) => row.cause !== 'match').length,
    rows,
  };
};
