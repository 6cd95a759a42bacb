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

export const toAlpacaOrderRequest = (request: BrokerOrderRequest): AlpacaOrderRequest => {
  const body: AlpacaOrderRequest = {
    symbol: request.symbol,
    qty: request.qty,
    side: request.side,
    type: request.orderType,
    // Our four names are Alpaca's own.
    time_in_force: request.timeInForce,
    client_order_id: request.clientOrderId,
  };
  if (request.limitPrice != null) body.limit_price = request.limitPrice;
  if (request.stopPrice != null) body.stop_price = request.stopPrice;
  if (request.bracket) {
    // Refused before the call by the broker gate (nativeOrderClasses); a defence here.
    if (request.orderClass === 'oto' || request.bracket.takeProfit === null || request.bracket.stopLoss === null || request.bracket.trail) {
      throw new BrokerRejectedError('Alpaca brackets need a take_profit and a stop_loss here (oto and trailing legs are not supported by this adapter yet)');
    }
    body.order_class = 'bracket';
    body.take_profit = { limit_price: request.bracket.takeProfit };
    body.stop_loss = { stop_price: request.bracket.stopLoss, ...(request.bracket.stopLossLimit != null ? { limit_price: request.bracket.stopLossLimit } : {}) };
  }
  return body;
};

export const toAlpacaReplaceRequest = (request: BrokerReplaceRequest): AlpacaReplaceRequest => ({
  ...(request.qty != null ? { qty: request.qty } : {}),
  ...(request.limitPrice != null ? { limit_price: request.limitPrice } : {}),
  ...(request.stopPrice != null ? { stop_price: request.stopPrice } : {}),
});

/** Alpaca's time in force beyond ours (opg, cls: auction orders placed elsewhere) read as day orders. */
const timeInForceOf = (tif: AlpacaOrder['time_in_force']): BrokerOrder['timeInForce'] => (tif === 'gtc' || tif === 'ioc' || tif === 'fok' ? tif : 'day');

/** A stop_limit or trailing stop (placed outside this service) is a stop to our books, as ours collapse. */
const orderTypeOf = (type: AlpacaOrder['type']): BrokerOrder['orderType'] => (type === 'market' || type === 'limit' ? type : 'stop');

export const fromAlpacaOrder = (order: AlpacaOrder, key: AlpacaAccountKey, parentId: string | null = null, metadata: Record<string, unknown> = {}): BrokerOrder => ({
  brokerOrderId: order.id,
  clientOrderId: order.client_order_id,
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
    ...(order.type === 'stop_limit' || order.type === 'trailing_stop' ? { alpaca_type: order.type } : {}),
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
  return {
    type,
    user_id: key.userId,
    asset_class: 'us_equity',
    mode: key.mode,
    broker: ALPACA_BROKER_NAME,
    broker_order_id: order.id,
    client_order_id: order.client_order_id,
    symbol: order.symbol,
    status: statusFromAlpaca(order.status, order.filled_qty),
    filled_qty: order.filled_qty,
    avg_fill_price: order.filled_avg_price,
    // Alpaca charges no commission on US equities.
    fill: isFill && update.execution_id && update.qty && update.price ? { execution_id: update.execution_id, qty: update.qty, price: update.price, fee: '0' } : null,
    // Alpaca's trade updates say what happened, never why.
    reason: null,
    at: new Date(update.timestamp ?? order.updated_at ?? order.created_at).toISOString(),
  };
};
