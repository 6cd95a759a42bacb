// An emulated OCO's legs (an oco's two, a bracket's exits; DESIGN §6 "Advanced orders"): the fill
// of one leg's child ends the other, in the fill's transaction, as a broker ends an OCO's other
// leg: canceled when the leg has filled whole, made smaller by what it filled when in part. Only
// a sibling still waiting for its trigger is touched here; one that has fired too is settled by
// the firing (fire.ts), which cancels the other's child at the broker before its own goes.
import type { TOrderEvent } from '../../../contracts/orders.ts';
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/client.ts';
import type { OrderRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { orderEventOf } from '../records.ts';
import { updateOrder } from '../write-queries.ts';
import { cancelTrigger, findTrigger, lockTrigger, shrinkTrigger } from './trigger-queries.ts';
import { EMULATED } from './emulated-submission.ts';

/** The cancel_reason of an OCO leg whose sibling filled (the simulator's and the brokers' word too). */
export const OCO_SIBLING = 'oco_sibling';

export interface OcoSettlementDeps {
  clock: Clock;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents'>;
}

export const createOcoSettlement =
  ({ clock, audit, publisher }: OcoSettlementDeps) =>
  /** After a fill of `leg` (its row as the fill left it), in the fill's transaction: its sibling ended or made smaller; the frames. */
  async (tx: Tx, leg: OrderRow): Promise<TOrderEvent[]> => {
    // Only an emulated order has a trigger: any other fill (every paper order's) reads nothing more.
    if (leg.metadata[EMULATED] !== true) return [];
    const trigger = await findTrigger(tx, { userId: leg.userId, clientOrderId: leg.clientOrderId });
    if (!trigger?.siblingClientOrderId) return [];
    const key = { userId: leg.userId, clientOrderId: trigger.siblingClientOrderId };
    const sibling = await lockTrigger(tx, key);
    if (sibling?.status !== 'working') return [];
    const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
    if (!order) return [];
    const at = clock.now();
    const left = new ExactDecimal(leg.qty).minus(leg.filledQty);
    if (left.lte(0)) {
      await cancelTrigger(tx, key, at);
      const payload = { cancel_reason: OCO_SIBLING, sibling_client_order_id: leg.clientOrderId };
      const canceled = (await updateOrder(tx, key, { status: 'canceled', metadata: { ...order.metadata, cancel_reason: OCO_SIBLING }, updatedAt: at }))!;
      await audit(tx, canceled, 'order.canceled', payload);
      return publisher.appendEvents(tx, canceled, [orderEventOf(canceled, 'canceled', payload, at)]);
    }
    if (left.gte(sibling.qty)) return [];
    const qty = left.toFixed();
    await shrinkTrigger(tx, key, { qty, at });
    const shrunk = (await updateOrder(tx, key, { qty, updatedAt: at }))!;
    const payload = { reason: `oco: the other leg filled ${leg.filledQty}`, qty, emulated: true };
    await audit(tx, shrunk, 'order.replaced', payload);
    return publisher.appendEvents(tx, shrunk, [orderEventOf(shrunk, 'replaced', payload, at)]);
  };

export type OcoSettlement = ReturnType<typeof createOcoSettlement>;
