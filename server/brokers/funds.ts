// What an account's working orders hold of its cash and of its positions, and what a position
// risks (DESIGN §6 "Rules a real broker enforces"): buying power net of the working buys, the
// quantity a sell may still take, and the per-position risk that sizing bounds. Pure functions
// over the working orders, so the simulator (under the account's lock) and the risk gate (on the
// broker's snapshot) judge alike.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import { ExactDecimal } from '../decimal.ts';
import { defaultProfileFor } from './fees.ts';
import { computeFill } from './fills.ts';

/** A working order as these rules read it (a simulator row and a BrokerOrder both fit). */
export interface WorkingOrder {
  id: string;
  symbol: string;
  side: 'buy' | 'sell';
  orderType: string;
  qty: Decimal.Value;
  filledQty: Decimal.Value;
  limitPrice: string | null;
  stopPrice: string | null;
  /** A bracket child's entry: the two children of one entry are an OCO pair selling the same units. */
  parentId: string | null;
  /** The other leg of an OCO pair, where the books say so. */
  ocoSiblingId?: string | null | undefined;
  /** A buy's bracket, whose stop leg (a stop, or a trail from the entry) protects what it buys. */
  bracket?: { stop_loss: string | null; trail_percent?: string | undefined; trail_price?: string | undefined } | null | undefined;
  metadata: Record<string, unknown>;
}

/** A position as the books hold it: the quantity held, its price, the symbol's working orders. */
export interface PositionView {
  heldQty: Decimal;
  currentPrice: Decimal;
  /** The working orders of the position's symbol (others are ignored). */
  working: readonly WorkingOrder[];
}

/** The metadata key under which a market buy keeps the price its funds check used, until it fills. */
export const RESERVE_PRICE_KEY = 'reserve_price';

const d = (value: Decimal.Value) => new ExactDecimal(value);
const ZERO = d(0);

export const remainingOf = (order: Pick<WorkingOrder, 'qty' | 'filledQty'>): Decimal => d(order.qty).minus(order.filledQty);

const textOf = (value: unknown): string | undefined => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);

/**
 * The price an order is expected at, for a working buy's reserve and a ticket's estimate alike:
 * the limit it will not pass (a limit's, a stop-limit's), else the stop it triggers at, else
 * `otherwise` (a market order's price).
 */
export const expectedPriceOf = <T>(limit: T | undefined, stop: T | undefined, otherwise: T | undefined): T | undefined => limit ?? stop ?? otherwise;

/**
 * The price a working buy holds cash at (expectedPriceOf): a stop-limit's limit (kept in metadata
 * where the broker layer collapsed it to a stop), a limit's limit, a stop's stop (a trailing
 * stop's current one, which follows the price down and only lowers the hold), a market
 * order's price from its funds check; `fallback` (the current price) when the order names none.
 */
export const reservePriceOf = (order: WorkingOrder, fallback?: Decimal): Decimal | undefined => {
  const price = expectedPriceOf(textOf(order.metadata.stop_limit_price) ?? order.limitPrice ?? undefined, order.stopPrice ?? undefined, textOf(order.metadata[RESERVE_PRICE_KEY]));
  return price === undefined ? fallback : d(price);
};

/** What `qty` at `price` costs with the asset class's fee, rounded as its fills are (whole won for KRW). */
export const costAt = (assetClass: TAssetClass, qty: Decimal, price: Decimal): Decimal =>
  // The price is given, so slippage and the grid (which the tick would serve) do not apply.
  computeFill({ side: 'buy', qty, referencePrice: price, tickSize: price, profile: defaultProfileFor(assetClass) }, price).cashDelta.negated();

/**
 * The cash the working buys hold: Σ remaining qty × reserve price + the fee on it. `priceOf`
 * gives the current price of a symbol, for a buy that names no price of its own.
 */
export const reservedCash = (assetClass: TAssetClass, orders: readonly WorkingOrder[], priceOf: (symbol: string) => Decimal | undefined = () => undefined): Decimal =>
  orders.reduce((sum, order) => {
    if (order.side !== 'buy') return sum;
    const remaining = remainingOf(order);
    const price = reservePriceOf(order, priceOf(order.symbol));
    if (remaining.lte(0) || !price) return sum;
    return sum.plus(costAt(assetClass, remaining, price));
  }, ZERO);

/** Buying power: the cash less what working buys hold of it, never below zero. */
export const buyingPowerOf = (assetClass: TAssetClass, cash: Decimal.Value, orders: readonly WorkingOrder[], priceOf?: (symbol: string) => Decimal | undefined): Decimal =>
  ExactDecimal.max(d(cash).minus(reservedCash(assetClass, orders, priceOf)), ZERO);

/**
 * The OCO group a sell belongs to: the legs of one pair sell the same units, so they count once.
 * Where the books do not say the sibling, a child goes with its parent's other children (a
 * bracket's pair) and with the parent itself (an OCO's stop leg, a child of its limit).
 */
export const ocoGroupOf = (order: Pick<WorkingOrder, 'id' | 'parentId' | 'ocoSiblingId'>): string => {
  if (order.ocoSiblingId) return [order.id, order.ocoSiblingId].sort().join('|');
  return `parent:${order.parentId ?? order.id}`;
};

/**
 * What the working sells of `symbol` hold of the position: their remaining quantity, an OCO
 * pair's two legs (a bracket's children) counted once. `except` leaves out an order being
 * replaced, with its OCO pair: the pair's hold is the replaced leg's own.
 */
export const inWorkingSells = (orders: readonly WorkingOrder[], symbol: string, except?: string): Decimal => {
  const replaced = except === undefined ? undefined : orders.find((order) => order.id === except);
  const exceptGroup = replaced && ocoGroupOf(replaced);
  const byGroup = new Map<string, Decimal>();
  for (const order of orders) {
    if (order.side !== 'sell' || order.symbol !== symbol || order.id === except) continue;
    if (exceptGroup !== undefined && ocoGroupOf(order) === exceptGroup) continue;
    const group = ocoGroupOf(order);
    byGroup.set(group, ExactDecimal.max(byGroup.get(group) ?? ZERO, remainingOf(order)));
  }
  return [...byGroup.values()].reduce((sum, qty) => sum.plus(qty), ZERO);
};

/** What a sell may take: the held quantity less what working sells hold, never negative. */
export interface Sellable {
  held: Decimal;
  inWorkingSells: Decimal;
  available: Decimal;
}

export const sellableOf = (held: Decimal.Value, orders: readonly WorkingOrder[], symbol: string, except?: string): Sellable => {
  const inWorking = inWorkingSells(orders, symbol, except);
  return { held: d(held), inWorkingSells: inWorking, available: ExactDecimal.max(d(held).minus(inWorking), ZERO) };
};

/** The refusal's words for a sell above what is available (the gate and the simulator say the same); the symbol may be unknown (''). */
export const sellRefusalMessage = (qty: Decimal, symbol: string, { held, inWorkingSells: working, available }: Sellable): string =>
  `The sell of ${qty.toFixed()}${symbol ? ` ${symbol}` : ''} exceeds the ${available.toFixed()} available to sell: ${held.toFixed()} held, ` +
  `${working.toFixed()} in working sells; short selling is not allowed`;

/** The refusal's words for a buy above the buying power (the gate and the simulator say the same). */
export const buyRefusalMessage = ({ qty, price, fee }: { qty: Decimal; price: Decimal; fee: Decimal }, buyingPower: Decimal): string =>
  `The buy costs ${qty.times(price).plus(fee).toFixed()} (${qty.toFixed()} × ${price.toFixed()} + fee ${fee.toFixed()}), ` +
  `more than the buying power ${buyingPower.toFixed()}`;
