// The fill arithmetic in one place: execution price, notional, fee and cash of a fill, the
// position it leaves behind, and the lot-size rule a quantity must keep.
import { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';
import type { FeeProfile } from './fees.ts';

export type TOrderSide = 'buy' | 'sell';

const ZERO = new ExactDecimal(0);
const ONE = new ExactDecimal(1);

/** A price-dependent tick, such as the KRX band table. */
export type TTickSizeAt = (price: Decimal) => Decimal;

export interface FillInput {
  side: TOrderSide;
  qty: Decimal;
  /** The market price the fill is taken against (matching's `fillReference`). */
  referencePrice: Decimal;
  /**
   * The instrument's price increment, or the rule giving it at a price (KRX stocks: pass the
   * band table, `krxTickSize`), taken at the slipped price so the result is on that band's grid.
   */
  tickSize: Decimal | TTickSizeAt;
  profile: FeeProfile;
  /** A limit order's limit: slippage and rounding never push the price beyond it. */
  limitPrice?: Decimal | null | undefined;
}

export interface Fill {
  side: TOrderSide;
  qty: Decimal;
  /** Execution price per unit, on the tick grid (or at the limit). */
  price: Decimal;
  /** qty × price. */
  notional: Decimal;
  commission: Decimal;
  /** Transaction tax; zero on buys and where the profile has none. */
  tax: Decimal;
  /** commission + tax. */
  fee: Decimal;
  /** Change of cash: buy −(notional + fee), sell +(notional − fee). */
  cashDelta: Decimal;
}

const requirePositive = (name: string, value: Decimal) => {
  if (!value.isFinite() || value.lte(0)) throw new Error(`${name} must be a positive number, got ${value.toString()}`);
};

/**
 * `price` on the tick grid, rounded `up` or `down` onto it (never to the nearest), as
 * executionPrice rounds a fill: the tick is taken at the price itself, as the KRX band table is
 * (every band's edge is on the coarser grid above it).
 */
export const ontoGrid = (price: Decimal, tickSize: Decimal | TTickSizeAt, direction: 'up' | 'down'): Decimal => {
  const tick = new ExactDecimal(typeof tickSize === 'function' ? tickSize(price) : tickSize);
  requirePositive('tick size', tick);
  return new ExactDecimal(price).toNearest(tick, direction === 'up' ? Decimal.ROUND_CEIL : Decimal.ROUND_FLOOR);
};

/**
 * The price moved against the taker by the profile's slippage and put on the tick grid. Buys
 * round up and sells round down: an exchange prints only prices on the grid, and rounding away
 * from the taker means the grid never hands out an improvement the slippage model did not grant,
 * so simulated results err on the side of costing more, never less.
 */
export const executionPrice = ({ side, referencePrice, tickSize, profile, limitPrice }: Omit<FillInput, 'qty'>): Decimal => {
  const reference = new ExactDecimal(referencePrice);
  requirePositive('reference price', reference);
  const factor = side === 'buy' ? ONE.plus(profile.slippageRate) : ONE.minus(profile.slippageRate);
  const slipped = reference.times(factor);
  const tick = new ExactDecimal(typeof tickSize === 'function' ? tickSize(slipped) : tickSize);
  requirePositive('tick size', tick);
  let price = slipped.toNearest(tick, side === 'buy' ? Decimal.ROUND_CEIL : Decimal.ROUND_FLOOR);
  // A limit is the order's promise to the customer and wins over the model and the grid (limit
  // prices are put on the grid by order validation, so this rarely leaves it).
  if (limitPrice != null) {
    const limit = new ExactDecimal(limitPrice);
    if (side === 'buy' && price.gt(limit)) price = limit;
    if (side === 'sell' && price.lt(limit)) price = limit;
  }
  if (price.lte(0)) throw new Error(`sell price rounds to zero: reference ${reference.toFixed()} is below one tick of ${tick.toFixed()}`);
  return price;
};

const feeAmount = (notional: Decimal, rate: Decimal, decimalPlaces: number | undefined) => {
  const amount = notional.times(rate);
  return decimalPlaces === undefined ? amount : amount.toDecimalPlaces(decimalPlaces, Decimal.ROUND_DOWN);
};

/**
 * Prices one fill: what it costs or brings, fee and tax included. `price` is executionPrice(input),
 * passed by a caller that has already computed it (the backtest engine sizes a buy on it).
 */
export const computeFill = (input: FillInput, price: Decimal = executionPrice(input)): Fill => {
  const qty = new ExactDecimal(input.qty);
  requirePositive('fill quantity', qty);
  const notional = qty.times(price);
  const { profile, side } = input;
  const commission = feeAmount(notional, profile.commissionRate, profile.feeDecimalPlaces);
  const tax = side === 'sell' ? feeAmount(notional, profile.sellTaxRate, profile.feeDecimalPlaces) : ZERO;
  const fee = commission.plus(tax);
  const cashDelta = side === 'buy' ? notional.plus(fee).negated() : notional.minus(fee);
  return { side, qty, price, notional, commission, tax, fee, cashDelta };
};

/**
 * A long position as fills leave it.
 * - `avgEntryPrice` is the quantity-weighted price of the units held, fees excluded, as brokers
 *   report it; a sell leaves it unchanged and a full close resets it to 0.
 * - `realizedPnl` is the cash result of trading so far: every fee is realised when it is paid
 *   (a buy's fee at the buy) and a price gain when the units are sold. So at every moment
 *   cash − starting cash = realizedPnl − qty × avgEntryPrice, and equity − starting cash =
 *   realizedPnl + qty × (price − avgEntryPrice): realised plus unrealised is the whole P&L.
 */
export interface Position {
  qty: Decimal;
  avgEntryPrice: Decimal;
  realizedPnl: Decimal;
}

export type PositionFill = Pick<Fill, 'side' | 'qty' | 'price' | 'fee'>;

/**
 * The position after one fill. Long-only: a sell may close part or all of the long, never more;
 * the caller (the funds gate, the simulator) must refuse such an order, so reaching it here is a
 * bug and throws.
 */
export const applyFill = (position: Position | undefined, fill: PositionFill): Position => {
  const heldQty = new ExactDecimal(position?.qty ?? 0);
  const avgEntryPrice = new ExactDecimal(position?.avgEntryPrice ?? 0);
  const realizedPnl = new ExactDecimal(position?.realizedPnl ?? 0);
  const qty = new ExactDecimal(fill.qty);
  const price = new ExactDecimal(fill.price);
  const fee = new ExactDecimal(fill.fee);
  requirePositive('fill quantity', qty);
  if (fill.side === 'buy') {
    const newQty = heldQty.plus(qty);
    // Division is the one place a result may not terminate (three buys at 1, 1 and 2 average
    // 4/3): it rounds at the 40th significant digit, far below any price increment.
    const newAvg = heldQty.times(avgEntryPrice).plus(qty.times(price)).dividedBy(newQty);
    return { qty: newQty, avgEntryPrice: newAvg, realizedPnl: realizedPnl.minus(fee) };
  }
  if (qty.gt(heldQty)) {
    throw new Error(`sell of ${qty.toFixed()} exceeds the held quantity ${heldQty.toFixed()}: long-only positions cannot go short`);
  }
  const remaining = heldQty.minus(qty);
  const gain = price.minus(avgEntryPrice).times(qty);
  return {
    qty: remaining,
    avgEntryPrice: remaining.isZero() ? ZERO : avgEntryPrice,
    realizedPnl: realizedPnl.plus(gain).minus(fee),
  };
};

/** Alpaca's fractional-share precision: quantities of a fractional stock go down to 1e-9 of a share. */
export const FRACTIONAL_SHARE_DECIMALS = 9;

/**
 * Why a quantity cannot be traded in this instrument, or undefined when it can. The registry's
 * two fields read together:
 * - not `fractional` (KRX stocks): whole units, in multiples of `lotSize`;
 * - `fractional` with a lot below one unit (a crypto pair's exchange step, 0.00001 BTC): multiples
 *   of that step;
 * - `fractional` with a lot of one unit or more (US shares, lot 1): any fraction the broker's
 *   fractional-share orders take, down to FRACTIONAL_SHARE_DECIMALS places.
 */
export const checkLot = (qty: Decimal, lotSize: Decimal, fractional: boolean): string | undefined => {
  const quantity = new ExactDecimal(qty);
  const lot = new ExactDecimal(lotSize);
  requirePositive('lot size', lot);
  if (!quantity.isFinite() || quantity.lte(0)) return 'qty must be greater than 0';
  if (!fractional && !quantity.isInteger()) return `qty ${quantity.toFixed()} must be a whole number: this instrument does not trade fractions`;
  if (fractional && lot.gte(1)) {
    if (quantity.decimalPlaces() > FRACTIONAL_SHARE_DECIMALS) return `qty ${quantity.toFixed()} has more than ${FRACTIONAL_SHARE_DECIMALS} decimal places`;
    return undefined;
  }
  if (!quantity.mod(lot).isZero()) return `qty ${quantity.toFixed()} must be a multiple of the lot size ${lot.toFixed()}`;
  return undefined;
};

/**
 * `amount` rounded down to what the instrument trades, by checkLot's rules: whole lots (whole units
 * where it trades no fractions), or FRACTIONAL_SHARE_DECIMALS places for fractional shares. Zero
 * when not one lot fits.
 */
export const roundDownToLot = (amount: Decimal.Value, lotSize: Decimal.Value, fractional: boolean): Decimal => {
  const raw = new ExactDecimal(amount);
  const lot = new ExactDecimal(lotSize);
  if (!raw.isFinite() || raw.lte(0)) return new ExactDecimal(0);
  if (!fractional) {
    const whole = lot.gte(1) ? lot : new ExactDecimal(1);
    return raw.div(whole).floor().times(whole);
  }
  if (lot.gte(1)) return raw.toDecimalPlaces(FRACTIONAL_SHARE_DECIMALS, ExactDecimal.ROUND_DOWN);
  return raw.div(lot).floor().times(lot);
};

// --- The same fill arithmetic on scaled integers (the backtest engine's fast path) ---
//
// A backtest prices tens of thousands of fills per run, and a decimal.js fill costs tens of
// microseconds. Here a decimal d is an integer-valued double u with a power-of-ten scale,
// d = u / 10^scale. While every integer stays within Number.MAX_SAFE_INTEGER, double arithmetic
// on them is exact, and every value has at most 16 significant digits, far inside ExactDecimal's
// 40: so the decimal functions above compute exactly the same values, rounding only where this
// code rounds too (the tick grid, fee cuts). A step whose integer would leave the safe range
// answers NaN or undefined, and the caller prices that fill through the decimal functions.
// test/unit/fills.test.ts compares the two on many generated fills of every profile.

const SAFE = Number.MAX_SAFE_INTEGER;

/** 10^0 … 10^22: every one exactly a double. */
const POW10: readonly number[] = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** 10^k as a double, exact for 0 <= k <= 22 (NaN beyond, which fails every safe-range check). */
export const pow10 = (k: number): number => POW10[k] ?? Number.NaN;

/** A decimal as a scaled integer: units / 10^scale. */
export interface Scaled {
  readonly units: number;
  readonly scale: number;
}

/**
 * floor(n / d) for integers 0 <= n, 0 < d with n + d <= MAX_SAFE_INTEGER (NaN otherwise). The
 * double quotient is within one of the true one, and q × d stays exact, so one correction fixes it.
 */
export const floorDiv = (n: number, d: number): number => {
  if (!(n >= 0 && d > 0 && n <= SAFE - d)) return Number.NaN;
  let q = Math.floor(n / d);
  const r = n - q * d;
  if (r < 0) q -= 1;
  else if (r >= d) q += 1;
  return q;
};

/** The most places scaledOfNumber tries: far more than any price or size carries. */
const MAX_NUMBER_SCALE = 12;
// Below this a double's spacing is under a tenth of 10^-scale, so the scale's one decimal that
// reads back as the double is also the shortest one, the digits decimal.js takes from a number.
const MAX_NUMBER_UNITS = Math.floor(2 ** 52 / 10);

/**
 * A number of places (the fewest, or `likely` when that serves) at which the decimal
 * `new ExactDecimal(value)` holds (decimal.js reads a number's shortest round-trip digits) is a
 * safe integer: its units are Math.round(value × 10^places). -1 for a value that is not positive,
 * has more than 12 places or too many digits to be sure. (A number, not an object: the engine
 * asks this at every fill.)
 */
export const placesOfNumber = (value: number, likely = 0): number => {
  if (!(value > 0)) return -1;
  // Any number of places that reads back as the value gives the same decimal (its units are
  // unique at every scale, see MAX_NUMBER_UNITS): try the likely one (a price's tick places) first.
  if (likely > 0 && likely <= MAX_NUMBER_SCALE) {
    const p = POW10[likely]!;
    const units = Math.round(value * p);
    if (units <= MAX_NUMBER_UNITS && units / p === value) return likely;
  }
  for (let scale = 0; scale <= MAX_NUMBER_SCALE; scale++) {
    const p = POW10[scale]!;
    const units = Math.round(value * p);
    if (units > MAX_NUMBER_UNITS) return -1;
    // units and p are exact, so the division is the double nearest units / 10^scale.
    if (units / p === value) return scale;
  }
  return -1;
};

/** placesOfNumber with its units, or undefined. */
export const scaledOfNumber = (value: number): Scaled | undefined => {
  const scale = placesOfNumber(value);
  return scale < 0 ? undefined : { units: Math.round(value * POW10[scale]!), scale };
};

/** A Decimal as a scaled integer with the fewest places, or undefined when it does not fit. */
export const scaledOfDecimal = (value: Decimal): Scaled | undefined => {
  if (!value.isFinite()) return undefined;
  const scale = value.decimalPlaces();
  const units = new ExactDecimal(value).times(pow10(scale)).toNumber();
  return scale <= 22 && Number.isSafeInteger(units) ? { units, scale } : undefined;
};

/** The scaled integer as an exact Decimal. */
export const decimalOfScaled = (units: number, scale: number): Decimal => new ExactDecimal(`${units}e-${scale}`);

/** A price grid as data: a fixed tick, or bands of integer ticks by price (KRX_TICK_BANDS). */
export type TTickGrid = Decimal | { readonly bands: ReadonlyArray<{ readonly below: number; readonly tick: number }> };

/** computeFill's amounts, all at the model's moneyScale for the quantity's scale. */
export interface ScaledFillAmounts {
  notional: number;
  commission: number;
  tax: number;
  fee: number;
  cashDelta: number;
}

/** A rate of the profile as units / 10^scale. */
interface ScaledRate {
  units: number;
  scale: number;
}

export interface ScaledFillModel {
  /** The scale of every price: the tick's places (0 for bands of whole ticks). */
  readonly priceScale: number;
  /** The scale of computeFill's amounts for a quantity of `qtyScale` places. */
  moneyScale(qtyScale: number): number;
  /** The commission rate (to size a buy as the engine does). */
  readonly commission: Readonly<ScaledRate>;
  /**
   * executionPrice(side, reference) without a limit, in units of 10^-priceScale; NaN when it
   * cannot be sure, including every case where executionPrice throws.
   */
  price(side: TOrderSide, reference: number): number;
  /**
   * computeFill's amounts for qtyUnits / 10^qtyScale at that price; undefined when it cannot be
   * sure. The answer is the model's own scratch object, overwritten by the next call: read it
   * before filling again (a fill allocates nothing).
   */
  fill(side: TOrderSide, qtyUnits: number, qtyScale: number, priceUnits: number): ScaledFillAmounts | undefined;
}

/**
 * How a fee of a quantity scale is computed: notional × rate units, divided by `cut` (a power of
 * ten, 1 when the profile keeps fees exact; the division floors, decimal.js's ROUND_DOWN of a
 * non-negative value), then multiplied by `shift` onto the money scale.
 */
interface FeeSteps {
  cut: number;
  shift: number;
}

/** The constants of one quantity scale: the money scale and the steps onto it. */
interface QtySteps {
  moneyScale: number;
  notionalShift: number;
  commission: FeeSteps;
  tax: FeeSteps;
}

/**
 * The fill model of one profile and tick grid on scaled integers. A class, so that every run's
 * model shares one set of methods: an engine's optimised loop, which inlines them, is then not
 * thrown away at each run for calling another closure.
 */
class ScaledFills implements ScaledFillModel {
  readonly priceScale: number;
  readonly commission: Readonly<ScaledRate>;
  private readonly tax: Readonly<ScaledRate>;
  private readonly fixedTick: Scaled | undefined;
  private readonly bands: ReadonlyArray<{ readonly below: number; readonly tick: number }> | undefined;
  private readonly slipScale: number;
  private readonly buyFactor: number;
  private readonly sellFactor: number;
  private readonly places: number | undefined;
  private readonly stepsByQtyScale = new Map<number, QtySteps>();
  private lastSteps: QtySteps | undefined;
  private lastQtyScale = -1;
  // Doubles from the start (not small integers), so that V8 never changes the fields' representation.
  private readonly amounts: ScaledFillAmounts = { notional: 0.5, commission: 0.5, tax: 0.5, fee: 0.5, cashDelta: 0.5 };

  constructor(profile: FeeProfile, slippage: Scaled, commission: Scaled, tax: Scaled, fixedTick: Scaled | undefined, bands: ScaledFills['bands']) {
    this.commission = commission;
    this.tax = tax;
    this.fixedTick = fixedTick;
    this.bands = bands;
    this.priceScale = fixedTick ? fixedTick.scale : 0;
    // The slipped price is reference × (10^b ± slippage units) / 10^b.
    this.slipScale = slippage.scale;
    this.buyFactor = pow10(slippage.scale) + slippage.units;
    this.sellFactor = pow10(slippage.scale) - slippage.units;
    this.places = profile.feeDecimalPlaces;
  }

  moneyScale(qtyScale: number): number {
    return this.stepsOf(qtyScale).moneyScale;
  }

  price(side: TOrderSide, reference: number): number {
    const referenceScale = placesOfNumber(reference, this.priceScale);
    if (referenceScale < 0) return Number.NaN;
    const factor = side === 'buy' ? this.buyFactor : this.sellFactor;
    if (!(factor > 0)) return Number.NaN;
    const slipped = Math.round(reference * POW10[referenceScale]!) * factor;
    const slippedScale = referenceScale + this.slipScale;
    if (!(slipped <= SAFE)) return Number.NaN;
    let tick: number;
    if (this.fixedTick) tick = this.fixedTick.units;
    else {
      // A band runs up to, not including, an integer `below`: the slipped price is below it
      // exactly when its integer part is.
      const whole = floorDiv(slipped, pow10(slippedScale));
      tick = this.bands!.find((band) => whole < band.below)?.tick ?? Number.NaN;
    }
    // slipped / tick on one scale, rounded up for a buy and down for a sell.
    const common = Math.max(slippedScale, this.priceScale);
    const n = slipped * pow10(common - slippedScale);
    const d = tick * pow10(common - this.priceScale);
    if (!(n <= SAFE && d <= SAFE)) return Number.NaN;
    let steps = floorDiv(n, d);
    if (side === 'buy' && n - steps * d > 0) steps += 1;
    const units = steps * tick;
    // A price of 0 is refused by executionPrice; the decimal path says so.
    return units > 0 && units <= SAFE ? units : Number.NaN;
  }

  fill(side: TOrderSide, qtyUnits: number, qtyScale: number, priceUnits: number): ScaledFillAmounts | undefined {
    if (!(qtyUnits > 0 && priceUnits > 0)) return undefined;
    const steps = this.stepsOf(qtyScale);
    const rawNotional = qtyUnits * priceUnits;
    const notional = rawNotional * steps.notionalShift;
    const commissionAmount = feeOf(rawNotional, this.commission.units, steps.commission);
    const taxAmount = side === 'sell' ? feeOf(rawNotional, this.tax.units, steps.tax) : 0;
    const fee = commissionAmount + taxAmount;
    const cashDelta = side === 'buy' ? -(notional + fee) : notional - fee;
    // Every amount is a sum or product of non-negative integers: within 2^53 (a NaN fails) it is exact.
    if (!(rawNotional <= SAFE && notional <= SAFE && fee <= SAFE && Math.abs(cashDelta) <= SAFE)) return undefined;
    const amounts = this.amounts;
    amounts.notional = notional;
    amounts.commission = commissionAmount;
    amounts.tax = taxAmount;
    amounts.fee = fee;
    amounts.cashDelta = cashDelta;
    return amounts;
  }

  /** A fee's scale: the notional's plus the rate's, cut to the profile's places if it has some. */
  private feeScale(notionalScale: number, rate: ScaledRate): number {
    return this.places !== undefined && notionalScale + rate.scale > this.places ? this.places : notionalScale + rate.scale;
  }

  private stepsOf(qtyScale: number): QtySteps {
    // A run fills at one quantity scale: remember the last one's steps.
    if (qtyScale === this.lastQtyScale) return this.lastSteps!;
    let steps = this.stepsByQtyScale.get(qtyScale);
    if (!steps) {
      const notionalScale = qtyScale + this.priceScale;
      const moneyScale = Math.max(notionalScale, this.feeScale(notionalScale, this.commission), this.feeScale(notionalScale, this.tax));
      const feeSteps = (rate: ScaledRate): FeeSteps => {
        const scale = this.feeScale(notionalScale, rate);
        return { cut: pow10(notionalScale + rate.scale - scale), shift: pow10(moneyScale - scale) };
      };
      steps = { moneyScale, notionalShift: pow10(moneyScale - notionalScale), commission: feeSteps(this.commission), tax: feeSteps(this.tax) };
      this.stepsByQtyScale.set(qtyScale, steps);
    }
    this.lastQtyScale = qtyScale;
    this.lastSteps = steps;
    return steps;
  }
}

/** notional × rate, cut and shifted onto the money scale; NaN beyond 2^53. */
const feeOf = (notional: number, rate: number, steps: FeeSteps): number => {
  const raw = notional * rate;
  const cut = steps.cut === 1 ? raw : floorDiv(raw, steps.cut);
  return raw <= SAFE ? cut * steps.shift : Number.NaN;
};

/**
 * The fill model of one profile and tick grid on scaled integers, or undefined when one of its
 * rates or its tick has too many places to hold so (the caller then uses the decimal functions).
 */
export const scaledFillModel = (profile: FeeProfile, grid: TTickGrid): ScaledFillModel | undefined => {
  const slippage = scaledOfDecimal(profile.slippageRate);
  const commission = scaledOfDecimal(profile.commissionRate);
  const tax = scaledOfDecimal(profile.sellTaxRate);
  if (!slippage || !commission || !tax || slippage.units < 0 || commission.units < 0 || tax.units < 0) return undefined;
  const fixedTick = 'bands' in grid ? undefined : scaledOfDecimal(grid);
  const bands = 'bands' in grid ? grid.bands : undefined;
  if (bands?.some((band) => !Number.isSafeInteger(band.tick) || band.tick <= 0)) return undefined;
  if (!bands && (!fixedTick || fixedTick.units <= 0)) return undefined;
  return new ScaledFills(profile, slippage, commission, tax, fixedTick, bands);
};
