// Pure builders of what the order service answers and writes: the order response, the request as
// a replay compares it, the change a broker event makes to an order's row, order event frames,
// outbox rows, audit records, and the rows of an intent, an acceptance and a broker-made child.
// No I/O: the instant comes in as `at`.
import type { TBrokerEvent, TBrokerEventType, TBrokerOrderStatus } from '../../contracts/brokers.ts';
import { CURRENCY_OF_ASSET_CLASS } from '../../contracts/common.ts';
import type { TOrderEvent, TOrderResponse, TOrderStatus, TPlaceOrderRequest } from '../../contracts/orders.ts';
import type { AuditRecord, RequestOrigin } from '../audit/log.ts';
import { ExactDecimal } from '../decimal.ts';
import { brokerOrderTypeOf, type BrokerOrder, type BrokerOrderRequest } from '../brokers/types.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { NewEvent } from '../events/bus.ts';
import { feesOfFill, metadataAfter } from './order-metadata.ts';
import { acceptedTrail, movedStopOf, recordedTypeOf, trailMetadataOf } from './trailing.ts';
import { bracketResponseOf, bracketRowOf, brokerBracketOf } from './brackets.ts';
import type { OrderInsert, OutboxInsert, recordAnswer } from './write-queries.ts';

export const TERMINAL = new Set<TOrderStatus>(['filled', 'canceled', 'rejected', 'expired']);

const num = (value: string | null) => (value === null ? null : Number(value));
/** The reason an intent stays pending when several broker orders could be it (see `reconcile`). */
export const AMBIGUOUS = 'ambiguous_at_broker';
/** The reason of a pending order whose placement failed with its outcome unknown. */
export const UNCONFIRMED = 'broker_unavailable';
/** A refused or failed order has no broker id: it gets one of its own so that it can be listed and read. */
export const localBrokerId = (clientOrderId: string) => `rejected-${clientOrderId}`;

export const toOrderResponse = (row: OrderRow): TOrderResponse => ({
  order_id: row.clientOrderId,
  broker_order_id: row.brokerOrderId ?? localBrokerId(row.clientOrderId),
  client_order_id: row.clientOrderId,
  asset_class: row.assetClass,
  exchange: row.broker,
  symbol: row.symbol,
  side: row.side,
  qty: Number(row.qty),
  filled_qty: Number(row.filledQty),
  avg_fill_price: num(row.avgFillPrice),
  order_type: row.orderType,
  time_in_force: row.timeInForce,
  limit_price: num(row.limitPrice),
  stop_price: num(row.stopPrice),
  status: row.status,
  currency: CURRENCY_OF_ASSET_CLASS[row.assetClass],
  submitted_at: row.submittedAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
  bracket: row.bracket ? bracketResponseOf(row.bracket) : null,
  metadata: { ...row.metadata, live: row.live, ...(row.reason ? { reason: row.reason } : {}) },
});

/** The creation answer: the order as the broker accepted it, whatever its events did since. */
export const acceptedResponse = (row: OrderRow, accepted: BrokerOrder): TOrderResponse => ({ ...toOrderResponse(row), broker_order_id: accepted.brokerOrderId, status: 'accepted', filled_qty: 0, avg_fill_price: null });

/** The request as it will be compared with a replay: symbol forms and defaults settled. */
export const normalisedRequest = (request: TPlaceOrderRequest, symbol: string) => ({
  asset_class: request.asset_class,
  symbol,
  side: request.side,
  qty: new ExactDecimal(request.qty).toFixed(),
  order_type: request.order_type,
  limit_price: request.limit_price ?? null,
  stop_price: request.stop_price ?? null,
  // Only when given: the hash of every request made before trails existed stays what it was.
  ...trailMetadataOf(request),
  // A leg or a trail left out is left out of the hash too, so an older request's hash stays.
  bracket: request.bracket
    ? { take_profit: request.bracket.take_profit, stop_loss: request.bracket.stop_loss, stop_loss_limit: request.bracket.stop_loss_limit ?? null, ...trailMetadataOf(request.bracket) }
    : null,
  ...(request.order_class === undefined ? {} : { order_class: request.order_class }),
  time_in_force: request.time_in_force,
  report_uuid: request.report_uuid ?? null,
  live_mode: request.live_mode,
});

/**
 * What a broker event changes in the order's row, or undefined when it changes nothing. A
 * finished order stays finished whatever arrives late, and a late event never takes back what is
 * already recorded as filled (by the reconciler, say).
 */
export const changeByEvent = (row: OrderRow, event: TBrokerEvent) => {
  const status = TERMINAL.has(row.status) && !TERMINAL.has(event.status) ? row.status : event.status;
  const brokerOrderId = row.brokerOrderId && !row.brokerOrderId.startsWith('rejected-') ? row.brokerOrderId : event.broker_order_id;
  const behind = new ExactDecimal(event.filled_qty).lt(row.filledQty);
  const filledQty = behind ? row.filledQty : event.filled_qty;
  const avgFillPrice = behind ? row.avgFillPrice : event.avg_fill_price;
  // A replace changes what the broker holds (qty, prices), not these fields: it is always news.
  // The broker's own change of a quantity (a bracket leg following its entry) says the new one.
  const qty = event.qty === undefined ? {} : { qty: event.qty };
  // A trailing stop's stop, moved by its broker with the price.
  const stop = movedStopOf(event) ?? {};
  const same =
    event.type !== 'replaced' &&
    !event.fill &&
    status === row.status &&
    brokerOrderId === row.brokerOrderId &&
    new ExactDecimal(filledQty).eq(row.filledQty) &&
    (avgFillPrice === null ? row.avgFillPrice === null : row.avgFillPrice !== null && new ExactDecimal(avgFillPrice).eq(row.avgFillPrice));
  return same ? undefined : { status, brokerOrderId, filledQty, avgFillPrice, ...qty, ...stop };
};

/** A broker's `expired` reaches clients as `canceled` with status `expired`. */
export const eventTypeOf = (event: Pick<TBrokerEvent, 'type'>): TOrderEvent['event_type'] => (event.type === 'expired' ? 'canceled' : event.type);

/** The broker event that reports each status. */
const EVENT_OF_STATUS: Record<TBrokerOrderStatus, TBrokerEventType> = {
  accepted: 'accepted',
  open: 'open',
  partially_filled: 'partial_fill',
  filled: 'fill',
  canceled: 'canceled',
  rejected: 'rejected',
  expired: 'expired',
};

/** The order event that tells a status learned without its broker event (the reconciler's link). */
export const eventTypeOfStatus = (status: TBrokerOrderStatus): TOrderEvent['event_type'] => eventTypeOf({ type: EVENT_OF_STATUS[status] });

export const orderEventOf = (row: OrderRow, eventType: TOrderEvent['event_type'], payload: Record<string, unknown>, at: Date): TOrderEvent => ({
  type: 'order_event',
  event_type: eventType,
  asset_class: row.assetClass,
  broker: row.broker,
  // An order the broker has not answered yet has no broker id: a placeholder says so.
  broker_order_id: row.brokerOrderId ?? (row.status === 'pending' ? `pending-${row.clientOrderId}` : localBrokerId(row.clientOrderId)),
  client_order_id: row.clientOrderId,
  symbol: row.symbol,
  time_in_force: row.timeInForce,
  filled_qty: Number(row.filledQty),
  avg_fill_price: num(row.avgFillPrice),
  status: row.status,
  received_at: at.toISOString(),
  payload,
});

/** The outbox rows of order events (and of a fill's trade, for /ws/live). */
export const outboxRowsOf = (row: Pick<OrderRow, 'userId' | 'symbol' | 'assetClass' | 'side'>, frames: TOrderEvent[], at: Date, fill?: NonNullable<TBrokerEvent['fill']>): OutboxInsert[] => {
  const rows: NewEvent[] = frames.map((frame) => ({ userId: row.userId, channel: 'orders', frame, at }));
  if (fill) {
    const trade = { type: 'trade', symbol: row.symbol, asset_class: row.assetClass, side: row.side, amount: Number(fill.qty), price: Number(fill.price), fee: Number(fill.fee), fees: feesOfFill(fill), ts: at.toISOString() };
    rows.push({ userId: row.userId, channel: 'live', frame: trade, at });
  }
  return rows;
};

export type AuditedOrder = Pick<OrderRow, 'userId' | 'clientOrderId' | 'assetClass' | 'broker' | 'live' | 'brokerOrderId'>;

export const auditRecordOf = (row: AuditedOrder, action: string, data: Record<string, unknown>, at: Date, origin?: RequestOrigin): AuditRecord => ({
  action,
  actorUserId: origin ? row.userId : null,
  subjectUserId: row.userId,
  origin,
  data: { client_order_id: row.clientOrderId, broker_order_id: row.brokerOrderId, asset_class: row.assetClass, broker: row.broker, live: row.live, ...data },
  at,
});

/** The broker's answer to a placement as the order's `accepted` event carries it. */
const acceptedPayload = (accepted: BrokerOrder) => ({ broker_order: { ...accepted, submittedAt: accepted.submittedAt.toISOString(), updatedAt: accepted.updatedAt.toISOString() } });

/** What a `placed` frame carries: the request as a replay compares it. */
export const placedPayloadOf = (request: TPlaceOrderRequest, symbol: string) => ({ request: normalisedRequest(request, symbol) });
export type TPlacedPayload = ReturnType<typeof placedPayloadOf>;

/**
 * The order's `placed` frame, written with the broker's answer so that it carries the broker's id
 * (DESIGN §6): the accepted order's, or a refused order's own local id.
 */
export const placedFrameOf = (intent: OrderRow, brokerOrderId: string, payload: TPlacedPayload, at: Date): TOrderEvent =>
  orderEventOf({ ...intent, brokerOrderId, status: 'pending' }, 'placed', payload, at);

/** The order as the broker accepted it, with its `accepted` event. */
export const acceptedRowOf = (intent: OrderRow, accepted: BrokerOrder, at: Date) => {
  const row: OrderRow = { ...intent, ...acceptedTrail(intent, accepted), brokerOrderId: accepted.brokerOrderId, status: 'accepted', updatedAt: at };
  return { row, event: orderEventOf(row, 'accepted', acceptedPayload(accepted), at) };
};

type AnswerRecords = Parameters<typeof recordAnswer>[3];

/**
 * A paper order's acceptance with the broker events that came with or before it: the order's
 * state after them, their fills, audit records and events, ready for one statement.
 */
export const acceptanceRecordsOf = (intent: OrderRow, placed: TPlacedPayload, accepted: BrokerOrder, events: readonly TBrokerEvent[], at: Date) => {
  const { row: acceptedRow, event } = acceptedRowOf(intent, accepted, at);
  const frames = [placedFrameOf(intent, accepted.brokerOrderId, placed, at), event];
  const audits = [auditRecordOf(acceptedRow, 'order.accepted', { broker_status: accepted.status }, at)];
  const outbox = outboxRowsOf(acceptedRow, frames, at);
  const fills: AnswerRecords['fills'] = [];
  let row = acceptedRow;
  for (const event of events) {
    // A broker reports every order of the account: only this order's events belong here.
    if (event.client_order_id !== intent.clientOrderId) continue;
    const change = changeByEvent(row, event);
    if (!change) continue;
    const { fill } = event;
    const recordsFill = fill && !new ExactDecimal(row.filledQty).plus(fill.qty).gt(event.filled_qty);
    const metadata = metadataAfter(row, event, recordsFill === true);
    row = { ...row, ...change, ...(metadata ? { metadata } : {}), updatedAt: at };
    if (recordsFill) fills.push({ executionId: fill.execution_id, qty: fill.qty, price: fill.price, fee: fill.fee, tax: fill.tax ?? '0', at: new Date(event.at) });
    const frame = orderEventOf(row, eventTypeOf(event), event, at);
    frames.push(frame);
    audits.push(auditRecordOf(row, `order.${event.type}`, { event_type: event.type, status: event.status, payload: event }, at));
    outbox.push(...outboxRowsOf(row, [frame], at, recordsFill ? fill : undefined));
  }
  const { brokerOrderId, status, filledQty, avgFillPrice, stopPrice, metadata, updatedAt } = row;
  const records: AnswerRecords = { fills, audit: audits, events: outbox };
  return { acceptedRow, frames, change: { brokerOrderId, status, filledQty, avgFillPrice, stopPrice, metadata, updatedAt }, records };
};

/** The pending row of an order about to go to its broker, as its intent records it. */
export const intentRowOf = ({
  userId,
  clientOrderId,
  request,
  live,
  symbol,
  broker,
  qty,
  limitPrice,
  stopPrice,
  metadata,
  requestHash,
  at,
}: {
  userId: number;
  clientOrderId: string;
  request: TPlaceOrderRequest;
  live: boolean;
  symbol: string;
  broker: string;
  qty: string;
  limitPrice: string | null;
  stopPrice: string | null;
  metadata: Record<string, unknown>;
  requestHash: string;
  at: Date;
}): OrderInsert & OrderRow => ({
  userId,
  clientOrderId,
  brokerOrderId: null,
  assetClass: request.asset_class,
  live,
  broker,
  symbol,
  side: request.side,
  orderType: request.order_type,
  timeInForce: request.time_in_force,
  qty,
  filledQty: '0',
  avgFillPrice: null,
  limitPrice,
  stopPrice,
  status: 'pending',
  reason: null,
  bracket: request.bracket ? bracketRowOf(request.bracket) : null,
  metadata,
  requestHash,
  submittedAt: at,
  updatedAt: at,
});

/** The order as its broker is asked to take it. */
export const brokerRequestOf = (intent: OrderRow, request: TPlaceOrderRequest): BrokerOrderRequest => ({
  clientOrderId: intent.clientOrderId,
  symbol: intent.symbol,
  side: request.side,
  qty: intent.qty,
  // stop_limit is collapsed to stop at the broker layer; its limit stays in metadata.
  orderType: brokerOrderTypeOf(request.order_type),
  timeInForce: request.time_in_force,
  limitPrice: request.order_type === 'stop_limit' ? null : intent.limitPrice,
  stopPrice: intent.stopPrice,
  bracket: request.bracket ? brokerBracketOf(request.bracket) : null,
  ...(request.order_class === 'oto' || request.order_class === 'oco' ? { orderClass: request.order_class } : {}),
  metadata: intent.metadata,
});

/** The order row of a child the broker created (a bracket's leg), from the broker's own record of it. */
/** The entry's `metadata.source`, for its legs to carry (none on a row written before sources were kept). */
const sourceOf = (parent: Pick<OrderRow, 'metadata'>): { source?: unknown } => (parent.metadata.source === undefined ? {} : { source: parent.metadata.source });

/**
 * A child the broker created (a bracket's leg) as our row: named after its entry, and placed by
 * whoever placed the entry (its `metadata.source`), since no request of anyone placed the leg.
 */
export const childOrderRowOf = (event: TBrokerEvent, order: BrokerOrder, parent: Pick<OrderRow, 'clientOrderId' | 'metadata'> | undefined, at: Date): OrderInsert => {
  const { orderType, metadata } = recordedTypeOf(order);
  return {
    userId: event.user_id,
    clientOrderId: order.clientOrderId,
    brokerOrderId: order.brokerOrderId,
    assetClass: order.assetClass,
    live: order.mode === 'live',
    broker: event.broker,
    symbol: order.symbol,
    side: order.side,
    orderType,
    timeInForce: order.timeInForce,
    qty: order.qty,
    limitPrice: order.limitPrice,
    stopPrice: order.stopPrice,
    status: 'accepted' as const,
    bracket: null,
    metadata: { ...metadata, ...(parent ? { parent_client_order_id: parent.clientOrderId, ...sourceOf(parent) } : {}) },
    requestHash: null,
    submittedAt: order.submittedAt,
    updatedAt: at,
  };
};
