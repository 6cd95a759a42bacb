// The reconciler: settles the orders a crash (or a broker that did not answer, or a stream that
// was not listening) left without a known outcome, by asking their broker; and the children of
// emulated orders' triggers likewise. What it finds reaches the user as a broker event does
// through the intake: the order events in the outbox in the change's transaction, announced after
// its commit, and a fill's follow-ups (an entry's emulated exits armed) in that transaction too.
import { EMULATED } from './emulator/emulated-submission.ts';
import type { TBrokerOrderStatus, TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderEvent } from '../../contracts/orders.ts';
import { ExactDecimal } from '../decimal.ts';
import { BrokerOrderAmbiguousError, type BrokerOrder } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Db, Tx } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import { followFill, type FillFollowUps, type TFill } from './fill-follow-ups.ts';
import type { OrderAudit } from './order-audit.ts';
import type { OrderPublisher } from './publisher.ts';
import { fillsOf, findOrderByClientId, listUnfinishedOrders } from './queries.ts';
import { insertFill, mergeOrderMetadata, updateOrder } from './write-queries.ts';
import { CHILD_BROKER_ORDER_ID } from './emulator/fire.ts';
import { rearmAfterLostChild, setChildBrokerOrderId, triggersAwaitingChild, type EmulatedAccount } from './emulator/trigger-queries.ts';
import { AMBIGUOUS, eventTypeOfStatus, localBrokerId, orderEventOf, TERMINAL } from './records.ts';

/**
 * An intent the broker does not know is settled as never placed only once it is older than this:
 * a younger one may still be on its way to the broker from another instance.
 */
const SETTLE_AFTER_MS = 60_000;

/**
 * The order events of a link (`row` as it left it): the broker's status, as its broker event would
 * have told it. A fill recorded with a status that does not say so (the order ended canceled or
 * expired after filling in part) is told first as the partial fill it was.
 */
const linkedFramesOf = (row: OrderRow, status: TBrokerOrderStatus, fill: TFill | undefined, payload: Record<string, unknown>, at: Date): TOrderEvent[] => {
  const eventType = eventTypeOfStatus(status);
  const untoldFill = fill !== undefined && eventType !== 'fill' && eventType !== 'partial_fill';
  return [...(untoldFill ? [orderEventOf({ ...row, status: 'partially_filled' }, 'partial_fill', payload, at)] : []), orderEventOf(row, eventType, payload, at)];
};

/** What one order's reconciliation wrote: the frames to announce after its commit, and whether the account's triggers changed. */
interface Reconciled {
  frames: TOrderEvent[];
  triggersChanged: boolean;
}

const NOTHING: Reconciled = { frames: [], triggersChanged: false };

export interface ReconcilerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  forUser: BrokerOfAccount;
  audit: OrderAudit;
  /** Writes a reconciled order's events to the outbox in its transaction, and announces them after its commit. */
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  /** What a fill the reconciler records sets off, as the intake's fills do (the order emulator's exits and OCO legs). */
  fillFollowUps?: FillFollowUps;
  /** After a trigger works again, or one is armed or ended by a reconciled fill: its account's watch reads it (emulator/watch.ts). */
  onTriggerChange: (account: EmulatedAccount) => void;
}

export const createReconciler = ({ db, clock, logger, forUser, audit, publisher, fillFollowUps = {}, onTriggerChange }: ReconcilerDeps) => {
  /**
   * Settles every order a crash may have left behind the broker: asks the broker by client order
   * id (with the intent's details, for a broker that keeps no client id of ours), links what it
   * has (its status and the fills made meanwhile), settles the intents it never got. A broker that
   * fails to answer decides nothing: the order is left for the next run. One that has several
   * orders that could be an intent's leaves it pending too, marked `ambiguous_at_broker` for a
   * human. Each decision is audited, and each change told to the user (its order events). With an
   * account, only that account's orders (each time its broker stream listens, say).
   */
  const reconcile = async (account?: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<{ linked: number; settled: number; ambiguous: number; rearmed: number }> => {
    // The emulated orders' children first: an account with none costs one read, and the intents'
    // outcomes (what a caller waits on) come last, right before the answer.
    const children = await reconcileChildren(account);
    let linked = children.linked;
    let settled = 0;
    let ambiguous = 0;
    for (const intent of await listUnfinishedOrders(db, account)) {
      // An emulated order is no broker's: its trigger is the emulator's, its child's events come to it.
      if (intent.metadata[EMULATED] === true) continue;
      const broker = await forUser({ userId: intent.userId, assetClass: intent.assetClass, mode: intent.live ? 'live' : 'paper' }).catch(() => undefined);
      const lookup = { clientOrderId: intent.clientOrderId, intent: { symbol: intent.symbol, side: intent.side, qty: intent.qty, sentAt: intent.submittedAt } };
      let found: BrokerOrder | undefined;
      let ambiguity: BrokerOrderAmbiguousError | undefined;
      try {
        found = await broker?.getOrder(lookup);
      } catch (error) {
        // Not "not there": an unreachable broker, or one that cannot tell yet. Left for the next run.
        if (!(error instanceof BrokerOrderAmbiguousError)) continue;
        ambiguity = error;
      }
      const done = await db.transaction(async (tx): Promise<Reconciled> => {
        // Under the row's lock, as the event intake works: the two never both add one fill.
        const current = await findOrderByClientId(tx, { userId: intent.userId, clientOrderId: intent.clientOrderId, forUpdate: true });
        if (!current || TERMINAL.has(current.status)) return NOTHING; // finished meanwhile
        if (ambiguity) {
          // Several broker orders fit and nothing tells them apart: audited once, left to a human.
          // Nothing a client sees changes: the order stays pending.
          if (current.status !== 'pending' || current.reason === AMBIGUOUS) return NOTHING;
          const row = await updateOrder(tx, intent, { reason: AMBIGUOUS, updatedAt: clock.now() });
          await audit(tx, row!, 'order.reconciled', { decision: 'ambiguous', candidates: ambiguity.candidates, reason: ambiguity.message });
          ambiguous++;
          return NOTHING;
        }
        if (!found && current.status !== 'pending') return NOTHING; // a working order the broker does not list: left for the next run
        if (!found && clock.now().getTime() - current.submittedAt.getTime() < SETTLE_AFTER_MS) return NOTHING; // maybe still in flight elsewhere
        if (!found) {
          const row = (await updateOrder(tx, intent, { status: 'rejected', reason: 'not_at_broker', brokerOrderId: localBrokerId(intent.clientOrderId), updatedAt: clock.now() }))!;
          await audit(tx, row, 'order.reconciled', { decision: 'settled', reason: broker ? 'the broker has no such order' : 'no broker for the account' });
          settled++;
          const frames = await publisher.appendEvents(tx, row, [orderEventOf(row, 'rejected', { reason: 'not_at_broker', reconciled: true }, clock.now())]);
          return { frames, triggersChanged: false };
        }
        const linkedNow = await link(tx, current, found, found.brokerOrderId);
        if (linkedNow) linked++;
        return linkedNow ?? NOTHING;
      });
      publisher.announce(done.frames);
      if (done.triggersChanged) onTriggerChange({ userId: intent.userId, assetClass: intent.assetClass, mode: intent.live ? 'live' : 'paper' });
    }
    if (linked + settled + ambiguous + children.rearmed > 0) logger.warn({ linked, settled, ambiguous, rearmed: children.rearmed }, 'reconciled orders whose outcome or events we had missed (an interrupted run, a stream not listening)');
    return { linked, settled, ambiguous, rearmed: children.rearmed };
  };

  /**
   * Brings our order in line with what its broker holds (under the row's lock): one reconciling
   * fill for the fills made while nobody listened, the broker's status and id, audited; told to the
   * user as the intake tells a broker event (the order events, a fill's trade), and the fill's
   * follow-ups run (an entry's emulated exits armed with it). `brokerOrderId` is the id the order
   * keeps: the broker's, or an emulated order's own. Undefined when nothing changed.
   */
  const link = async (tx: Tx, current: OrderRow, found: BrokerOrder, brokerOrderId: string): Promise<Reconciled | undefined> => {
    const key = { userId: current.userId, clientOrderId: current.clientOrderId };
    const recorded = await fillsOf(tx, key);
    const ourQty = recorded.reduce((sum, fill) => sum.plus(fill.qty), new ExactDecimal(0));
    const missing = new ExactDecimal(found.filledQty).minus(ourQty);
    let fill: TFill | undefined;
    if (missing.gt(0) && found.avgFillPrice !== null) {
      // Fills the broker made while nobody listened: one reconciling fill for what is missing.
      const ourNotional = recorded.reduce((sum, made) => sum.plus(new ExactDecimal(made.qty).times(made.price)), new ExactDecimal(0));
      const price = new ExactDecimal(found.avgFillPrice).times(found.filledQty).minus(ourNotional).div(missing);
      const reconciling: TFill = { execution_id: `reconcile:${current.clientOrderId}:${found.filledQty}`, qty: missing.toFixed(), price: price.toFixed(), fee: '0' };
      const inserted = await insertFill(tx, { ...key, executionId: reconciling.execution_id, qty: reconciling.qty, price: reconciling.price, fee: reconciling.fee, at: clock.now() });
      if (inserted) fill = reconciling;
    }
    if (current.status === found.status && missing.lte(0) && current.brokerOrderId === brokerOrderId) return undefined;
    const row = (await updateOrder(tx, key, { brokerOrderId, status: found.status, filledQty: found.filledQty, avgFillPrice: found.avgFillPrice, ...(current.reason === AMBIGUOUS ? { reason: null } : {}), updatedAt: clock.now() }))!;
    const decision = { decision: 'linked', was: current.status, broker_status: found.status };
    await audit(tx, row, 'order.reconciled', decision);
    const payload = { reconciled: true, ...decision, ...(fill ? { fill } : {}) };
    const frames = await publisher.appendEvents(tx, row, linkedFramesOf(row, found.status, fill, payload, clock.now()), fill);
    const followed = fill ? await followFill(fillFollowUps, tx, row, fill) : [];
    return { frames: [...frames, ...followed], triggersChanged: followed.length > 0 };
  };

  /**
   * An emulated order whose trigger fired but whose child's placement had no answer (a timeout, a
   * dropped connection): the broker is asked for the child. One it holds is linked to the order
   * (its fills and status are the order's); one it does not hold, once the trigger is old enough
   * that no answer can still be on its way, never reached it, and the trigger works again: the
   * watch fires it anew (the same child id) at the next price through its stop, as a broker would
   * have sold on the trigger. Left for the next run while the broker does not answer.
   */
  const reconcileChildren = async (account?: EmulatedAccount): Promise<{ linked: number; rearmed: number }> => {
    let linked = 0;
    let rearmed = 0;
    for (const trigger of await triggersAwaitingChild(db, { account, before: clock.now() })) {
      const mode = trigger.live ? 'live' : 'paper';
      const key = { userId: trigger.userId, clientOrderId: trigger.clientOrderId };
      const broker = await forUser({ userId: trigger.userId, assetClass: trigger.assetClass, mode }).catch(() => undefined);
      if (!broker) continue;
      let found: BrokerOrder | undefined;
      try {
        found = await broker.getOrder({ clientOrderId: trigger.childClientOrderId!, intent: { symbol: trigger.symbol, side: trigger.side, qty: trigger.qty, sentAt: trigger.updatedAt } });
      } catch {
        continue; // unreachable, or it cannot tell which order is the child: the next run asks again
      }
      const young = clock.now().getTime() - trigger.updatedAt.getTime() < SETTLE_AFTER_MS;
      if (!found && young) continue;
      const done = await db.transaction(async (tx) => {
        const current = await findOrderByClientId(tx, { ...key, forUpdate: true });
        if (!current || TERMINAL.has(current.status)) return undefined;
        if (found) {
          await setChildBrokerOrderId(tx, key, found.brokerOrderId, clock.now());
          const withChild = { ...current, metadata: { ...current.metadata, [CHILD_BROKER_ORDER_ID]: found.brokerOrderId } };
          await mergeOrderMetadata(tx, key, { [CHILD_BROKER_ORDER_ID]: found.brokerOrderId });
          const linkedNow = await link(tx, withChild, found, current.brokerOrderId ?? found.brokerOrderId);
          return { outcome: 'linked' as const, ...(linkedNow ?? NOTHING) };
        }
        if (!(await rearmAfterLostChild(tx, key, clock.now()))) return undefined;
        await audit(tx, current, 'order.reconciled', { decision: 'rearmed', reason: 'the trigger’s child never reached the broker', child_client_order_id: trigger.childClientOrderId });
        return { outcome: 'rearmed' as const, ...NOTHING };
      });
      if (!done) continue;
      publisher.announce(done.frames);
      if (done.outcome === 'linked') linked++;
      if (done.outcome === 'rearmed') rearmed++;
      if (done.outcome === 'rearmed' || done.triggersChanged) onTriggerChange({ userId: trigger.userId, assetClass: trigger.assetClass, mode });
    }
    return { linked, rearmed };
  };

  return reconcile;
};
