// Day orders the order emulator holds end at their session's close, as the simulator's do (the
// exchange calendar; a crypto day is the UTC day): the job that expires day orders every minute
// (server/jobs) ends each working trigger whose expires_at has passed, its order `expired`
// (metadata.cancel_reason `expired`) with an OCO's other leg, audited, with a `canceled` event.
import type { TOrderEvent } from '../../../contracts/orders.ts';
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../db/client.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { orderEventOf } from '../records.ts';
import { updateOrder } from '../write-queries.ts';
import { cancelTrigger, expiredTriggers, type EmulatedAccount, type TriggerKey } from './trigger-queries.ts';

const EXPIRED = 'expired';

export interface EmulatedExpiryDeps {
  db: Db;
  clock: Clock;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  /** Wakes the account's trigger watch: it lets the ended triggers go. */
  onTriggerChange: (account: EmulatedAccount) => void;
}

export const createEmulatedExpiry = ({ db, clock, audit, publisher, onTriggerChange }: EmulatedExpiryDeps) => {
  /** Ends one order's trigger and the order as expired, in the caller's transaction; its frames (none when it no longer works). */
  const expireOne = async (tx: Tx, key: TriggerKey, at: Date): Promise<TOrderEvent[]> => {
    if (!(await cancelTrigger(tx, key, at))) return [];
    const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
    if (!order) return [];
    const updated = (await updateOrder(tx, key, { status: 'expired', metadata: { ...order.metadata, cancel_reason: EXPIRED }, updatedAt: at }))!;
    await audit(tx, updated, 'order.expired', { cancel_reason: EXPIRED, emulated: true });
    return publisher.appendEvents(tx, updated, [orderEventOf(updated, 'canceled', { cancel_reason: EXPIRED, emulated: true }, at)]);
  };

  /** Expires every emulated day order past its close; how many orders it ended. */
  return async (): Promise<number> => {
    const at = clock.now();
    let expired = 0;
    for (const trigger of await expiredTriggers(db, at)) {
      const frames = await db.transaction(async (tx) => {
        const own = await expireOne(tx, trigger, at);
        const sibling = own.length > 0 && trigger.siblingClientOrderId !== null ? await expireOne(tx, { userId: trigger.userId, clientOrderId: trigger.siblingClientOrderId }, at) : [];
        return [...own, ...sibling];
      });
      if (frames.length === 0) continue;
      publisher.announce(frames);
      expired += frames.length;
      onTriggerChange({ userId: trigger.userId, assetClass: trigger.assetClass, mode: trigger.live ? 'live' : 'paper' });
    }
    return expired;
  };
};
