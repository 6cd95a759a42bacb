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
  ExactDecimal,
  executionPrice,
  floorDiv,
  pow10,
  FRACTIONAL_SHARE_DECIMALS,
  scaledFillModel,
  scaledOfDecimal,
  scaledOfNumber,
  type Fill,
  type TTickGrid,
  type TTickSizeAt,
} from '../brokers/fills.ts';
import { KRX_TICK_BANDS, krxTickSize } from '../instruments/ticks.ts';

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
}

export interface Ledger {
  /** The cash and the units held, each the exact value rounded once to a double (for the per-bar marks). */
  readonly cashNumber: number;
  readonly unitsNumber: number;
  /**
   * Buys what `size` of the cash affords at the reference price, fees included: the fill, null
   * when that is nothing, undefined when this ledger cannot be sure (hand over to a decimal one).
   */
  buy(index: number, reference: number): EngineFill | null | undefined;
  /** Sells every unit held: the fill and the round trip's cash result, or undefined (hand over). */
  sell(index: number, reference: number): { fill: EngineFill; pnl: number } | undefined;
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

const tickRuleOf = (tick: TEngineTick): Decimal | TTickSizeAt => (tick === 'krx_bands' ? krxTickSize : tick);

/**
 * The largest quantity whose cost (price and commission) fits the budget: whole shares, or
 * fractional units cut to FRACTIONAL_SHARE_DECIMALS, never rounded up.
 */
export const affordableQty = (budget: Decimal, price: Decimal, profile: FeeProfile, fractional: boolean): Decimal => {
  const raw = budget.dividedBy(price.times(profile.commissionRate.plus(1)));
  return fractional ? raw.toDecimalPlaces(FRACTIONAL_SHARE_DECIMALS, ExactDecimal.ROUND_DOWN) : raw.floor();
};

/** The ledger in exact decimals: any settings, any values. */
export const decimalLedger = (settings: LedgerSettings, start?: LedgerState): Ledger => {
  const { profile, fractional } = settings;
  const tickSize = tickRuleOf(settings.tickSize);
  const size = new ExactDecimal(settings.size);
  let cash = start?.cash ?? new ExactDecimal(settings.initialCapital);
  let units = start?.units ?? new ExactDecimal(0);
  let entryCash = start?.entryCash ?? new ExactDecimal(0);
  const ledger = {
    cashNumber: cash.toNumber(),
    unitsNumber: units.toNumber(),
    buy: (index: number, reference: number): EngineFill | null => {
      const referencePrice = new ExactDecimal(reference);
      const price = executionPrice({ side: 'buy', referencePrice, tickSize, profile });
      const qty = affordableQty(cash.times(size), price, profile, fractional);
      if (qty.lte(0)) return null;
      const fill = computeFill({ side: 'buy', qty, referencePrice, tickSize, profile }, price);
      book(fill);
      units = qty;
      ledger.unitsNumber = qty.toNumber();
      entryCash = fill.cashDelta;
      return { index, side: 'buy', qty: fill.qty, price: fill.price, fee: fill.fee };
    },
    sell: (index: number, reference: number) => {
      const fill = computeFill({ side: 'sell', qty: units, referencePrice: new ExactDecimal(reference), tickSize, profile });
      book(fill);
      const pnl = entryCash.plus(fill.cashDelta).toNumber();
      units = new ExactDecimal(0);
      ledger.unitsNumber = 0;
      entryCash = units;
      return { fill: { index, side: 'sell' as const, qty: fill.qty, price: fill.price, fee: fill.fee }, pnl };
    },
    state: () => ({ cash, units, entryCash }),
    finalCapital: () => cash.toFixed(),
  };
  const book = (fill: Fill) => {
    cash = cash.plus(fill.cashDelta);
    ledger.cashNumber = cash.toNumber();
  };
  return ledger;
};

const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * A fill whose decimals are made only when read: most fills of a long run are never shown. A
 * class, so that the getters sit once on its prototype instead of being made for every fill.
 */
/** The scales of a run's fills: its quantities, prices and amounts. */
interface FillScales {
  qty: number;
  price: number;
  fee: number;
}

class ScaledFill implements EngineFill {
  readonly index: number;
  readonly side: 'buy' | 'sell';
  readonly #qty: number;
  readonly #price: number;
  readonly #fee: number;
  readonly #scales: FillScales;

  constructor(index: number, side: 'buy' | 'sell', qtyUnits: number, priceUnits: number, feeUnits: number, scales: FillScales) {
    this.index = index;
    this.side = side;
    this.#qty = qtyUnits;
    this.#price = priceUnits;
    this.#fee = feeUnits;
    this.#scales = scales;
  }

  get qty(): Decimal {
    return decimalOfScaled(this.#qty, this.#scales.qty);
  }

  get price(): Decimal {
    return decimalOfScaled(this.#price, this.#scales.price);
  }

  get fee(): Decimal {
    return decimalOfScaled(this.#fee, this.#scales.fee);
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
  const grid: TTickGrid | undefined = settings.tickSize === 'krx_bands' ? { bands: KRX_TICK_BANDS } : typeof settings.tickSize === 'function' ? undefined : settings.tickSize;
  const model = grid && scaledFillModel(profile, grid);
  const size = scaledOfNumber(settings.size);
  const initial = scaledOfDecimal(new ExactDecimal(settings.initialCapital));
  if (!model || !size || !initial || initial.units < 0) return undefined;
  const qtyScale = settings.fractional ? FRACTIONAL_SHARE_DECIMALS : 0;
  const amountScale = model.moneyScale(qtyScale);
  const cashScale = Math.max(amountScale, initial.scale);
  if (cashScale > 22) return undefined;
  const cashPow = pow10(cashScale);
  const amountShift = pow10(cashScale - amountScale);
  let cash = initial.units * pow10(cashScale - initial.scale);
  if (!(cash <= SAFE)) return undefined;
  let units = 0;
  let entryCash = 0;
  // A buy's quantity is floor(budget / (price × (1 + commission))) in units of 10^-qtyScale:
  // budget / 10^(cashScale + size.scale) over price / 10^priceScale × (10^c + C) / 10^c, so
  // the powers of ten meet in one exponent.
  const { commission, priceScale } = model;
  const perUnitFactor = pow10(commission.scale) + commission.units;
  const sizingExponent = priceScale + commission.scale + qtyScale - cashScale - size.scale;
  const sizingPow = pow10(Math.abs(sizingExponent));
  const fillScales: FillScales = { qty: qtyScale, price: priceScale, fee: amountScale };

  const ledger = {
    cashNumber: cash / cashPow,
    unitsNumber: 0,
    buy: (index: number, reference: number): EngineFill | null | undefined => {
      const price = model.price('buy', reference);
      if (Number.isNaN(price)) return undefined;
      const budget = cash * size.units;
      const perUnit = price * perUnitFactor;
      // Exact integers for floorDiv, or NaN (beyond 2^53), which it refuses.
      const qty = sizingExponent >= 0 ? floorDiv(budget * sizingPow, perUnit) : floorDiv(budget, perUnit * sizingPow);
      // The decimal path divides to 40 significant digits before it cuts: with a numerator and a
      // denominator below 2^53 the quotient is never within 10^-40 of the next unit above, so
      // that rounding cannot lift it there, and both cut to the same quantity.
      if (Number.isNaN(qty) || !(budget <= SAFE)) return undefined;
      if (qty <= 0) return null;
      const amounts = model.fill('buy', qty, qtyScale, price);
      if (!amounts) return undefined;
      const delta = amounts.cashDelta * amountShift;
      const after = cash + delta;
      if (!(Math.abs(delta) <= SAFE && after >= 0 && after <= SAFE)) return undefined;
      cash = after;
      units = qty;
      entryCash = delta;
      ledger.cashNumber = cash / cashPow;
      ledger.unitsNumber = units / pow10(qtyScale);
      return new ScaledFill(index, 'buy', qty, price, amounts.fee, fillScales);
    },
    sell: (index: number, reference: number) => {
      const price = model.price('sell', reference);
      if (Number.isNaN(price)) return undefined;
      const amounts = model.fill('sell', units, qtyScale, price);
      if (!amounts) return undefined;
      const delta = amounts.cashDelta * amountShift;
      const after = cash + delta;
      const pnlUnits = entryCash + delta;
      if (!(Math.abs(delta) <= SAFE && after >= 0 && after <= SAFE && Math.abs(pnlUnits) <= SAFE)) return undefined;
      const fill = new ScaledFill(index, 'sell', units, price, amounts.fee, fillScales);
      cash = after;
      units = 0;
      entryCash = 0;
      ledger.cashNumber = cash / cashPow;
      ledger.unitsNumber = 0;
      return { fill, pnl: pnlUnits / cashPow };
    },
    state: (): LedgerState => ({ cash: decimalOfScaled(cash, cashScale), units: decimalOfScaled(units, qtyScale), entryCash: decimalOfScaled(entryCash, cashScale) }),
    finalCapital: () => decimalOfScaled(cash, cashScale).toFixed(),
  };
  return ledger;
};
