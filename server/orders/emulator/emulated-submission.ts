// The Submission of an order its real broker cannot hold but the order emulator can (DESIGN §6
// "Advanced orders": a simple trailing stop, stop or stop-limit at a broker that streams quotes
// and lacks the type, or an OCO: its take-profit and its stop leg `<id>:sl`, two triggers). No broker call: the intent, its acceptance as our own open order (a local
// `emu-` id; a trailing stop's first stop from the broker's price) and its trigger row commit in
// one transaction; the account's watch (watch.ts) takes it from there.
import { randomUUID } from 'node:crypto';
import { BrokerRejectedError, type BrokerOrder, type TBrokerEvent } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import { isDatabaseUnavailable } from '../../db/errors.ts';
import { ExactDecimal } from '../../decimal.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from '../broker-calls.ts';
import type { WrittenAcceptance } from '../broker-answer.ts';
import { commitStandingIntent, type Submission } from '../submission.ts';
import { HWM, TRAIL_PERCENT, TRAIL_PRICE } from '../trailing.ts';
import { bracketChildClientOrderId, type TOrderEvent } from '../../../contracts/orders.ts';
import type { OrderRow } from '../../db/schema/index.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { orderEventOf } from '../records.ts';
import { insertOrderIntent, type OrderInsert } from '../write-queries.ts';
import { armOcoOf, armOf, expiryOf, type TArmed, type TArmedOco } from './arm.ts';
import type { IntentOutcome } from '../write-queries.ts';
import { insertTrigger, type EmulatedAccount } from './trigger-queries.ts';

export const EMULATED = 'emulated';
/** The local broker order id of an emulated order: no broker holds it. */
export const EMULATED_ID_PREFIX = 'emu-';

export interface EmulatedSubmissionDeps {
  db: Db;
  clock: Clock;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce'>;
  onTrigger: (account: EmulatedAccount) => void;
}

/**
 * An emulated OCO's stop leg as its own order row, `<id>:sl` (as a broker holding the OCO lists
 * it): open at once, linked to the OCO by metadata.parent_client_order_id.
 */
const stopLegRowOf = (intent: OrderRow, leg: TArmedOco['stopLeg'], at: Date): OrderInsert => ({
  userId: intent.userId,
  clientOrderId: bracketChildClientOrderId(intent.clientOrderId, 'stop_loss'),
  brokerOrderId: `${EMULATED_ID_PREFIX}${randomUUID()}`,
  assetClass: intent.assetClass,
  live: intent.live,
  broker: intent.broker,
  symbol: intent.symbol,
  side: intent.side,
  orderType: leg.orderType,
  timeInForce: intent.timeInForce,
  qty: intent.qty,
  limitPrice: leg.limitPrice,
  stopPrice: leg.stopPrice,
  status: 'open',
  bracket: null,
  metadata: {
    source: intent.metadata.source,
    parent_client_order_id: intent.clientOrderId,
    [EMULATED]: true,
    ...(leg.limitPrice === null ? {} : { stop_limit_price: Number(leg.limitPrice) }),
    ...(leg.trailPercent === null ? {} : { [TRAIL_PERCENT]: Number(leg.trailPercent) }),
    ...(leg.trailPrice === null ? {} : { [TRAIL_PRICE]: Number(leg.trailPrice) }),
    ...(leg.hwm === null ? {} : { [HWM]: Number(leg.hwm) }),
  },
  requestHash: null,
  submittedAt: at,
  updatedAt: at,
});

export const emulatedSubmission = ({ db, clock, audit, publisher, onTrigger }: EmulatedSubmissionDeps): Submission => ({
  submit: async (placing) => {
    const { intent, account, broker, instrument } = placing;
    let accepted: BrokerOrder;
    let armed: TArmed;
    let oco: TArmedOco | undefined;
    try {
      if (!instrument) throw new BrokerRejectedError(`unknown symbol ${intent.symbol}`);
      // The trigger starts from the broker's own price now, as a broker that held the type would.
      const price = new ExactDecimal(await withTimeout(broker.quote(intent.symbol), BROKER_TIMEOUT_MS));
      // An OCO: the order is its take-profit; its stop leg is an order and a trigger of its own.
      oco = intent.metadata.order_class === 'oco' ? armOcoOf(intent, price, instrument) : undefined;
      armed = oco ? oco.takeProfit : armOf(intent, price, instrument);
      const at = clock.now();
      accepted = {
        brokerOrderId: `${EMULATED_ID_PREFIX}${randomUUID()}`,
        clientOrderId: intent.clientOrderId,
        assetClass: account.assetClass,
        mode: account.mode,
        symbol: intent.symbol,
        side: intent.side,
        orderType: oco ? 'limit' : 'stop',
        timeInForce: intent.timeInForce,
        qty: intent.qty,
        filledQty: '0',
        avgFillPrice: null,
        limitPrice: oco ? intent.limitPrice : null,
        stopPrice: oco ? null : armed.stopPrice,
        status: 'open',
        parentId: null,
        metadata: { ...intent.metadata, [EMULATED]: true, ...(armed.hwm === null ? {} : { [HWM]: armed.hwm }) },
        submittedAt: at,
        updatedAt: at,
      };
    } catch (error) {
      // No price, or a trigger no broker would hold: the intent commits, and the failure marks it.
      return (await commitStandingIntent(placing)) ?? { kind: 'failed', error, outcomeUnknown: false };
    }
    // The order is open at once: its trigger works from now on.
    const opened: TBrokerEvent = {
      type: 'open',
      user_id: account.userId,
      asset_class: account.assetClass,
      mode: account.mode,
      broker: broker.name,
      broker_order_id: accepted.brokerOrderId,
      client_order_id: intent.clientOrderId,
      symbol: intent.symbol,
      status: 'open',
      filled_qty: '0',
      avg_fill_price: null,
      fill: null,
      reason: null,
      at: accepted.submittedAt.toISOString(),
    };
    const legRow = oco && stopLegRowOf(intent, oco.stopLeg, accepted.submittedAt);
    let outcome: { intent: IntentOutcome; written?: WrittenAcceptance | undefined; legFrames?: TOrderEvent[] };
    try {
      outcome = await db.transaction(async (tx) => {
        const written = await placing.writeIntent(tx);
        if (!(written.claimed && written.placed)) return { intent: written };
        const recorded = await placing.writeAcceptance(tx, accepted, [opened]);
        await insertTrigger(tx, {
          userId: account.userId,
          clientOrderId: intent.clientOrderId,
          assetClass: account.assetClass,
          live: account.mode === 'live',
          symbol: intent.symbol,
          side: intent.side,
          qty: intent.qty,
          ...armed,
          siblingClientOrderId: legRow?.clientOrderId ?? null,
          status: 'working',
          expiresAt: expiryOf(intent, accepted.submittedAt),
          armedAt: accepted.submittedAt,
          updatedAt: accepted.submittedAt,
        });
        if (!oco || !legRow) return { intent: written, written: recorded };
        // The OCO's stop leg, its order and its trigger, in the same transaction.
        const leg = (await insertOrderIntent(tx, legRow))!;
        await insertTrigger(tx, {
          userId: account.userId,
          clientOrderId: leg.clientOrderId,
          assetClass: account.assetClass,
          live: account.mode === 'live',
          symbol: intent.symbol,
          side: intent.side,
          qty: intent.qty,
          ...oco.stopLeg,
          siblingClientOrderId: intent.clientOrderId,
          status: 'working',
          expiresAt: expiryOf(intent, accepted.submittedAt),
          armedAt: accepted.submittedAt,
          updatedAt: accepted.submittedAt,
        });
        await audit(tx, leg, 'order.placed', { origin: 'emulator', parent: intent.clientOrderId });
        const legFrames = await publisher.appendEvents(tx, leg, [orderEventOf(leg, 'accepted', { emulated: true, parent_client_order_id: intent.clientOrderId }, accepted.submittedAt)]);
        return { intent: written, written: recorded, legFrames };
      });
    } catch (error) {
      if (isDatabaseUnavailable(error)) return { kind: 'lost', error };
      return (await commitStandingIntent(placing)) ?? { kind: 'failed', error, outcomeUnknown: false };
    }
    const response = await placing.answerUnlessStands(outcome.intent);
    if (response) return { kind: 'answered', response };
    if (outcome.legFrames) publisher.announce(outcome.legFrames);
    onTrigger(account);
    return { kind: 'accepted', order: accepted, written: outcome.written };
  },
});
