// The reconciler: settles the orders a crash (or a broker that did not answer) left without a
// known outcome, by asking their broker.
import { EMULATED } from './emulator/emulated-submission.ts';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { ExactDecimal } from '../decimal.ts';
import { BrokerOrderAmbiguousError, type BrokerOrder } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../observability/logger.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import type { OrderAudit } from './order-audit.ts';
import { fillsOf, findOrderByClientId, listUnfinishedOrders } from './queries.ts';
import { insertFill, updateOrder } from './write-queries.ts';
import { AMBIGUOUS, localBrokerId, TERMINAL } from './records.ts';

/**
 * An intent the broker does not know is settled as never placed only once it is older than this:
 * a younger one may still be on its way to the broker from another instance.
 */
const SETTLE_AFTER_MS = 60_000;

export interface ReconcilerDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  forUser: BrokerOfAccount;
  audit: OrderAudit;
}

export const createReconciler = ({ db, clock, logger, forUser, audit }: ReconcilerDeps) => {
  /**
   * Settles every order a crash may have left behind the broker: asks the broker by client order
   * id (with the intent's details, for a broker that keeps no client id of ours), links what it
   * has (its status and the fills made meanwhile), settles the intents it never got. A broker that
   * fails to answer decides nothing: the order is left for the next run. One that has several
   * orders that could be an intent's leaves it pending too, marked `ambiguous_at_broker` for a
   * human. Each decision is audited. With an account, only that account's orders (after its
   * broker stream reconnected, say).
   */
  const reconcile = async (account?: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<{ linked: number; settled: number; ambiguous: number }> => {
    let linked = 0;
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
      await db.transaction(async (tx) => {
        // Under the row's lock, as the event intake works: the two never both add one fill.
        const current = await findOrderByClientId(tx, { userId: intent.userId, clientOrderId: intent.clientOrderId, forUpdate: true });
        if (!current || TERMINAL.has(current.status)) return; // finished meanwhile
        if (ambiguity) {
          // Several broker orders fit and nothing tells them apart: audited once, left to a human.
          if (current.status !== 'pending' || current.reason === AMBIGUOUS) return;
          const row = await updateOrder(tx, intent, { reason: AMBIGUOUS, updatedAt: clock.now() });
          await audit(tx, row!, 'order.reconciled', { decision: 'ambiguous', candidates: ambiguity.candidates, reason: ambiguity.message });
          ambiguous++;
          return;
        }
        if (!found && current.status !== 'pending') return; // a working order the broker does not list: left for the next run
        if (!found && clock.now().getTime() - current.submittedAt.getTime() < SETTLE_AFTER_MS) return; // maybe still in flight elsewhere
        if (!found) {
          const row = await updateOrder(tx, intent, { status: 'rejected', reason: 'not_at_broker', brokerOrderId: localBrokerId(intent.clientOrderId), updatedAt: clock.now() });
          await audit(tx, row!, 'order.reconciled', { decision: 'settled', reason: broker ? 'the broker has no such order' : 'no broker for the account' });
          settled++;
          return;
        }
        const recorded = await fillsOf(tx, intent);
        const ourQty = recorded.reduce((sum, fill) => sum.plus(fill.qty), new ExactDecimal(0));
        const missing = new ExactDecimal(found.filledQty).minus(ourQty);
        if (missing.gt(0) && found.avgFillPrice !== null) {
          // Fills the broker made while this process was down: one reconciling fill for what is missing.
          const ourNotional = recorded.reduce((sum, fill) => sum.plus(new ExactDecimal(fill.qty).times(fill.price)), new ExactDecimal(0));
          const price = new ExactDecimal(found.avgFillPrice).times(found.filledQty).minus(ourNotional).div(missing);
          await insertFill(tx, { userId: intent.userId, clientOrderId: intent.clientOrderId, executionId: `reconcile:${intent.clientOrderId}:${found.filledQty}`, qty: missing.toFixed(), price: price.toFixed(), fee: '0', at: clock.now() });
        }
        if (current.status === found.status && missing.lte(0) && current.brokerOrderId === found.brokerOrderId) return;
        const row = await updateOrder(tx, intent, { brokerOrderId: found.brokerOrderId, status: found.status, filledQty: found.filledQty, avgFillPrice: found.avgFillPrice, ...(current.reason === AMBIGUOUS ? { reason: null } : {}), updatedAt: clock.now() });
        await audit(tx, row!, 'order.reconciled', { decision: 'linked', was: current.status, broker_status: found.status });
        linked++;
      });
    }
    if (linked + settled + ambiguous > 0) logger.warn({ linked, settled, ambiguous }, 'reconciled order intents left by an interrupted run');
    return { linked, settled, ambiguous };
  };

  return reconcile;
};
