// The cash and units of one backtest run, and the fills that change them. Two ledgers keep them
// with the same exact arithmetic:
// - the decimal ledger: ExactDecimal through the fill model's computeFill, for any run;
// - the scaled ledger: integers in doubles at fixed scales through the fill model's scaled twin
//   (fills.ts), about a hundred times cheaper per fill, exact while every integer fits.
// A run starts on the scaled ledger when its settings fit one, and at the first fill the scaled
// ledger cannot be sure of (a value beyond 2^53 at its scale) it hands its exact state to a
// decimal ledger, which prices that fill and the rest of the run. Both give the same fills, cash
// and round trips to the last digit (test/unit/backtest-ledger.test.ts runs them side by side).
import type { Decimal } from 'decimal.js';
import type { FeeProfile } from '../brokers/fees.ts';
import {
  computeFill,
  decimalOfScaled,
  executionPrice,
  floorDiv,
  pow10,
  FRACTIONAL_SHARE_DECIMALS,
  scaledFillModel,
  scaledOfDecimal,
  scaledOfNumber,
  type Fill,
  type Scaled,
  type ScaledFillModel,
  type TTickGrid,
  type TTickSizeAt,
} from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import { KRX_TICK_BANDS, krxTickSize } from '../instruments/ticks.ts';
import { withRoom } from './column-growth.ts';

/** The instrument's tick, the KRX band table, or any other rule giving the tick at a price. */
export type TEngineTick = Decimal | 'krx_bands' | TTickSizeAt;

export interface LedgerSettings {
  initialCapital: Decimal.Value;
  /** The fraction of the cash each entry spends (0 < size <= 1). */
  size: number;
  profile: FeeProfile;
  tickSize: TEngineTick;
  /** Fractional units (cut to FRACTIONAL_SHARE_DECIMALS places) or whole shares. */
  fractional: boolean;
}

export interface EngineFill {
  /** The bar whose open (or, for the final close-out, close) it filled at. */
  readonly index: number;
  readonly side: 'buy' | 'sell';
  /** Exact decimals, turned into text or numbers only for the fills an answer shows. */
  readonly qty: Decimal;
  readonly price: Decimal;
  readonly fee: Decimal;
  /** qty, price and fee each rounded once to a double (Decimal's toNumber), without making the decimals. */
  numbers(): { qty: number; price: number; fee: number };
}

/** An EngineFill of the decimal ledger's amounts. */
const decimalFill = (index: number, side: 'buy' | 'sell', { qty, price, fee }: Fill): EngineFill => ({
  index,
  side,
  qty,
  price,
  fee,
  numbers: () => ({ qty: qty.toNumber(), price: price.toNumber(), fee: fee.toNumber() }),
});

/** What a buy did: bought, bought nothing (the budget affords no unit), or could not be sure (hand over). */
export const BOUGHT = 1;
export const BOUGHT_NOTHING = 0;
export const UNSURE = -1;
export type TBuyOutcome = typeof BOUGHT | typeof BOUGHT_NOTHING | typeof UNSURE;

export interface Ledger {
  /** The cash and the units held, each the exact value rounded once to a double (for the per-bar marks). */
  readonly cashNumber: number;
  readonly unitsNumber: number;
  /** The open position's buy price (its fill's execution price) as a number; 0 when flat. */
  readonly entryPrice: number;
  /** Buys what `size` of the cash affords at the reference price, fees included, and logs the fill. */
  buy(index: number, reference: number, log: FillLog): TBuyOutcome;
  /**
   * Sells every unit held and logs the fill: the round trip's cash result (cash in at the exit
   * minus cash out at the entry), or NaN when this ledger cannot be sure (hand over). `limit`
   * (0 for none) is a sell limit, as the simulator's: slippage and the grid never price the fill
   * below it (a take-profit's).
   */
  sell(index: number, reference: number, log: FillLog, limit?: number): number;
  /** The exact state, for a hand-over. */
  state(): LedgerState;
  /** The cash as decimal text. */
  finalCapital(): string;
}

export interface LedgerState {
  cash: Decimal;
  units: Decimal;
  /** The cash change of the open position's buy (negative), 0 when flat. */
  entryCash: Decimal;
}

/** The tick as the decimal fill functions take it. */
export const tickRuleOf = (tick: TEngineTick): Decimal | TTickSizeAt => (tick === 'krx_bands' ? krxTickSize : tick);

/** The tick as the scaled fill model takes it, or undefined for a rule it cannot hold (an arbitrary function). */
export const tickGridOf = (tick: TEngineTick): TTickGrid | undefined => (tick === 'krx_bands' ? { bands: KRX_TICK_BANDS } : typeof tick === 'function' ? undefined : tick);

/**
 * The largest quantity whose cost (price and commission) fits the budget: whole shares, or
 * fractional units cut to FRACTIONAL_SHARE_DECIMALS, never rounded up.
 */
export const affordableQty = (budget: Decimal, price: Decimal, profile: FeeProfile, fractional: boolean): Decimal => {
  const raw = budget.dividedBy(price.times(profile.commissionRate.plus(1)));
  return fractional ? raw.toDecimalPlaces(FRACTIONAL_SHARE_DECIMALS, ExactDecimal.ROUND_DOWN) : raw.floor();
};

/**
 * The ledger in exact decimals: any settings, any values. (The ledgers are classes so that every
 * run's ledger shares one set of methods, which the engine's optimised loop inlines; closures
 * made per run would throw that code away at each run.)
 */
class DecimalLedger implements Ledger {
  cashNumber: number;
  unitsNumber: number;
  entryPrice = 0;
  private readonly settings: LedgerSettings;
  private readonly tickSize: Decimal | TTickSizeAt;
  private readonly size: Decimal;
  private cash: Decimal;
  private units: Decimal;
  private entryCash: Decimal;

  constructor(settings: LedgerSettings, start: LedgerState | undefined) {
    this.settings = settings;
    this.tickSize = tickRuleOf(settings.tickSize);
    this.size = new ExactDecimal(settings.size);
    this.cash = start?.cash ?? new ExactDecimal(settings.initialCapital);
    this.units = start?.units ?? new ExactDecimal(0);
    this.entryCash = start?.entryCash ?? new ExactDecimal(0);
    this.cashNumber = this.cash.toNumber();
    this.unitsNumber = this.units.toNumber();
  }

  buy(index: number, reference: number, log: FillLog): TBuyOutcome {
    const { profile, fractional } = this.settings;
    const { tickSize } = this;
    const referencePrice = new ExactDecimal(reference);
    const price = executionPrice({ side: 'buy', referencePrice, tickSize, profile });
    const qty = affordableQty(this.cash.times(this.size), price, profile, fractional);
    if (qty.lte(0)) return BOUGHT_NOTHING;
    const fill = computeFill({ side: 'buy', qty, referencePrice, tickSize, profile }, price);
    this.book(fill);
    this.units = qty;
    this.unitsNumber = qty.toNumber();
    this.entryCash = fill.cashDelta;
    this.entryPrice = price.toNumber();
    log.addDecimal(decimalFill(index, 'buy', fill));
    return BOUGHT;
  }

  sell(index: number, reference: number, log: FillLog, limit = 0): number {
    const { profile } = this.settings;
    const limitPrice = limit > 0 ? new ExactDecimal(limit) : undefined;
    const fill = computeFill({ side: 'sell', qty: this.units, referencePrice: new ExactDecimal(reference), tickSize: this.tickSize, profile, limitPrice });
    this.book(fill);
    const pnl = this.entryCash.plus(fill.cashDelta).toNumber();
    this.units = new ExactDecimal(0);
    this.unitsNumber = 0;
    this.entryCash = this.units;
    this.entryPrice = 0;
    log.addDecimal(decimalFill(index, 'sell', fill));
    return pnl;
  }

  state(): LedgerState {
    return { cash: this.cash, units: this.units, entryCash: this.entryCash };
  }

  finalCapital(): string {
    return this.cash.toFixed();
  }

  private book(fill: Fill): void {
    this.cash = this.cash.plus(fill.cashDelta);
    this.cashNumber = this.cash.toNumber();
  }
}

/** The ledger in exact decimals, from the start or from a scaled ledger's state. */
export const decimalLedger = (settings: LedgerSettings, start?: LedgerState): Ledger => new DecimalLedger(settings, start);

const SAFE = Number.MAX_SAFE_INTEGER;

/** The scales of a run's scaled fills: its quantities, prices and amounts. */
interface FillScales {
  qty: number;
  price: number;
  fee: number;
}

/**
 * A fill whose decimals are made only when read. A class, so that the getters sit once on its
 * prototype instead of being made for every fill.
 */
class ScaledFill implements EngineFill {
  readonly index: number;
  readonly side: 'buy' | 'sell';
  private readonly qtyUnits: number;
  private readonly priceUnits: number;
  private readonly feeUnits: number;
  private readonly scales: FillScales;

  constructor(index: number, side: 'buy' | 'sell', qtyUnits: number, priceUnits: number, feeUnits: number, scales: FillScales) {
    this.index = index;
    this.side = side;
    this.qtyUnits = qtyUnits;
    this.priceUnits = priceUnits;
    this.feeUnits = feeUnits;
    this.scales = scales;
  }

  get qty(): Decimal {
    return decimalOfScaled(this.qtyUnits, this.scales.qty);
  }

  get price(): Decimal {
    return decimalOfScaled(this.priceUnits, this.scales.price);
  }

  get fee(): Decimal {
    return decimalOfScaled(this.feeUnits, this.scales.fee);
  }

  // units / 10^scale with both exact doubles is one correctly rounded division: the double
  // nearest the decimal, which is what Decimal's toNumber gives.
  numbers(): { qty: number; price: number; fee: number } {
    const { scales } = this;
    return { qty: this.qtyUnits / pow10(scales.qty), price: this.priceUnits / pow10(scales.price), fee: this.feeUnits / pow10(scales.fee) };
  }
}

const SIDE_BUY = 0;
const SIDE_SELL = 1;

/**
 * A run's fills in order. The scaled ledger's go into columns of numbers: a whipsaw strategy
 * fills tens of thousands of times per million bars, and as many objects kept to the end of the
 * run cost the garbage collector more than the arithmetic. A fill becomes an EngineFill when it
 * is read. The decimal ledger's (after a hand-over) are kept as they come, after the scaled ones.
 */
export class FillLog {
  private scaledCount = 0;
  private scales: FillScales | undefined;
  private bar = new Int32Array(1024);
  private side = new Uint8Array(1024);
  private qty = new Float64Array(1024);
  private price = new Float64Array(1024);
  private fee = new Float64Array(1024);
  private readonly decimals: EngineFill[] = [];

  get count(): number {
    return this.scaledCount + this.decimals.length;
  }

  /** A fill of the scaled ledger, in units of the given scales (the same for every such fill of a run). */
  addScaled(index: number, side: 'buy' | 'sell', qtyUnits: number, priceUnits: number, feeUnits: number, scales: FillScales): void {
    if (this.decimals.length > 0) throw new Error('a scaled fill after a hand-over to decimals');
    this.scales = scales;
    const at = this.scaledCount;
    if (at === this.bar.length) this.grow();
    this.bar[at] = index;
    this.side[at] = side === 'buy' ? SIDE_BUY : SIDE_SELL;
    this.qty[at] = qtyUnits;
    this.price[at] = priceUnits;
    this.fee[at] = feeUnits;
    this.scaledCount = at + 1;
  }

  addDecimal(fill: EngineFill): void {
    this.decimals.push(fill);
  }

  /** The first `count` fills (all of them by default), oldest first. */
  list(count = this.count): EngineFill[] {
    const out: EngineFill[] = [];
    const scaled = Math.min(count, this.scaledCount);
    for (let i = 0; i < scaled; i++) {
      out.push(new ScaledFill(this.bar[i]!, this.side[i] === SIDE_BUY ? 'buy' : 'sell', this.qty[i]!, this.price[i]!, this.fee[i]!, this.scales!));
    }
    for (let i = 0; out.length < count && i < this.decimals.length; i++) out.push(this.decimals[i]!);
    return out;
  }

  private grow(): void {
    const size = this.bar.length * 4;
    this.bar = withRoom(this.bar, size);
    this.side = withRoom(this.side, size);
    this.qty = withRoom(this.qty, size);
    this.price = withRoom(this.price, size);
    this.fee = withRoom(this.fee, size);
  }
}

/** What a scaled ledger fixes at its start. */
interface ScaledTerms {
  model: ScaledFillModel;
  size: Scaled;
  qtyScale: number;
  cashScale: number;
  cashPow: number;
  /** From the fill model's amounts to the cash scale. */
  amountShift: number;
  perUnitFactor: number;
  sizingExponent: number;
  sizingPow: number;
  fillScales: FillScales;
  /** 10^priceScale: a price's units over it is the price. */
  pricePow: number;
}

/** The ledger on scaled integers (see scaledLedger). */
class ScaledLedger implements Ledger {
  cashNumber: number;
  unitsNumber = 0;
  entryPrice = 0;
  private readonly terms: ScaledTerms;
  private cash: number;
  private units = 0;
  private entryCash = 0;

  constructor(terms: ScaledTerms, cash: number) {
    this.terms = terms;
    this.cash = cash;
    this.cashNumber = cash / terms.cashPow;
  }

  buy(index: number, reference: number, log: FillLog): TBuyOutcome {
    const { model, size, qtyScale, sizingExponent, sizingPow, perUnitFactor, amountShift, cashPow, fillScales, pricePow } = this.terms;
    const price = model.price('buy', reference);
    if (Number.isNaN(price)) return UNSURE;
    const budget = this.cash * size.units;
    const perUnit = price * perUnitFactor;
    // Exact integers for floorDiv, or NaN (beyond 2^53), which it refuses.
    const qty = sizingExponent >= 0 ? floorDiv(budget * sizingPow, perUnit) : floorDiv(budget, perUnit * sizingPow);
    // The decimal path divides to 40 significant digits before it cuts: with a numerator and a
    // denominator below 2^53 the quotient is never within 10^-40 of the next unit above, so
    // that rounding cannot lift it there, and both cut to the same quantity.
    if (Number.isNaN(qty) || !(budget <= SAFE)) return UNSURE;
    if (qty <= 0) return BOUGHT_NOTHING;
    const amounts = model.fill('buy', qty, qtyScale, price);
    if (!amounts) return UNSURE;
    const delta = amounts.cashDelta * amountShift;
    const after = this.cash + delta;
    if (!(Math.abs(delta) <= SAFE && after >= 0 && after <= SAFE)) return UNSURE;
    this.cash = after;
    this.units = qty;
    this.entryCash = delta;
    this.cashNumber = after / cashPow;
    this.unitsNumber = qty / pow10(qtyScale);
    this.entryPrice = price / pricePow;
    log.addScaled(index, 'buy', qty, price, amounts.fee, fillScales);
    return BOUGHT;
  }

  sell(index: number, reference: number, log: FillLog, limit = 0): number {
    const { model, qtyScale, amountShift, cashPow, fillScales, pricePow } = this.terms;
    let price = model.price('sell', reference);
    if (Number.isNaN(price)) return Number.NaN;
    if (limit > 0) {
      // A limit off this grid is one the decimals price (units / 10^scale is exact only on it).
      const limitUnits = Math.round(limit * pricePow);
      if (!(limitUnits / pricePow === limit && limitUnits <= SAFE)) return Number.NaN;
      if (price < limitUnits) price = limitUnits;
    }
    const amounts = model.fill('sell', this.units, qtyScale, price);
    if (!amounts) return Number.NaN;
    const delta = amounts.cashDelta * amountShift;
    const after = this.cash + delta;
    const pnlUnits = this.entryCash + delta;
    if (!(Math.abs(delta) <= SAFE && after >= 0 && after <= SAFE && Math.abs(pnlUnits) <= SAFE)) return Number.NaN;
    log.addScaled(index, 'sell', this.units, price, amounts.fee, fillScales);
    this.cash = after;
    this.units = 0;
    this.entryCash = 0;
    this.cashNumber = after / cashPow;
    this.unitsNumber = 0;
    this.entryPrice = 0;
    return pnlUnits / cashPow;
  }

  state(): LedgerState {
    const { cashScale, qtyScale } = this.terms;
    return { cash: decimalOfScaled(this.cash, cashScale), units: decimalOfScaled(this.units, qtyScale), entryCash: decimalOfScaled(this.entryCash, cashScale) };
  }

  finalCapital(): string {
    return decimalOfScaled(this.cash, this.terms.cashScale).toFixed();
  }
}

/**
 * The ledger on scaled integers, or undefined when the settings do not fit one (a tick given as
 * an arbitrary rule, a rate, size or capital with too many places). Cash is held in units of
 * 10^-cashScale, where cashScale covers every amount a fill can produce, so no fill ever needs
 * more places; units in 10^-9 (fractional) or whole units.
 */
export const scaledLedger = (settings: LedgerSettings): Ledger | undefined => {
  const { profile } = settings;
  const grid = tickGridOf(settings.tickSize);
  const model = grid && scaledFillModel(profile, grid);
  const size = scaledOfNumber(settings.size);
  const initial = scaledOfDecimal(new ExactDecimal(settings.initialCapital));
  if (!model || !size || !initial || initial.units < 0) return undefined;
  const qtyScale = settings.fractional ? FRACTIONAL_SHARE_DECIMALS : 0;
  const amountScale = model.moneyScale(qtyScale);
  const cashScale = Math.max(amountScale, initial.scale);
  if (cashScale > 22) return undefined;
  const cash = initial.units * pow10(cashScale - initial.scale);
  if (!(cash <= SAFE)) return undefined;
  // A buy's quantity is floor(budget / (price × (1 + commission))) in units of 10^-qtyScale:
  // budget / 10^(cashScale + size.scale) over price / 10^priceScale × (10^c + C) / 10^c, so
  // the powers of ten meet in one exponent.
  const { commission, priceScale } = model;
  const sizingExponent = priceScale + commission.scale + qtyScale - cashScale - size.scale;
  return new ScaledLedger(
    {
      model,
      size,
      qtyScale,
      cashScale,
      cashPow: pow10(cashScale),
      amountShift: pow10(cashScale - amountScale),
      perUnitFactor: pow10(commission.scale) + commission.units,
      sizingExponent,
      sizingPow: pow10(Math.abs(sizingExponent)),
      fillScales: { qty: qtyScale, price: priceScale, fee: amountScale },
      pricePow: pow10(priceScale),
    },
    cash,
  );
};
