// The replace of an emulated order that has not triggered (DESIGN §6): once the gates have judged
// it as any replace (commands.ts), its trigger is armed again with the new quantity, prices or
// trail, and the order changes with it, in one transaction (audited, a `replaced` event). A
// trailing stop's stop is set again from the mark it reached; a stop that would trigger at once is
// refused as at placement. The account's watch takes the new arming (trigger-queries.ts, armedAt).
import type { Decimal } from 'decimal.js';
import type { TReplaceOrderRequest } from '../../../contracts/orders.ts';
import type { RequestOrigin } from '../../audit/log.ts';
import { brokerError } from '../../brokers/errors.ts';
import { BrokerRejectedError, type Broker } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { InstrumentRow, OrderRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import { AppError } from '../../errors.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from '../broker-calls.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { orderEventOf } from '../records.ts';
import { HWM, retrailedMetadata, trailMetadataOf } from '../trailing.ts';
import { updateOrder } from '../write-queries.ts';
import { armOf } from './arm.ts';
import { rearmTrigger, workingTriggerForUpdate, type EmulatedAccount } from './trigger-queries.ts';

export interface RearmDeps {
  db: Db;
  clock: Clock;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  /** Wakes the account's trigger watch: it reads the new arming now. */
  onTriggerChange: (account: EmulatedAccount) => void;
}

export interface Rearming {
  row: OrderRow;
  change: TReplaceOrderRequest;
  /** The new total quantity, checked (lot, above what filled); undefined keeps it. */
  qty: string | undefined;
  instrument: InstrumentRow;
  /** The account's broker, whose price the trigger is armed at. */
  broker: Broker;
  origin: RequestOrigin;
}

const priceText = (value: number | undefined) => (value === undefined ? undefined : String(value));

export const createRearm = ({ db, clock, audit, publisher, onTriggerChange }: RearmDeps) =>
  async ({ row, change, qty, instrument, broker, origin }: Rearming): Promise<OrderRow> => {
    const key = { userId: row.userId, clientOrderId: row.clientOrderId };
    let price: Decimal;
    try {
      price = new ExactDecimal(await withTimeout(broker.quote(row.symbol), BROKER_TIMEOUT_MS));
    } catch (error) {
      throw brokerError(error, 'replace');
    }
    const at = clock.now();
    const outcome = await db
      .transaction(async (tx) => {
        const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
        const trigger = order && (await workingTriggerForUpdate(tx, key));
        if (!order || !trigger) throw new AppError('ORDER_NOT_CANCELABLE', 'The order has triggered and cannot be replaced');
        const limitPrice = priceText(change.limit_price) ?? order.limitPrice;
        const metadata = {
          ...retrailedMetadata(order.metadata, change),
          ...(order.orderType === 'stop_limit' && change.limit_price !== undefined ? { stop_limit_price: change.limit_price } : {}),
        };
        const becoming = { orderType: order.orderType, side: order.side, stopPrice: priceText(change.stop_price) ?? order.stopPrice, limitPrice, metadata };
        // A trailing stop keeps the mark it reached (saved at most a second ago).
        const armed = armOf(becoming, price, instrument, trigger.hwm === null ? price : new ExactDecimal(trigger.hwm));
        const newQty = qty ?? order.qty;
        await rearmTrigger(tx, key, { ...armed, qty: newQty, armedAt: at });
        // A take-profit's trigger fires at its limit: the order keeps no stop.
        const takeProfit = order.orderType === 'limit';
        const next = (await updateOrder(tx, key, {
          qty: newQty,
          stopPrice: takeProfit ? order.stopPrice : armed.stopPrice,
          limitPrice: order.orderType === 'stop_limit' || takeProfit ? armed.limitPrice : order.limitPrice,
          metadata: armed.hwm === null ? metadata : { ...metadata, [HWM]: Number(armed.hwm) },
          updatedAt: at,
        }))!;
        const trail = trailMetadataOf(change);
        await audit(tx, next, 'order.replace_requested', { qty, limit_price: change.limit_price ?? null, stop_price: change.stop_price ?? null, ...trail, previous_broker_order_id: row.brokerOrderId }, origin);
        const payload = { emulated: true, qty: newQty, ...(takeProfit ? {} : { stop_price: armed.stopPrice }), ...(armed.limitPrice === null ? {} : { limit_price: armed.limitPrice }), ...(armed.hwm === null ? {} : { hwm: armed.hwm }), ...trail };
        await audit(tx, next, 'order.replaced', payload);
        return { next, frames: await publisher.appendEvents(tx, next, [orderEventOf(next, 'replaced', payload, at)]) };
      })
      .catch((error: unknown) => {
        // The arming's refusal (a stop that would trigger at once) is a broker's, as at placement.
        if (error instanceof BrokerRejectedError) throw brokerError(error, 'replace');
        throw error;
      });
    publisher.announce(outcome.frames);
    onTriggerChange({ userId: row.userId, assetClass: row.assetClass, mode: row.live ? 'live' : 'paper' });
    return outcome.next;
  };
