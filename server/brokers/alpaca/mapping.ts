// Between Alpaca's wire objects and the project's broker types: statuses, orders, positions,
// the account and trade updates. Pure functions; decimal strings pass through untouched.
import type { TBrokerEventType } from '../../../contracts/brokers.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BrokerRejectedError, type BrokerAccount, type BrokerOrder, type BrokerOrderRequest, type BrokerPosition, type BrokerReplaceRequest, type TBrokerEvent, type TBrokerOrderStatus, type TTradingMode } from '../types.ts';
import type { AlpacaAccount, AlpacaOrder, AlpacaOrderRequest, AlpacaPosition, AlpacaReplaceRequest, AlpacaTradeUpdate, TAlpacaOrderStatus, TAlpacaTradeEvent } from './wire.ts';

export const ALPACA_BROKER_NAME = 'alpaca';

/** Who the adapter's objects belong to: the fields our orders and events carry that Alpaca's do not. */
export interface AlpacaAccountKey {
  userId: number;
  mode: TTradingMode;
}

/**
 * Our status for each of Alpaca's. `working` is a live order whose own status we have no word
 * for (pending a cancel or replace, done for the day, stopped, ...): open, or partially_filled
 * once something filled. `replaced` ends the old order (its successor carries on), so it reads as
 * canceled; `held` is a bracket leg waiting for its entry, accepted but not yet working.
 */
export const ALPACA_STATUS_MAP: Record<TAlpacaOrderStatus, TBrokerOrderStatus | 'working'> = {
  pending_new: 'accepted',
  accepted: 'accepted',
  accepted_for_bidding: 'accepted',
  held: 'accepted',
  new: 'working',
  partially_filled: 'partially_filled',
  pending_cancel: 'working',
  pending_replace: 'working',
  done_for_day: 'working',
  stopped: 'working',
  suspended: 'working',
  calculated: 'working',
  filled: 'filled',
  canceled: 'canceled',
  replaced: 'canceled',
  expired: 'expired',
  rejected: 'rejected',
};

export const statusFromAlpaca = (status: TAlpacaOrderStatus, filledQty: string): TBrokerOrderStatus => {
  const mapped = ALPACA_STATUS_MAP[status];
  if (mapped !== 'working') return mapped;
  return new ExactDecimal(filledQty || '0').gt(0) ? 'partially_filled' : 'open';
};

/** The statuses of an order that can still trade (what `listOpenOrders` answers). */
export const isWorking = (status: TBrokerOrderStatus) => status === 'accepted' || status === 'open' || status === 'partially_filled';

/**
 * Our event for each Alpaca trade update; null for the ones our events have no type for (they
 * change nothing a client acts on: a cancel or replace still pending, a refused cancel, ...).
 */
export const ALPACA_EVENT_MAP: Record<TAlpacaTradeEvent, TBrokerEventType | null> = {
  pending_new: 'accepted',
  accepted: 'accepted',
  new: 'open',
  partial_fill: 'partial_fill',
  fill: 'fill',
  canceled: 'canceled',
  expired: 'expired',
  rejected: 'rejected',
  replaced: 'replaced',
  done_for_day: null,
  pending_cancel: null,
  pending_replace: null,
  stopped: null,
  suspended: null,
  calculated: null,
  order_replace_rejected: null,
  order_cancel_rejected: null,
};

/** A decimal string or number of our request's metadata as Alpaca's decimal text, else undefined. */
const decimalTextOf = (value: unknown): string | undefined => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);

/** The type Alpaca is sent and the prices that go with it: a stop with a kept limit is Alpaca's stop_limit. */
const typeFieldsOf = (request: BrokerOrderRequest): Pick<AlpacaOrderRequest, 'type' | 'limit_price' | 'stop_price' | 'trail_percent' | 'trail_price'> => {
  if (request.orderType === 'trailing_stop') {
    const percent = decimalTextOf(request.metadata?.trail_percent);
    const price = decimalTextOf(request.metadata?.trail_price);
    if ((percent === undefined) === (price === undefined)) throw new BrokerRejectedError('a trailing stop needs exactly one of trail_percent and trail_price');
    return { type: 'trailing_stop', ...(percent !== undefined ? { trail_percent: percent } : { trail_price: price! }) };
  }
  const stopLimit = request.orderType === 'stop' ? decimalTextOf(request.metadata?.stop_limit_price) : undefined;
  return {
    type: stopLimit !== undefined ? 'stop_limit' : request.orderType,
    ...(stopLimit !== undefined ? { limit_price: stopLimit } : request.limitPrice != null ? { limit_price: request.limitPrice } : {}),
    ...(request.stopPrice != null ? { stop_price: request.stopPrice } : {}),
  };
};

/** A bracket's stop leg in Alpaca's shape: a stop, or a stop-limit with its limit. */
const stopLossOf = (stopPrice: string, limitPrice: string | null): NonNullable<AlpacaOrderRequest['stop_loss']> => ({ stop_price: stopPrice, ...(limitPrice != null ? { limit_price: limitPrice } : {}) });

/**
 * The legs in Alpaca's classes: `bracket` (the entry with both legs), `oto` (the entry with one),
 * `oco` (no entry: a sell limit at the take-profit and the stop leg, working at once; Alpaca takes
 * the take-profit as `take_profit.limit_price` of a `limit` order). A trailing leg Alpaca cannot
 * hold: the broker gate refuses it before the call, and this refuses it again.
 */
const classFieldsOf = (request: BrokerOrderRequest): Pick<AlpacaOrderRequest, 'order_class' | 'take_profit' | 'stop_loss' | 'limit_price'> => {
  const { bracket } = request;
  if (!bracket) return {};
  if (bracket.trail) throw new BrokerRejectedError('Alpaca cannot hold a trailing stop leg in a bracket');
  const takeProfit = bracket.takeProfit != null ? { take_profit: { limit_price: bracket.takeProfit } } : {};
  const stopLoss = bracket.stopLoss != null ? { stop_loss: stopLossOf(bracket.stopLoss, bracket.stopLossLimit) } : {};
  if (request.orderClass === 'oco') {
    if (request.limitPrice == null || bracket.stopLoss == null) throw new BrokerRejectedError('an oco needs a limit price and a stop leg');
    return { order_class: 'oco', take_profit: { limit_price: request.limitPrice }, ...stopLoss };
  }
  const legs = (bracket.takeProfit != null ? 1 : 0) + (bracket.stopLoss != null ? 1 : 0);
  if (request.orderClass === 'oto') {
    if (legs !== 1) throw new BrokerRejectedError('an oto has exactly one exit leg');
    return { order_class: 'oto', ...takeProfit, ...stopLoss };
  }
  if (legs !== 2) throw new BrokerRejectedError('an Alpaca bracket needs a take_profit and a stop_loss');
  return { order_class: 'bracket', ...takeProfit, ...stopLoss };
};

export const toAlpacaOrderRequest = (request: BrokerOrderRequest): AlpacaOrderRequest => {
  const body: AlpacaOrderRequest = {
    symbol: request.symbol,
    qty: request.qty,
    side: request.side,
    ...typeFieldsOf(request),
    // Our four names are Alpaca's own.
    time_in_force: request.timeInForce,
    client_order_id: request.clientOrderId,
  };
  const classFields = classFieldsOf(request);
  // An oco's take-profit travels in take_profit, not as the order's own limit.
  if (classFields.order_class === 'oco') delete body.limit_price;
  return { ...body, ...classFields };
};

/**
 * Alpaca's replace makes a new order, which needs a client order id of its own: ours with `~r` and
 * a tag, where `~` is a character no client order id of ours may hold (contracts/orders.ts). Its
 * trade updates then still name our order, whatever arrives first, the answer or the stream.
 */
const REPLACEMENT_TAG = /~r[0-9a-z]+$/;
export const replacementClientOrderId = (clientOrderId: string, tag: string) => `${ourClientOrderId(clientOrderId)}~r${tag}`;
/** Our client order id of an Alpaca order: a replacement's, with its tag taken off. */
export const ourClientOrderId = (alpacaClientOrderId: string) => alpacaClientOrderId.replace(REPLACEMENT_TAG, '');

export const toAlpacaReplaceRequest = (request: BrokerReplaceRequest, tag: string): AlpacaReplaceRequest => ({
  ...(request.clientOrderId !== undefined ? { client_order_id: replacementClientOrderId(request.clientOrderId, tag) } : {}),
  ...(request.qty != null ? { qty: request.qty } : {}),
  ...(request.limitPrice != null ? { limit_price: request.limitPrice } : {}),
  ...(request.stopPrice != null && request.trail === undefined ? { stop_price: request.stopPrice } : {}),
  ...(request.trail !== undefined ? { trail: 'percent' in request.trail ? request.trail.percent : request.trail.price } : {}),
});

/** Alpaca's time in force beyond ours (opg, cls: auction orders placed elsewhere) read as day orders. */
const timeInForceOf = (tif: AlpacaOrder['time_in_force']): BrokerOrder['timeInForce'] => (tif === 'gtc' || tif === 'ioc' || tif === 'fok' ? tif : 'day');

/** Alpaca's stop_limit and trailing_stop are stops to our books, as ours collapse them (their limit, trail and mark in metadata). */
const orderTypeOf = (type: AlpacaOrder['type']): BrokerOrder['orderType'] => (type === 'market' || type === 'limit' ? type : 'stop');

/** What Alpaca's order says beyond our columns: a stop-limit's limit, a trailing stop's trail and mark. */
const typeMetadataOf = (order: AlpacaOrder): Record<string, unknown> => {
  if (order.type === 'stop_limit' && order.limit_price !== null) return { alpaca_type: order.type, stop_limit_price: order.limit_price };
  if (order.type !== 'trailing_stop') return {};
  return {
    alpaca_type: order.type,
    ...(order.trail_percent != null ? { trail_percent: order.trail_percent } : order.trail_price != null ? { trail_price: order.trail_price } : {}),
    ...(order.hwm != null ? { hwm: order.hwm } : {}),
  };
};

export const fromAlpacaOrder = (order: AlpacaOrder, key: AlpacaAccountKey, parentId: string | null = null, metadata: Record<string, unknown> = {}): BrokerOrder => ({
  brokerOrderId: order.id,
  clientOrderId: ourClientOrderId(order.client_order_id),
  assetClass: 'us_equity',
  mode: key.mode,
  symbol: order.symbol,
  side: order.side,
  orderType: orderTypeOf(order.type),
  timeInForce: timeInForceOf(order.time_in_force),
  qty: order.qty ?? '0',
  filledQty: order.filled_qty,
  avgFillPrice: order.filled_avg_price,
  limitPrice: order.limit_price,
  stopPrice: order.stop_price,
  status: statusFromAlpaca(order.status, order.filled_qty),
  parentId,
  metadata: {
    ...metadata,
    alpaca_status: order.status,
    ...(order.order_class && order.order_class !== 'simple' ? { order_class: order.order_class } : {}),
    ...typeMetadataOf(order),
    ...(order.replaces ? { replaces: order.replaces } : {}),
  },
  submittedAt: new Date(order.submitted_at ?? order.created_at),
  updatedAt: new Date(order.updated_at ?? order.created_at),
});

/** An order and its bracket legs as one flat list, each leg pointing at its entry. */
export const flattenAlpacaOrder = (order: AlpacaOrder, key: AlpacaAccountKey): BrokerOrder[] => [
  fromAlpacaOrder(order, key),
  ...(order.legs ?? []).map((leg) => fromAlpacaOrder(leg, key, order.id)),
];

export const fromAlpacaPosition = (position: AlpacaPosition): BrokerPosition => ({
  symbol: position.symbol,
  // Alpaca signs a short's qty; the side says so too, in case a venue leaves the sign out.
  qty: position.side === 'short' && !position.qty.startsWith('-') ? `-${position.qty}` : position.qty,
  avgEntryPrice: position.avg_entry_price,
  currentPrice: position.current_price,
  // Alpaca reports only the open position's unrealised P&L.
  realizedPnl: '0',
  currency: 'USD',
});

export const fromAlpacaAccount = (account: AlpacaAccount, mode: TTradingMode, asOf: Date): BrokerAccount => ({
  broker: ALPACA_BROKER_NAME,
  paper: mode === 'paper',
  currency: account.currency,
  cash: account.cash,
  equity: account.equity,
  buyingPower: account.buying_power,
  asOf,
});

/** Our event for a trade update, or null where our events have no type for it. */
export const eventFromTradeUpdate = (update: AlpacaTradeUpdate, key: AlpacaAccountKey): TBrokerEvent | null => {
  const type = ALPACA_EVENT_MAP[update.event];
  if (!type) return null;
  const { order } = update;
  const isFill = type === 'fill' || type === 'partial_fill';
  // `replaced` reports the old order, ended; to us the order works on as its successor.
  const replaced = type === 'replaced' && order.replaced_by !== null;
  return {
    type,
    user_id: key.userId,
    asset_class: 'us_equity',
    mode: key.mode,
    broker: ALPACA_BROKER_NAME,
    broker_order_id: replaced ? order.replaced_by! : order.id,
    client_order_id: ourClientOrderId(order.client_order_id),
    symbol: order.symbol,
    status: statusFromAlpaca(replaced ? 'new' : order.status, order.filled_qty),
    filled_qty: order.filled_qty,
    avg_fill_price: order.filled_avg_price,
    // Alpaca charges no commission on US equities.
    fill: isFill && update.execution_id && update.qty && update.price ? { execution_id: update.execution_id, qty: update.qty, price: update.price, fee: '0' } : null,
    // Alpaca's trade updates say what happened, never why.
    reason: null,
    at: new Date(update.timestamp ?? order.updated_at ?? order.created_at).toISOString(),
  };
};
