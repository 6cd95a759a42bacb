// Between ccxt's unified objects and the project's broker types: numbers to decimal strings, our
// broker order ids (market id + exchange order id, since ccxt needs the symbol to find an order),
// statuses, the order request put on the market's precision, and ccxt's errors as refusals or
// unavailability. Pure functions, apart from the ccxt error classes passed in.
import type { Exchange, Market } from 'ccxt';
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../../decimal.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerOrder, type BrokerOrderRequest, type TBrokerOrderStatus, type TTradingMode } from '../types.ts';

/** Who the adapter's objects belong to. */
export interface CcxtAccountKey {
  userId: number;
  mode: TTradingMode;
  /** The ccxt exchange id: the broker name orders carry. */
  exchangeId: string;
}

/** The part of a ccxt market the adapter reads (a narrow view of ccxt's Market). */
export interface CcxtMarketView {
  id: string;
  symbol: string;
  base: string;
  quote: string;
  /** ccxt's TICK_SIZE precision mode: the step itself (0.00001); DECIMAL_PLACES: the count (5). */
  precision: { amount?: number | undefined; price?: number | undefined };
}

/** The part of a ccxt order the adapter reads. */
export interface CcxtOrderView {
  id?: string | undefined;
  clientOrderId?: string | undefined;
  symbol?: string | undefined;
  type?: string | undefined;
  side?: string | undefined;
  status?: string | undefined;
  amount?: number | undefined;
  filled?: number | undefined;
  average?: number | undefined;
  price?: number | undefined;
  triggerPrice?: number | undefined;
  timeInForce?: string | undefined;
  timestamp?: number | undefined;
  lastUpdateTimestamp?: number | undefined;
  /** The exchange's own record of the order (Binance's REST answer or its user stream's execution report). */
  info?: unknown;
}

export const ZERO = new ExactDecimal(0);

/** A ccxt amount (a JS number) as its shortest decimal text, never in exponent form. */
export const decimalText = (value: number | undefined | null): string => {
  if (value === undefined || value === null || !Number.isFinite(value)) return '0';
  // String(value) is the shortest text that reads back as the same number; Decimal drops the exponent.
  return new ExactDecimal(String(value)).toFixed();
};

const dec = (text: string) => new ExactDecimal(text);

/** The step of a precision value in either of ccxt's modes (TICK_SIZE is what binance uses). */
export const stepOf = (precision: number | undefined, tickSizeMode: boolean): Decimal | undefined => {
  if (precision === undefined) return undefined;
  return tickSizeMode ? dec(String(precision)) : new ExactDecimal(10).pow(-precision);
};

const roundToStep = (value: Decimal, step: Decimal | undefined, rounding: Decimal.Rounding): Decimal =>
  step && step.gt(0) ? value.dividedBy(step).toDecimalPlaces(0, rounding).times(step) : value;

// ---- ids ------------------------------------------------------------------------------------

/**
 * Our broker order id: the exchange's market id and its order id, `BTCUSDT~123`. ccxt finds or
 * cancels an order only with its symbol (binance needs it), and the Broker interface gives only
 * the id; `~` is unreserved in URLs and appears in no exchange's market id that ccxt lists.
 */
export const ccxtBrokerOrderId = (marketId: string, orderId: string) => `${marketId}~${orderId}`;

export const parseCcxtBrokerOrderId = (brokerOrderId: string): { marketId: string; orderId: string } | undefined => {
  const at = brokerOrderId.indexOf('~');
  if (at <= 0 || at === brokerOrderId.length - 1) return undefined;
  return { marketId: brokerOrderId.slice(0, at), orderId: brokerOrderId.slice(at + 1) };
};

/** Our symbols are ccxt's unified spot symbols (`BTC/USDT`); `BTC-USDT` is read as the same. */
export const unifiedSymbol = (symbol: string) => symbol.trim().toUpperCase().replace('-', '/');

// ---- the order request ----------------------------------------------------------------------

export interface CcxtOrderArguments {
  symbol: string;
  type: 'market' | 'limit';
  side: 'buy' | 'sell';
  /** Already on the market's amount step. */
  amount: string;
  price: string | undefined;
  triggerPrice: string | undefined;
  /** ccxt's unified params: clientOrderId, timeInForce, triggerPrice. */
  params: Record<string, string>;
}

/** The loaded markets by unified symbol: ccxt types them as a dictionary of `any`. */
export const marketsOf = (exchange: Exchange) => (exchange.markets ?? {}) as Record<string, Market | undefined>;

/**
 * Whether a market holds a stop (a trigger on a market order) and a stop-limit: its own list of
 * order types where the exchange gives one (Binance's `orderTypes`: STOP_LOSS, STOP_LOSS_LIMIT),
 * else what ccxt says the exchange can create. What it lacks the order emulator holds (DESIGN §6).
 */
export const nativeStopsOfMarket = (info: unknown, has: Record<string, unknown>): { stop: boolean; stopLimit: boolean } => {
  const listed = typeof info === 'object' && info !== null ? (info as { orderTypes?: unknown }).orderTypes : undefined;
  if (Array.isArray(listed)) return { stop: listed.includes('STOP_LOSS'), stopLimit: listed.includes('STOP_LOSS_LIMIT') };
  return { stop: has.createStopMarketOrder === true, stopLimit: has.createStopLimitOrder === true };
};

const TIME_IN_FORCE = { day: 'GTC', gtc: 'GTC', ioc: 'IOC', fok: 'FOK' } as const;

/**
 * ccxt's createOrder arguments for our request, or a refusal for what a spot exchange cannot take
 * here: brackets, quantities below one amount step. The quantity is put on the market's step
 * (down: never more than asked), a limit price on its tick toward the safe side (a buy down, a
 * sell up). A stop becomes a trigger price on a market order (a limit order for a collapsed
 * stop_limit, whose limit is in metadata.stop_limit_price); whether the market takes triggers is
 * the exchange's answer (ccxt refuses it for a market without them: BrokerRejectedError).
 * Crypto has no trading day: `day` is sent as GTC.
 */
export const toCcxtOrder = (request: BrokerOrderRequest, market: CcxtMarketView, tickSizeMode: boolean, exchangeClientOrderId = request.clientOrderId): CcxtOrderArguments => {
  if (request.bracket) throw new BrokerRejectedError('crypto exchange orders take no bracket here');
  const asked = /^\d+(\.\d+)?$/.test(request.qty) ? dec(request.qty) : ZERO;
  const amount = roundToStep(asked, stepOf(market.precision.amount, tickSizeMode), ExactDecimal.ROUND_DOWN);
  if (amount.lte(0)) throw new BrokerRejectedError(`quantity ${request.qty} is below ${market.symbol}'s smallest amount step`);
  const priceStep = stepOf(market.precision.price, tickSizeMode);
  const onTick = (text: string, what: string) => {
    const value = dec(text);
    if (value.lte(0)) throw new BrokerRejectedError(`${what} ${text} must be positive`);
    const rounded = roundToStep(value, priceStep, request.side === 'buy' ? ExactDecimal.ROUND_DOWN : ExactDecimal.ROUND_UP);
    if (rounded.lte(0)) throw new BrokerRejectedError(`${what} ${text} is below ${market.symbol}'s tick`);
    return rounded.toFixed();
  };
  const params: Record<string, string> = { clientOrderId: exchangeClientOrderId };
  let type: 'market' | 'limit' = 'market';
  let price: string | undefined;
  let triggerPrice: string | undefined;
  if (request.orderType === 'limit') {
    if (request.limitPrice == null) throw new BrokerRejectedError('a limit order needs a limit price');
    type = 'limit';
    price = onTick(request.limitPrice, 'limit price');
  } else if (request.orderType === 'stop') {
    if (request.stopPrice == null) throw new BrokerRejectedError('a stop order needs a stop price');
    triggerPrice = onTick(request.stopPrice, 'stop price');
    params.triggerPrice = triggerPrice;
    const stopLimit = request.metadata?.stop_limit_price;
    if (typeof stopLimit === 'string' || typeof stopLimit === 'number') {
      type = 'limit';
      price = onTick(String(stopLimit), 'stop limit price');
    }
  }
  if (type === 'limit') params.timeInForce = TIME_IN_FORCE[request.timeInForce];
  else if (request.timeInForce === 'ioc' || request.timeInForce === 'fok') params.timeInForce = TIME_IN_FORCE[request.timeInForce];
  return { symbol: market.symbol, type, side: request.side, amount: amount.toFixed(), price, triggerPrice, params };
};

// ---- orders ---------------------------------------------------------------------------------

/** ccxt's unified status (open, closed, canceled, expired, rejected) with the filled quantity. */
export const statusFromCcxt = (status: string | undefined, filled: Decimal, amount: Decimal): TBrokerOrderStatus => {
  switch (status) {
    case 'closed':
      return filled.gte(amount) || filled.gt(0) ? 'filled' : 'canceled';
    case 'canceled':
      return 'canceled';
    case 'expired':
      return 'expired';
    case 'rejected':
      return 'rejected';
    default:
      return filled.gt(0) ? 'partially_filled' : 'open';
  }
};

/**
 * The exchange's order list id of an order in one: Binance's `orderListId` in a REST answer, `g`
 * in its user stream's execution report (-1 for none there).
 */
export const orderListIdOf = (order: Pick<CcxtOrderView, 'info'>): string | undefined => {
  const info = (order.info ?? {}) as { orderListId?: unknown; g?: unknown };
  const listId = Number(info.orderListId ?? info.g ?? -1);
  return Number.isInteger(listId) && listId >= 0 ? String(listId) : undefined;
};

/**
 * Why the exchange ended an OCO's leg itself: Binance expires the one leg of an order list when
 * the other trades (or, a stop leg, triggers), where our OCO (the simulator's, the emulator's)
 * cancels it. The simulator's words, so both read alike (metadata.cancel_reason `oco_sibling`).
 */
export const OCO_SIBLING_ENDED = 'oco: the other leg filled (the exchange expired this one)';

/** ccxt's status of the order as ours, with the exchange's reason where it ended the order itself for a reason we name. */
const statusOf = (order: CcxtOrderView, filled: Decimal, amount: Decimal): { status: TBrokerOrderStatus; endReason?: string } => {
  const status = statusFromCcxt(order.status, filled, amount);
  // A leg of an order list expired: its sibling's fill ended it, which our OCO calls a cancel.
  if (status === 'expired' && orderListIdOf(order) !== undefined) return { status: 'canceled', endReason: OCO_SIBLING_ENDED };
  return { status };
};

const orderTypeOf = (order: CcxtOrderView): BrokerOrder['orderType'] => (order.triggerPrice ? 'stop' : order.type === 'market' ? 'market' : 'limit');
const timeInForceOf = (value: string | undefined): BrokerOrder['timeInForce'] => (value === 'IOC' ? 'ioc' : value === 'FOK' ? 'fok' : 'gtc');

/** `clientOrderId` is ours, as the adapter resolved it (client-ids.ts); the exchange's own is kept in metadata when it differs. */
export const fromCcxtOrder = (order: CcxtOrderView, market: CcxtMarketView, key: CcxtAccountKey, clientOrderId = order.clientOrderId ?? ''): BrokerOrder => {
  const amount = dec(decimalText(order.amount));
  const filled = dec(decimalText(order.filled));
  const submittedAt = new Date(order.timestamp ?? Date.now());
  const { status, endReason } = statusOf(order, filled, amount);
  return {
    brokerOrderId: ccxtBrokerOrderId(market.id, order.id ?? ''),
    clientOrderId,
    assetClass: 'crypto',
    mode: key.mode,
    symbol: market.symbol,
    side: order.side === 'sell' ? 'sell' : 'buy',
    orderType: orderTypeOf(order),
    timeInForce: timeInForceOf(order.timeInForce),
    qty: amount.toFixed(),
    filledQty: filled.toFixed(),
    avgFillPrice: filled.gt(0) && order.average ? decimalText(order.average) : null,
    limitPrice: order.type === 'limit' && order.price ? decimalText(order.price) : null,
    stopPrice: order.triggerPrice ? decimalText(order.triggerPrice) : null,
    status,
    ...(endReason === undefined ? {} : { endReason }),
    parentId: null,
    metadata: { exchange_order_id: order.id ?? '', ...(order.clientOrderId && order.clientOrderId !== clientOrderId ? { exchange_client_order_id: order.clientOrderId } : {}) },
    submittedAt,
    updatedAt: new Date(order.lastUpdateTimestamp ?? order.timestamp ?? Date.now()),
  };
};

export const isWorking = (status: TBrokerOrderStatus) => status === 'accepted' || status === 'open' || status === 'partially_filled';

// ---- errors ---------------------------------------------------------------------------------

/** The ccxt error classes the mapping tells apart (ccxt's own exports, passed in so this stays pure). */
export interface CcxtErrorClasses {
  BaseError: abstract new (...args: never[]) => Error;
  NetworkError: abstract new (...args: never[]) => Error;
  ExchangeError: abstract new (...args: never[]) => Error;
  NotSupported: abstract new (...args: never[]) => Error;
}

/**
 * A ccxt failure as a broker error. Everything the exchange answered (ExchangeError and its
 * kinds: InsufficientFunds, InvalidOrder, OrderNotFound, BadSymbol, AuthenticationError, ...)
 * and what ccxt refuses itself (NotSupported, a missing argument) is a refusal with the exchange's
 * message; NetworkError and its kinds (RequestTimeout, ExchangeNotAvailable, DDoSProtection,
 * RateLimitExceeded) and anything unknown are unavailable. `scrub` takes the secret out.
 */
export const brokerErrorOf = (error: unknown, classes: CcxtErrorClasses, scrub: (text: string) => string, what: string): Error => {
  if (error instanceof BrokerRejectedError || error instanceof BrokerUnavailableError) return error;
  const message = scrub(error instanceof Error ? error.message : String(error)).slice(0, 400);
  if (error instanceof classes.NetworkError) return new BrokerUnavailableError(`the exchange could not ${what}: ${message}`);
  if (error instanceof classes.ExchangeError || error instanceof classes.NotSupported || error instanceof classes.BaseError) return new BrokerRejectedError(`the exchange refused to ${what}: ${message}`);
  return new BrokerUnavailableError(`the exchange could not ${what}: ${message}`);
};
