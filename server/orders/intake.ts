// The intake of broker events: each event's fill, status and audit record in one transaction, with
// its order event in the outbox; events of one order applied in the order received; an order's
// first events held for its placement under way; a child the broker made (a bracket's leg) added.
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import type { TOrderEvent } from '../../contracts/orders.ts';
import { ExactDecimal } from '../decimal.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import { followFill, type FillFollowUps } from './fill-follow-ups.ts';
import type { OrderAudit } from './order-audit.ts';
import { placementKey, type PlacementsUnderWay } from './placements-under-way.ts';
import type { OrderPublisher } from './publisher.ts';
import { findOrderByClientId } from './queries.ts';
import { insertFill, insertOrderIntent, updateOrder, type OrderInsert } from './write-queries.ts';
import { changeByEvent, childOrderRowOf, eventTypeOf, orderEventOf } from './records.ts';
import { metadataAfter } from './order-metadata.ts';

/** Thrown inside an event's transaction to roll it back when its fill was recorded before. */
class DuplicateFill extends Error {
  override readonly name = 'DuplicateFill';
}

export interface IntakeDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  forUser: BrokerOfAccount;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  underWay: PlacementsUnderWay;
  /**
   * The order emulator: its mapping of a trigger's child's events to its parent order
   * (emulator/watch.ts), and what a fill sets off in it (fill-follow-ups.ts).
   */
  children?: FillFollowUps & {
    mayBeChildEvent: (event: TBrokerEvent) => boolean;
    asParentEvent: (event: TBrokerEvent) => Promise<TBrokerEvent>;
    wake?: (account: { userId: number; assetClass: TBrokerEvent['asset_class']; mode: TBrokerEvent['mode'] }) => void;
  };
}

export const createIntake = ({ db, clock, logger, forUser, audit, publisher, underWay, children }: IntakeDeps) => {
  // Events of one order are applied one after another, in the order the broker sent them.
  const chains = new Map<string, Promise<void>>();

  /**
   * Applies one broker event: the fill, the order's status and its audit record in one
   * transaction, with the order event (and a fill's trade) in the outbox. An event that changes
   * nothing the order records (the broker's `accepted` after the placement recorded and announced
   * that answer) writes and announces nothing; that is seen without a lock.
   */
  const apply = async (event: TBrokerEvent, child?: OrderInsert): Promise<void> => {
    const key = { userId: event.user_id, clientOrderId: event.client_order_id };
    if (!event.fill && !child) {
      // Events of one order are applied in order and the order's state only moves forward, so a
      // committed row that already says what the event says stays that way.
      const seen = await findOrderByClientId(db, key);
      if (seen && changeByEvent(seen, event) === undefined) return;
    }
    const eventType = eventTypeOf(event);
    const outcome = await db
      .transaction(async (tx): Promise<TOrderEvent[] | 'unknown'> => {
        let row = await findOrderByClientId(tx, { ...key, forUpdate: true });
        let inserted = false;
        if (!row) {
          if (!child) return 'unknown';
          const made = await insertOrderIntent(tx, child);
          inserted = made !== undefined;
          row = made ?? (await findOrderByClientId(tx, { ...key, forUpdate: true }))!;
          if (inserted) await audit(tx, row, 'order.placed', { origin: 'broker', parent: child.metadata?.parent_client_order_id ?? null });
        }
        const change = changeByEvent(row, event);
        // A child the broker made is news to the user even when its first event changes nothing.
        if (!change) return inserted ? publisher.appendEvents(tx, row, [orderEventOf(row, eventType, event, clock.now())]) : [];
        const { fill } = event;
        // The event says how much is filled in all; the row holds what the recorded fills add up
        // to (every fill is recorded with its row update, under this lock). A fill the reconciler
        // already recorded after a crash is not recorded twice.
        const record = fill && !new ExactDecimal(row.filledQty).plus(fill.qty).gt(event.filled_qty);
        const metadata = metadataAfter(row, event, record === true);
        const next: OrderRow = { ...row, ...change, ...(metadata ? { metadata } : {}), updatedAt: clock.now() };
        // Sent together, one round trip; a fill delivered twice rolls the rest back.
        const [recorded, , , frames] = await Promise.all([
          record ? insertFill(tx, { ...key, executionId: fill.execution_id, qty: fill.qty, price: fill.price, fee: fill.fee, tax: fill.tax ?? '0', at: new Date(event.at) }) : Promise.resolve(true),
          updateOrder(tx, key, { ...change, ...(metadata ? { metadata } : {}), updatedAt: next.updatedAt }),
          audit(tx, next, `order.${event.type}`, { event_type: event.type, status: event.status, payload: event }),
          publisher.appendEvents(tx, next, [orderEventOf(next, eventType, event, clock.now())], record ? fill : undefined),
        ]);
        if (!recorded) throw new DuplicateFill(fill!.execution_id);
        // An entry whose exits the emulator holds arms them with this fill, in its transaction.
        const followed = record && children ? await followFill(children, tx, next, fill) : [];
        return [...frames, ...followed];
      })
      .catch((error: unknown) => {
        if (error instanceof DuplicateFill) return [];
        throw error;
      });
    // An order the broker made itself (a bracket's take-profit or stop-loss child) is read from
    // the broker, outside the transaction (inside it only `tx` may be used), and applied again.
    if (outcome === 'unknown') {
      const made = child ? undefined : await childOrder(event);
      if (made) await apply(event, made);
      return;
    }
    publisher.announce(outcome);
    if (event.fill && outcome.length > 0) children?.wake?.({ userId: event.user_id, assetClass: event.asset_class, mode: event.mode });
  };

  /** The order row of a child the broker created, from the broker's own record of it. */
  const childOrder = async (event: TBrokerEvent): Promise<OrderInsert | undefined> => {
    const broker = await forUser({ userId: event.user_id, assetClass: event.asset_class, mode: event.mode }).catch(() => undefined);
    const order = await broker?.getOrder({ brokerOrderId: event.broker_order_id }).catch(() => undefined);
    if (!order) return undefined;
    const parent = order.parentId ? await db.query.orders.findFirst({ where: (o, { and, eq }) => and(eq(o.userId, event.user_id), eq(o.brokerOrderId, order.parentId!)) }) : undefined;
    return childOrderRowOf(event, order, parent, clock.now());
  };

  /** Applies an event that came during its order's placement, unless the placement recorded it. */
  const applyIfLeftOver = async (key: string, event: TBrokerEvent): Promise<void> => {
    if (underWay.takeLeftOver(key, event)) await apply(event);
  };

  /** Lookups of a child's parent, one after another: a child's events keep their order. */
  let childLookups: Promise<void> = Promise.resolve();

  /** An event, as its order's (a trigger's child's as its parent's), applied in turn. */
  const ingest = (event: TBrokerEvent): Promise<void> => {
    if (!children?.mayBeChildEvent(event)) return ingestOwn(event);
    const applied = childLookups.then(() => children.asParentEvent(event)).then(ingestOwn, (error: unknown) => {
      logger.error({ err: error, clientOrderId: event.client_order_id }, 'could not find the parent of a broker event');
    });
    childLookups = applied.then(
      () => undefined,
      () => undefined,
    );
    return applied;
  };

  const ingestOwn = (event: TBrokerEvent): Promise<void> => {
    const key = placementKey(event.user_id, event.client_order_id);
    // The first events of an order (its `accepted`, a fill on arrival) come while its placement
    // is still recording the broker's answer: they wait for it, which records them with the
    // answer when it can; what it leaves is applied here after it.
    const placement = underWay.running(key);
    if (placement) underWay.holdEarly(key, event);
    const placing = placement?.then(
      () => undefined,
      () => undefined,
    );
    const next = (chains.get(key) ?? placing ?? Promise.resolve())
      .then(() => (placement ? applyIfLeftOver(key, event) : apply(event)))
      .catch((error: unknown) => logger.error({ err: error, clientOrderId: event.client_order_id, type: event.type }, 'could not apply a broker event'));
    chains.set(key, next);
    void next.finally(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
    return next;
  };

  /** Resolves when every broker event received so far has been applied (tests, shutdown). */
  const idle = async () => {
    await childLookups;
    while (chains.size > 0) await Promise.all([...chains.values()]);
  };

  return { ingest, idle };
};
