// What a user (or the service itself) asks of a working order or position through its broker:
// cancel, replace, cancel every working order, close a position.
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { misplacedPriceFields, STATUSES_OF_FILTER, type TOrderResponse, type TReplaceOrderRequest } from '../../contracts/orders.ts';
import type { RequestOrigin } from '../audit/log.ts';
import { ExactDecimal } from '../decimal.ts';
import { brokerError } from '../brokers/errors.ts';
import type { BrokerOrder } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { BROKER_TIMEOUT_MS, viaBroker, withTimeout, type BrokerOfAccount } from './broker-calls.ts';
import type { GateDeps } from './attempt.ts';
import { GateRefusal, runGates } from './gates.ts';
import type { OrderAudit } from './order-audit.ts';
import type { PlaceOptions } from './prepare.ts';
import { CANCEL_REQUESTED_BY } from './order-metadata.ts';
import { listAuditedOrders, readPreflight } from './queries.ts';
import { replaceAttemptOf, replacedQtyOf } from './replace-attempt.ts';
import { retrailedMetadata, trailMetadataOf, trailRequestOf } from './trailing.ts';
import { mergeOrderMetadata, updateOrder } from './write-queries.ts';
import { findOwnOrder } from './reads.ts';
import { orderEventOf, TERMINAL, toOrderResponse } from './records.ts';
import type { OrderRow } from '../db/schema/index.ts';
import { EMULATED } from './emulator/emulated-submission.ts';
import { createRearm } from './emulator/rearm.ts';
import { cancelTrigger, findTrigger } from './emulator/trigger-queries.ts';
import type { OrderPublisher } from './publisher.ts';

export interface CommandsDeps {
  db: Db;
  clock: Clock;
  instruments: Instruments;
  forUser: BrokerOfAccount;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  /** Wakes the account's trigger watch (an emulated order was canceled or replaced). */
  onTriggerChange: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => void;
  /** The placement, for a position's closing sell. */
  place: (opts: PlaceOptions) => Promise<TOrderResponse>;
  /** What the placement's gates use: a replace passes the same gates. */
  gateDeps: GateDeps;
}

export const createCommands = ({ db, clock, instruments, forUser, audit, publisher, onTriggerChange, place, gateDeps }: CommandsDeps) => {
  const rearm = createRearm({ db, clock, audit, publisher, onTriggerChange });
  /**
   * Cancels an emulated order: no broker holds it, so its trigger and the order end together in
   * one transaction, audited, with its `canceled` event; an emulated OCO's other leg ends with it.
   * A trigger that fired first leaves the order to its child, which a cancel ends at the broker.
   */
  const cancelEmulated = async (row: OrderRow, { origin, by }: { origin?: RequestOrigin; by?: string }) => {
    const at = clock.now();
    const frames = await db.transaction(async (tx) => {
      const trigger = await cancelTrigger(tx, row, at);
      if (!trigger) return undefined;
      const metadata = by ? { ...row.metadata, [CANCEL_REQUESTED_BY]: by } : row.metadata;
      const updated = (await updateOrder(tx, row, { status: 'canceled', metadata, updatedAt: at }))!;
      await audit(tx, updated, 'order.cancel_requested', by ? { by } : {}, origin);
      await audit(tx, updated, 'order.canceled', { emulated: true });
      const frames = await publisher.appendEvents(tx, updated, [orderEventOf(updated, 'canceled', { emulated: true }, at)]);
      const siblingKey = trigger.siblingClientOrderId === null ? undefined : { userId: row.userId, clientOrderId: trigger.siblingClientOrderId };
      if (!siblingKey || !(await cancelTrigger(tx, siblingKey, at))) return frames;
      const sibling = (await updateOrder(tx, siblingKey, { status: 'canceled', updatedAt: at }))!;
      const payload = { emulated: true, sibling_client_order_id: row.clientOrderId };
      await audit(tx, sibling, 'order.canceled', payload);
      return [...frames, ...(await publisher.appendEvents(tx, sibling, [orderEventOf(sibling, 'canceled', payload, at)]))];
    });
    if (!frames) return cancelTriggeredChild(row, { origin, by });
    publisher.announce(frames);
    onTriggerChange({ userId: row.userId, assetClass: row.assetClass, mode: row.live ? 'live' : 'paper' });
  };

  /**
   * Cancels an emulated order whose trigger fired: its child is the broker's (a stop-limit's limit
   * resting there), canceled at the broker, whose `canceled` event comes to this order as the
   * child's events do. Without a child at the broker (not placed yet), 422 ORDER_NOT_CANCELABLE.
   */
  const cancelTriggeredChild = async (row: OrderRow, { origin, by }: { origin?: RequestOrigin; by?: string }) => {
    const childBrokerOrderId = (await findTrigger(db, row))?.childBrokerOrderId;
    if (!childBrokerOrderId) throw new AppError('ORDER_NOT_CANCELABLE', 'The order has triggered and its order is not at the broker yet');
    const broker = await forUser({ userId: row.userId, assetClass: row.assetClass, mode: row.live ? 'live' : 'paper' });
    await audit(db, row, 'order.cancel_requested', { ...(by ? { by } : {}), child_broker_order_id: childBrokerOrderId }, origin);
    if (by) await mergeOrderMetadata(db, row, { [CANCEL_REQUESTED_BY]: by });
    try {
      await withTimeout(broker.cancelOrder({ brokerOrderId: childBrokerOrderId }), BROKER_TIMEOUT_MS);
    } catch (error) {
      throw brokerError(error, 'cancel');
    }
  };

  /** Cancels a working order; without an origin the service itself asks (the kill switch), named by `by`. */
  const cancel = async ({ user, brokerOrderId, assetClass, origin, by }: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass; origin?: RequestOrigin; by?: string }): Promise<void> => {
    const row = await findOwnOrder(db, { user, brokerOrderId, assetClass });
    if (TERMINAL.has(row.status) || row.status === 'pending') throw new AppError('ORDER_NOT_CANCELABLE', `The order is ${row.status} and cannot be canceled`);
    if (row.metadata[EMULATED] === true) return cancelEmulated(row, { origin, by });
    const broker = await forUser({ userId: user.id, assetClass, mode: row.live ? 'live' : 'paper' });
    await audit(db, row, 'order.cancel_requested', by ? { by } : {}, origin);
    // The service's own cancel (the kill switch's) shows as the order's cancel_reason once the broker cancels it.
    if (by) await mergeOrderMetadata(db, row, { [CANCEL_REQUESTED_BY]: by });
    try {
      await withTimeout(broker.cancelOrder({ brokerOrderId }), BROKER_TIMEOUT_MS);
    } catch (error) {
      throw brokerError(error, 'cancel');
    }
  };

  /**
   * Replaces the qty, limit or stop of a working order at its broker, then records the order as
   * replaced (with the broker's id, which a real broker may change) and its audit record at once.
   * The replace is judged first as the order it would become, by the placement's gates (DESIGN
   * §6): a refusal is audited, answers its gate's code and leaves the order as it was. An emulated
   * order that has not triggered is judged the same, then its trigger is armed again (rearm.ts).
   */
  const replace = async ({ user, change, origin }: { user: { id: number }; change: TReplaceOrderRequest; origin: RequestOrigin }): Promise<TOrderResponse> => {
    const row = await findOwnOrder(db, { user, brokerOrderId: change.broker_order_id, assetClass: change.asset_class });
    if (TERMINAL.has(row.status) || row.status === 'pending') throw new AppError('ORDER_NOT_CANCELABLE', `The order is ${row.status} and cannot be replaced`);
    // An emulated OCO leg (an oco's, a bracket's exit) changes its prices; its quantity is the pair's.
    const sibling = row.metadata[EMULATED] === true ? (await findTrigger(db, row))?.siblingClientOrderId : null;
    if (sibling && change.qty !== undefined && !new ExactDecimal(change.qty).eq(row.qty)) {
      throw new AppError('BROKER_REJECTED', "An OCO leg's qty follows its pair: replace its price, not its qty");
    }
    // Judged against the order's own type: a replace may not give a market order a limit.
    const misplaced = misplacedPriceFields(row.orderType, change);
    if (misplaced[0]) throw new AppError('VALIDATION_ERROR', `${misplaced[0].path}: ${misplaced[0].message}`, { errors: misplaced });
    const instrument = await instruments.resolve({ symbol: row.symbol, assetClass: row.assetClass });
    const qty = replacedQtyOf(row, change, instrument);
    const preflight = await readPreflight(db, { userId: user.id, clientOrderId: row.clientOrderId, assetClass: row.assetClass });
    const attempt = replaceAttemptOf(row, change, { qty, instrument, preflight });
    // Judged with the pair's hold as its own, as the leg's fired child is.
    if (sibling) attempt.siblingOf = sibling;
    try {
      await runGates(attempt, gateDeps);
    } catch (error) {
      if (!(error instanceof GateRefusal)) throw error;
      await audit(db, row, 'order.replace_refused', { gate: error.gate, code: error.error.code, reason: error.error.message }, origin);
      throw error.error;
    }
    const broker = attempt.broker!;
    // No broker holds an emulated order: its trigger is armed again instead.
    if (row.metadata[EMULATED] === true && instrument) return toOrderResponse(await rearm({ row, change, qty, instrument, broker, origin }));
    let replaced: BrokerOrder;
    try {
      replaced = await withTimeout(
        broker.replaceOrder({
          brokerOrderId: change.broker_order_id,
          clientOrderId: row.clientOrderId,
          qty,
          limitPrice: change.limit_price === undefined ? undefined : String(change.limit_price),
          stopPrice: change.stop_price === undefined ? undefined : String(change.stop_price),
          ...(attempt.trail && trailRequestOf(change) ? { trail: attempt.trail } : {}),
        }),
        BROKER_TIMEOUT_MS,
      );
    } catch (error) {
      throw brokerError(error, 'replace');
    }
    const updated = await db.transaction(async (tx) => {
      const next = await updateOrder(tx, row, {
        brokerOrderId: replaced.brokerOrderId,
        qty: replaced.qty,
        limitPrice: row.orderType === 'stop_limit' ? row.limitPrice : replaced.limitPrice,
        stopPrice: replaced.stopPrice,
        // A trailing stop's new trail; its stop above is the one the trail set again.
        ...(row.orderType === 'trailing_stop' ? { metadata: retrailedMetadata(row.metadata, change) } : {}),
        updatedAt: clock.now(),
      });
      const trail = trailMetadataOf(change);
      await audit(tx, next!, 'order.replace_requested', { qty, limit_price: change.limit_price ?? null, stop_price: change.stop_price ?? null, ...trail, previous_broker_order_id: row.brokerOrderId }, origin);
      return next!;
    });
    return toOrderResponse(updated);
  };

  /** Cancels every working order of the user in an asset class (and mode, when given); reports what happened. */
  const cancelAll = async ({ user, assetClass, mode, origin }: { user: { id: number }; assetClass: TAssetClass; mode?: TTradingMode; origin: RequestOrigin }) => {
    const working = await listAuditedOrders(db, { userId: user.id, assetClass, statuses: STATUSES_OF_FILTER.open, live: mode === undefined ? undefined : mode === 'live', page: 1, size: 1000 });
    const canceled: string[] = [];
    const failed: { broker_order_id: string; reason: string }[] = [];
    for (const row of working.rows) {
      try {
        await cancel({ user, brokerOrderId: row.brokerOrderId!, assetClass, origin });
        canceled.push(row.brokerOrderId!);
      } catch (error) {
        failed.push({ broker_order_id: row.brokerOrderId!, reason: error instanceof Error ? error.message : 'failed' });
      }
    }
    return { canceled, failed };
  };

  /**
   * Closes a position at market (DESIGN §6): a sell of the whole held quantity through the same
   * gates, judged without the symbol's working sells; once the gates pass, those sells (a
   * bracket's children included) are canceled, then the sell is placed. A close the gates refuse
   * (market closed, rate limit, broker down) cancels nothing. Like every sell, it passes a lock.
   */
  const closePosition = async ({ user, assetClass, symbol, mode, origin }: { user: { id: number }; assetClass: TAssetClass; symbol: string; mode: TTradingMode; origin: RequestOrigin }): Promise<TOrderResponse> => {
    const noPosition = () => new AppError('NOT_FOUND', `No ${assetClass} position in ${symbol.slice(0, 32)}`);
    const instrument = await instruments.resolve({ symbol, assetClass });
    if (!instrument) throw noPosition();
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const held = (await viaBroker(() => broker.positions())).find((position) => position.symbol === instrument.symbol);
    if (!held || new ExactDecimal(held.qty).isZero()) throw noPosition();
    const cancelWorkingSells = async () => {
      const working = await listAuditedOrders(db, { userId: user.id, assetClass, statuses: STATUSES_OF_FILTER.open, live: mode === 'live', page: 1, size: 1000 });
      for (const row of working.rows) {
        if (row.side !== 'sell' || row.symbol !== instrument.symbol) continue;
        try {
          await cancel({ user, brokerOrderId: row.brokerOrderId!, assetClass, origin, by: 'close' });
        } catch (error) {
          // Canceling one leg of a bracket's OCO pair ends the other with it (or it has just filled).
          if (error instanceof AppError && error.code === 'ORDER_NOT_CANCELABLE') continue;
          throw error;
        }
      }
    };
    return place({
      user,
      request: { asset_class: assetClass, symbol: instrument.symbol, side: 'sell', qty: Number(held.qty), order_type: 'market', time_in_force: 'day', live_mode: mode === 'live' },
      origin,
      beforeClose: cancelWorkingSells,
    });
  };

  return { cancel, replace, cancelAll, closePosition };
};
