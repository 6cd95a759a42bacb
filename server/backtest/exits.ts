// A run's exits (stop-loss, take-profit, trailing stop, in percent) and their prices on the
// run's tick grid while a position is held. The engine asks at each held bar whether the bar
// reaches them; the fill itself goes through the ledger like every other fill.
import type { Decimal } from 'decimal.js';
import type { FeeProfile } from '../brokers/fees.ts';
import { executionPrice, pow10, scaledFillModel, type ScaledFillModel, type TOrderSide, type TTickSizeAt } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import { TRADE_REASONS } from '../../contracts/backtest.ts';
import { tickGridOf, tickRuleOf, type TEngineTick } from './ledger.ts';

/** The exits of a run, each in percent; undefined is none. */
export interface ExitRules {
  /** Below the entry's fill price (0 < p < 100). */
  stopLossPct?: number | undefined;
  /** Above the entry's fill price (0 < p <= 1000). */
  takeProfitPct?: number | undefined;
  /** Below the highest high since the entry, the entry's fill price seeding it (0 < p <= 50). */
  trailPct?: number | undefined;
}

// Why a round trip ended, as codes (the trip log's column): indices of the contract's
// TRADE_REASONS, which names them on the wire.
export const SIGNAL = TRADE_REASONS.indexOf('signal');
export const END = TRADE_REASONS.indexOf('end');
export const STOP_LOSS = TRADE_REASONS.indexOf('stop_loss');
export const TRAIL = TRADE_REASONS.indexOf('trail');
export const TAKE_PROFIT = TRADE_REASONS.indexOf('take_profit');

/**
 * One percent's price from a base, on the grid: a stop's base × (1 − p/100) rounded down, a
 * target's base × (1 + p/100) rounded up. That is what the fill model's executionPrice does to
 * a reference with the percent as its slippage (a sell's down, a buy's up), so it is that
 * function (its scaled twin first, its decimal self when the twin cannot be sure) with a profile
 * of that slippage: the same grid, the same rounding, no second copy of either. Rounding away
 * from the position never makes an exit tighter than asked: a stop never triggers above its
 * percent, a take-profit never sells below its own.
 */
class ExitLevel {
  private readonly side: TOrderSide;
  private readonly profile: FeeProfile;
  private readonly tick: Decimal | TTickSizeAt;
  private readonly model: ScaledFillModel | undefined;
  private readonly pricePow: number;

  constructor(direction: 'below' | 'above', pct: number, runProfile: FeeProfile, tick: TEngineTick) {
    this.side = direction === 'below' ? 'sell' : 'buy';
    const zero = new ExactDecimal(0);
    this.profile = { ...runProfile, commissionRate: zero, sellTaxRate: zero, slippageRate: new ExactDecimal(pct).dividedBy(100) };
    this.tick = tickRuleOf(tick);
    const grid = tickGridOf(tick);
    this.model = grid && scaledFillModel(this.profile, grid);
    this.pricePow = this.model ? pow10(this.model.priceScale) : Number.NaN;
  }

  /** The level from `base`; a stop below one tick is -Infinity (no positive price reaches it). */
  from(base: number): number {
    const units = this.model ? this.model.price(this.side, base) : Number.NaN;
    if (!Number.isNaN(units)) return units / this.pricePow;
    try {
      return executionPrice({ side: this.side, referencePrice: new ExactDecimal(base), tickSize: this.tick, profile: this.profile }).toNumber();
    } catch {
      // executionPrice refuses a price that rounds to zero: only a stop below one tick can.
      return Number.NEGATIVE_INFINITY;
    }
  }
}

/**
 * The exits of the position held, as prices for the current bar. `arm` at the entry's fill;
 * `passed` after each held bar that no exit closed, whose high may raise the trail for the next
 * bar (never for its own: within a bar the order of its high and low is unknown).
 *
 * The trail's high-water mark is seeded with the entry's fill price: on the entry's bar the
 * trailing stop is entry × (1 − trail/100), and from the bar after it the highest of that price
 * and every high since (the entry's bar's included). A class, so the engine's loop reads plain
 * fields; nothing here allocates.
 */
export class ExitWatch {
  /** The effective stop (the higher of the stop-loss and the trail); -Infinity for none. */
  stop = Number.NEGATIVE_INFINITY;
  /** STOP_LOSS or TRAIL: which one `stop` is (the stop-loss when they are equal). */
  stopReason = STOP_LOSS;
  /** The take-profit; +Infinity for none. */
  target = Number.POSITIVE_INFINITY;
  private fixedStop = Number.NEGATIVE_INFINITY;
  private highWater = 0;
  private readonly stopLoss: ExitLevel | undefined;
  private readonly trail: ExitLevel | undefined;
  private readonly takeProfit: ExitLevel | undefined;

  constructor(rules: ExitRules, profile: FeeProfile, tick: TEngineTick) {
    this.stopLoss = rules.stopLossPct === undefined ? undefined : new ExitLevel('below', rules.stopLossPct, profile, tick);
    this.trail = rules.trailPct === undefined ? undefined : new ExitLevel('below', rules.trailPct, profile, tick);
    this.takeProfit = rules.takeProfitPct === undefined ? undefined : new ExitLevel('above', rules.takeProfitPct, profile, tick);
  }

  /** A new position bought at `entryPrice` (its fill's execution price). */
  arm(entryPrice: number): void {
    this.fixedStop = this.stopLoss ? this.stopLoss.from(entryPrice) : Number.NEGATIVE_INFINITY;
    this.target = this.takeProfit ? this.takeProfit.from(entryPrice) : Number.POSITIVE_INFINITY;
    this.highWater = entryPrice;
    this.setStop(this.trail ? this.trail.from(entryPrice) : Number.NEGATIVE_INFINITY);
  }

  /** A held bar closed by no exit: a new high raises the trail (from the next bar on). */
  passed(high: number): void {
    if (this.trail !== undefined && high > this.highWater) {
      this.highWater = high;
      this.setStop(this.trail.from(high));
    }
  }

  private setStop(trailStop: number): void {
    if (trailStop > this.fixedStop) {
      this.stop = trailStop;
      this.stopReason = TRAIL;
    } else {
      this.stop = this.fixedStop;
      this.stopReason = STOP_LOSS;
    }
  }
}

/** The run's exit watch, or undefined when it has no exit (the engine then does no exit work at all). */
export const exitWatchOf = (rules: ExitRules | undefined, profile: FeeProfile, tick: TEngineTick): ExitWatch | undefined =>
  rules && (rules.stopLossPct !== undefined || rules.takeProfitPct !== undefined || rules.trailPct !== undefined) ? new ExitWatch(rules, profile, tick) : undefined;
