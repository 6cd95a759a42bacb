// A trigger firing (DESIGN §6 "Advanced orders"): the trigger and its order marked triggered (an
// order event `triggered`, audited) in one transaction (an OCO leg meets its sibling there); then
// the child, checked as a placement is but for the rate limit and the lock (it is an exit), goes
// to the broker under `<id>.tr` and is linked to its parent. A child the checks or the broker
// refuse cancels its parent, which the user is told of.
import { createHash } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { BrokerRejectedError, type Broker, type BrokerOrderRequest, type BrokerQuote } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../db/client.ts';
import type { OrderTriggerRow } from '../../db/schema/index.ts';
import type { TOrderEvent } from '../../../contracts/orders.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { Instruments } from '../../instruments/instruments.ts';
import type { Logger } from '../../observability/logger.ts';
import { asOrderCall } from '../../brokers/limits/order-calls.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from '../broker-calls.ts';
import type { OrderAttempt } from '../attempt.ts';
import { GateRefusal } from '../gates.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId, readPreflight } from '../queries.ts';
import { orderEventOf, TERMINAL } from '../records.ts';
import { HWM } from '../trailing.ts';
import { mergeOrderMetadata, updateOrder } from '../write-queries.ts';
import { childClientOrderIdOf } from './trail.ts';
import { cancelTrigger, endFiredTrigger, lockTrigger, markTriggered, setChildBrokerOrderId, type ArmedKey, type TriggerKey } from './trigger-queries.ts';
import { OCO_SIBLING } from './oco.ts';

export const CHILD_CLIENT_ORDER_ID = 'child_client_order_id';
export const CHILD_BROKER_ORDER_ID = 'child_broker_order_id';
const CANCEL_REASON = 'cancel_reason';
/** The cancel_reason of an order whose trigger's child was refused. */
export const TRIGGER_REFUSED = 'trigger_refused';
/** The cancel_reason of an emulated OCO leg whose sibling fired. */
export const OCO_SIBLING_FIRED = 'oco_sibling_fired';

export interface FiringDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  instruments: Pick<Instruments, 'resolve'>;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  /**
   * The checks a fired trigger's child meets before it goes to the broker: the gates but the rate
   * limit and the lock (gates.ts, runChildGates); throws the refusing gate's GateRefusal.
   */
  checkChild: (attempt: OrderAttempt) => Promise<void>;
}

/**
 * The child a fired trigger places: a market order, or a limit at a stop-limit's or a
 * take-profit's limit price. A day order: KIS's every order is one, and a ccxt exchange takes day
 * as good-till-canceled.
 */
const childRequestOf = (row: OrderTriggerRow, clientOrderId: string): BrokerOrderRequest => ({
  clientOrderId,
  symbol: row.symbol,
  side: row.side,
  qty: row.qty,
  orderType: row.limitPrice === null ? 'market' : 'limit',
  timeInForce: 'day',
  limitPrice: row.limitPrice,
  metadata: { parent_client_order_id: row.clientOrderId },
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
/** A trigger as the arming its watch read (trigger-queries.ts). */
export const armedKeyOf = ({ userId, clientOrderId, armedAt }: OrderTriggerRow): ArmedKey => ({ userId, clientOrderId, armedAt });

export const createFiring = ({ db, clock, log, instruments, audit, publisher, checkChild }: FiringDeps) => {
  /**
   * Fires a trigger as its watch read it: marked triggered with its order (event and audit) in one
   * transaction, unless a cancel or a new arming came first ('stale'); then the child goes to the
   * broker and is linked to its parent.
   */
  const fire = async (broker: Broker, row: OrderTriggerRow, step: { hwm: Decimal | null; stopPrice: Decimal }, quote: BrokerQuote): Promise<'stale' | undefined> => {
    const key: TriggerKey = { userId: row.userId, clientOrderId: row.clientOrderId };
    const child = childClientOrderIdOf(row.clientOrderId, sha);
    const at = clock.now();
    const stopPrice = step.stopPrice.toFixed();
    const hwm = step.hwm?.toFixed() ?? null;
    const fired = await db.transaction(async (tx): Promise<{ frames: TOrderEvent[]; yielded?: true; siblingChild?: OrderTriggerRow } | undefined> => {
      // An OCO leg reads its sibling first, under its lock. A take-profit whose stop leg has fired
      // yields to it (that exit is on its way). A stop leg whose take-profit's child works at the
      // broker fires, and has that child canceled there before its own goes (below). A sibling
      // still waiting stays: the first leg to fill ends the other (oco.ts, in the fill's transaction).
      const sibling = row.siblingClientOrderId === null ? undefined : await lockTrigger(tx, { userId: row.userId, clientOrderId: row.siblingClientOrderId });
      if (sibling?.status === 'triggered' && row.orderType === 'limit') {
        const frames = await cancelLeg(tx, key, { [CANCEL_REASON]: OCO_SIBLING_FIRED, sibling_client_order_id: sibling.clientOrderId }, at);
        return frames && { frames, yielded: true };
      }
      const trigger = await markTriggered(tx, armedKeyOf(row), { hwm, stopPrice, childClientOrderId: child, at });
      const order = trigger && (await findOrderByClientId(tx, { ...key, forUpdate: true }));
      if (!order) return undefined;
      const mark = hwm === null ? {} : { [HWM]: Number(hwm) };
      // An OCO's take-profit fired at its limit: it has no stop.
      const isStop = row.orderType !== 'limit';
      const updated = (await updateOrder(tx, key, { ...(isStop ? { stopPrice } : {}), metadata: { ...order.metadata, ...mark, [CHILD_CLIENT_ORDER_ID]: child }, updatedAt: at }))!;
      const payload = { price: quote.price, ...(isStop ? { stop_price: stopPrice } : {}), ...(hwm === null ? {} : { hwm }), ...(row.limitPrice === null ? {} : { limit_price: row.limitPrice }), [CHILD_CLIENT_ORDER_ID]: child };
      await audit(tx, updated, 'order.triggered', payload);
      const frames = await publisher.appendEvents(tx, updated, [orderEventOf(updated, 'triggered', payload, at)]);
      return { frames, ...(sibling?.status === 'triggered' ? { siblingChild: sibling } : {}) };
    });
    if (!fired) return 'stale';
    publisher.announce(fired.frames);
    if (fired.yielded) return undefined;
    log.info({ userId: row.userId, clientOrderId: row.clientOrderId, price: quote.price, stopPrice }, 'a trigger fired; its child goes to the broker');
    let qty = new ExactDecimal(row.qty);
    if (fired.siblingChild) {
      // Never both children at the broker: the take-profit's goes first, and this sells what it left.
      const sold = await endSiblingChild(broker, fired.siblingChild);
      if (sold === undefined) {
        // Not known whether it is gone: nothing is sent. The reconciler finds no child of this
        // leg at the broker and arms it again (reconcile.ts); it fires anew with what is known then.
        log.warn({ userId: row.userId, clientOrderId: row.clientOrderId }, 'the OCO’s other child could not be canceled at the broker; this leg’s waits');
        return undefined;
      }
      qty = qty.minus(sold);
      if (qty.lte(0)) {
        const frames = await db.transaction((tx) => cancelLeg(tx, key, { [CANCEL_REASON]: OCO_SIBLING, sibling_client_order_id: fired.siblingChild!.clientOrderId }, clock.now(), { fired: true }));
        publisher.announce(frames ?? []);
        return undefined;
      }
    }
    const request = { ...childRequestOf(row, child), qty: qty.toFixed() };
    try {
      // The child's checks read the account at the broker: as an order call, ahead of the reads
      // queued for the same budget (limits/order-calls.ts), so a fall that fires many stops at
      // once does not hold each one's exit behind the reads the others' fills set off.
      await asOrderCall(async () => checkChild(await childAttemptOf(row, request, quote)));
    } catch (error) {
      if (error instanceof GateRefusal) {
        await refuseChild(key, { reason: error.error.message, code: error.error.code });
        return undefined;
      }
      // The checks could not be made (the broker's reads failed). The trigger has fired, and its
      // order is an exit the position counts on: it goes to the broker, which judges it as it
      // judges every order; when the broker is down too, the reconciler finds the child or arms
      // the trigger again (reconcile.ts).
      log.warn({ err: error, userId: row.userId, clientOrderId: row.clientOrderId }, 'the trigger’s child could not be checked; the broker judges it');
    }
    try {
      const placed = await withTimeout(broker.placeOrder(request), BROKER_TIMEOUT_MS);
      await db.transaction(async (tx) => {
        await setChildBrokerOrderId(tx, key, placed.brokerOrderId, clock.now());
        await mergeOrderMetadata(tx, key, { [CHILD_BROKER_ORDER_ID]: placed.brokerOrderId });
      });
    } catch (error) {
      if (error instanceof BrokerRejectedError) {
        await refuseChild(key, { reason: error.message, code: 'BROKER_REJECTED' });
        return undefined;
      }
      // It may have reached the broker: its events, if any, still come to the parent.
      log.error({ err: error, userId: row.userId, clientOrderId: row.clientOrderId }, 'the trigger’s child may not have reached the broker');
    }
  };

  /**
   * Ends an OCO leg (its trigger and its order) with the payload's reason: one still working, or,
   * with `fired`, one that fired but whose child never went (its sibling sold it all); undefined
   * when it no longer waits.
   */
  const cancelLeg = async (tx: Tx, key: TriggerKey, payload: { [CANCEL_REASON]: string; sibling_client_order_id: string }, at: Date, { fired = false } = {}): Promise<TOrderEvent[] | undefined> => {
    if (!(await (fired ? endFiredTrigger(tx, key, at) : cancelTrigger(tx, key, at)))) return undefined;
    const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
    if (!order || TERMINAL.has(order.status)) return [];
    const updated = (await updateOrder(tx, key, { status: 'canceled', metadata: { ...order.metadata, [CANCEL_REASON]: payload[CANCEL_REASON] }, updatedAt: at }))!;
    await audit(tx, updated, 'order.canceled', payload);
    return publisher.appendEvents(tx, updated, [orderEventOf(updated, 'canceled', payload, at)]);
  };

  /**
   * Cancels at the broker the child an OCO's other leg placed (a take-profit's limit, resting), as
   * an order call: what it had filled by then, as the broker answers; undefined when that is not
   * known (no child id yet, the broker unreachable). A child the broker will not cancel has ended
   * (filled, mostly): what it filled, read back.
   */
  const endSiblingChild = async (broker: Broker, sibling: OrderTriggerRow): Promise<Decimal | undefined> => {
    const brokerOrderId = sibling.childBrokerOrderId;
    if (!brokerOrderId) return undefined;
    try {
      return new ExactDecimal((await withTimeout(broker.cancelOrder({ brokerOrderId }), BROKER_TIMEOUT_MS)).filledQty);
    } catch (error) {
      if (!(error instanceof BrokerRejectedError)) return undefined;
      const ended = await withTimeout(asOrderCall(() => broker.getOrder({ brokerOrderId })), BROKER_TIMEOUT_MS).catch(() => undefined);
      return ended ? new ExactDecimal(ended.filledQty) : undefined;
    }
  };

  /**
   * The child as the gates judge it: a simple market or limit order of the parent's account, which
   * passed them once, at the price that fired it; a sell, on the units its order held (gates.ts).
   */
  const childAttemptOf = async (row: OrderTriggerRow, request: BrokerOrderRequest, quote: BrokerQuote): Promise<OrderAttempt> => {
    const mode = row.live ? 'live' : 'paper';
    const instrument = await instruments.resolve({ symbol: row.symbol, assetClass: row.assetClass });
    // A live child needs the user's live flag, as every live order does.
    const liveEnabled = row.live && (await readPreflight(db, { userId: row.userId, clientOrderId: request.clientOrderId, assetClass: row.assetClass })).liveEnabled;
    return {
      userId: row.userId,
      assetClass: row.assetClass,
      mode,
      side: row.side,
      qty: request.qty,
      orderType: request.orderType === 'limit' ? 'limit' : 'market',
      limitPrice: request.limitPrice ?? null,
      stopPrice: null,
      trail: null,
      bracket: null,
      orderClass: 'simple',
      instrument,
      liveEnabled,
      lockedUntil: null,
      claimed: [],
      quotedPrice: quote.price,
      sellsItsHold: row.side === 'sell',
      // An OCO leg's sibling holds the pair's units (or cash): this child's own.
      ...(row.siblingClientOrderId === null ? {} : { siblingOf: row.siblingClientOrderId }),
    };
  };

  /**
   * A child refused (by the checks or by the broker) cancels its parent, with the reason: the
   * order event (which the notifications tell the user as a rejection) and its audit record, in
   * one transaction (DESIGN §6).
   */
  const refuseChild = async (key: TriggerKey, { reason, code }: { reason: string; code: string }) => {
    const at = clock.now();
    const frames = await db.transaction(async (tx) => {
      const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
      if (!order) return [];
      const updated = (await updateOrder(tx, key, { status: 'canceled', reason, metadata: { ...order.metadata, [CANCEL_REASON]: TRIGGER_REFUSED }, updatedAt: at }))!;
      const payload = { [CANCEL_REASON]: TRIGGER_REFUSED, code, reason };
      await audit(tx, updated, 'order.canceled', payload);
      return publisher.appendEvents(tx, updated, [orderEventOf(updated, 'canceled', payload, at)]);
    });
    publisher.announce(frames);
  };

  return fire;
};
