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
