// The fill arithmetic in one place: execution price, notional, fee and cash of a fill, the
// position it leaves behind, and the lot-size rule a quantity must keep.
import { Decimal } from 'decimal.js';
import type { FeeProfile } from './fees.ts';

export type TOrderSide = 'buy' | 'sell';

/**
 * The broker arithmetic runs on this constructor, whatever precision the rest of the process set
 * on the global one: 40 significant digits keep a product of a crypto quantity (8 places) and a
 * price exact, where decimal.js's default of 20 would round it. Its results are ordinary Decimal
 * instances (`instanceof Decimal` holds) that keep this precision in further arithmetic.
 */
export const ExactDecimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });

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
 * The decimal `new ExactDecimal(value)` holds (decimal.js reads a number's shortest round-trip
 * digits), as a scaled integer with the fewest places; undefined for a value that is not
 * positive, has more than 12 places or too many digits to be sure.
 */
export const scaledOfNumber = (value: number): Scaled | undefined => {
  if (!(value > 0)) return undefined;
  for (let scale = 0; scale <= MAX_NUMBER_SCALE; scale++) {
    const p = POW10[scale]!;
    const units = Math.round(value * p);
    if (units > MAX_NUMBER_UNITS) return undefined;
    // units and p are exact, so the division is the double nearest units / 10^scale.
    if (units / p === value) return { units, scale };
  }
  return undefined;
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
  /** computeFill's amounts for qtyUnits / 10^qtyScale at that price; undefined when it cannot be sure. */
  fill(side: TOrderSide, qtyUnits: number, qtyScale: number, priceUnits: number): ScaledFillAmounts | undefined;
}

/** units / 10^scale cut to `places` (decimal.js ROUND_DOWN of a non-negative value), as units / 10^max(places, scale). */
const cutTo = (units: number, scale: number, places: number | undefined): Scaled => {
  if (places === undefined || scale <= places) return { units, scale };
  return { units: floorDiv(units, pow10(scale - places)), scale: places };
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
  const priceScale = fixedTick ? fixedTick.scale : 0;
  // The slipped price is reference × (10^b ± slippage units) / 10^b.
  const slipScale = slippage.scale;
  const buyFactor = pow10(slipScale) + slippage.units;
  const sellFactor = pow10(slipScale) - slippage.units;
  const places = profile.feeDecimalPlaces;
  const feeScale = (notionalScale: number, rate: ScaledRate) => (places !== undefined && notionalScale + rate.scale > places ? places : notionalScale + rate.scale);
  const moneyScale = (qtyScale: number) => {
    const notionalScale = qtyScale + priceScale;
    return Math.max(notionalScale, feeScale(notionalScale, commission), feeScale(notionalScale, tax));
  };

  const price = (side: TOrderSide, reference: number): number => {
    const ref = scaledOfNumber(reference);
    if (!ref) return Number.NaN;
    const factor = side === 'buy' ? buyFactor : sellFactor;
    if (!(factor > 0)) return Number.NaN;
    const slipped = ref.units * factor;
    const slippedScale = ref.scale + slipScale;
    if (!(slipped <= SAFE)) return Number.NaN;
    let tick: number;
    if (fixedTick) tick = fixedTick.units;
    else {
      // A band runs up to, not including, an integer `below`: the slipped price is below it
      // exactly when its integer part is.
      const whole = floorDiv(slipped, pow10(slippedScale));
      tick = bands!.find((band) => whole < band.below)?.tick ?? Number.NaN;
    }
    // slipped / tick on one scale, rounded up for a buy and down for a sell.
    const common = Math.max(slippedScale, priceScale);
    const n = slipped * pow10(common - slippedScale);
    const d = tick * pow10(common - priceScale);
    if (!(n <= SAFE && d <= SAFE)) return Number.NaN;
    let steps = floorDiv(n, d);
    if (side === 'buy' && n - steps * d > 0) steps += 1;
    const units = steps * tick;
    // A price of 0 is refused by executionPrice; the decimal path says so.
    return units > 0 && units <= SAFE ? units : Number.NaN;
  };

  const fill = (side: TOrderSide, qtyUnits: number, qtyScale: number, priceUnits: number): ScaledFillAmounts | undefined => {
    if (!(qtyUnits > 0 && priceUnits > 0)) return undefined;
    const notionalScale = qtyScale + priceScale;
    const notional = qtyUnits * priceUnits;
    if (!(notional <= SAFE)) return undefined;
    const commissionRaw = notional * commission.units;
    const taxRaw = side === 'sell' ? notional * tax.units : 0;
    if (!(commissionRaw <= SAFE && taxRaw <= SAFE)) return undefined;
    const fee1 = cutTo(commissionRaw, notionalScale + commission.scale, places);
    const fee2 = cutTo(taxRaw, notionalScale + tax.scale, places);
    const scale = moneyScale(qtyScale);
    const at = (units: number, from: number) => units * pow10(scale - from);
    const amounts = {
      notional: at(notional, notionalScale),
      commission: at(fee1.units, fee1.scale),
      tax: at(fee2.units, fee2.scale),
      fee: 0,
      cashDelta: 0,
    };
    amounts.fee = amounts.commission + amounts.tax;
    amounts.cashDelta = side === 'buy' ? -(amounts.notional + amounts.fee) : amounts.notional - amounts.fee;
    if (!(amounts.notional <= SAFE && amounts.fee <= SAFE && Math.abs(amounts.cashDelta) <= SAFE)) return undefined;
    return amounts;
  };

  return { priceScale, moneyScale, commission, price, fill };
};
