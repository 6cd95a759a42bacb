// The Submission of an order its real broker cannot hold but the order emulator can (DESIGN §6
// "Advanced orders": a simple trailing stop, stop or stop-limit at a broker that streams quotes
// and lacks the type). No broker call: the intent, its acceptance as our own open order (a local
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
import { HWM } from '../trailing.ts';
import { armOf, type TArmed } from './arm.ts';
import type { IntentOutcome } from '../write-queries.ts';
import { insertTrigger, type EmulatedAccount } from './trigger-queries.ts';

export const EMULATED = 'emulated';
/** The local broker order id of an emulated order: no broker holds it. */
export const EMULATED_ID_PREFIX = 'emu-';

export const emulatedSubmission = ({ db, clock, onTrigger }: { db: Db; clock: Clock; onTrigger: (account: EmulatedAccount) => void }): Submission => ({
  submit: async (placing) => {
    const { intent, account, broker, instrument } = placing;
    let accepted: BrokerOrder;
    let armed: TArmed;
    try {
      if (!instrument) throw new BrokerRejectedError(`unknown symbol ${intent.symbol}`);
      // The trigger starts from the broker's own price now, as a broker that held the type would.
      const price = new ExactDecimal(await withTimeout(broker.quote(intent.symbol), BROKER_TIMEOUT_MS));
      armed = armOf(intent, price, instrument);
      const at = clock.now();
      accepted = {
        brokerOrderId: `${EMULATED_ID_PREFIX}${randomUUID()}`,
        clientOrderId: intent.clientOrderId,
        assetClass: account.assetClass,
        mode: account.mode,
        symbol: intent.symbol,
        side: intent.side,
        orderType: 'stop',
        timeInForce: intent.timeInForce,
        qty: intent.qty,
        filledQty: '0',
        avgFillPrice: null,
        limitPrice: null,
        stopPrice: armed.stopPrice,
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
    let outcome: { intent: IntentOutcome; written?: WrittenAcceptance | undefined };
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
          status: 'working',
          armedAt: accepted.submittedAt,
          updatedAt: accepted.submittedAt,
        });
        return { intent: written, written: recorded };
      });
    } catch (error) {
      if (isDatabaseUnavailable(error)) return { kind: 'lost', error };
      return (await commitStandingIntent(placing)) ?? { kind: 'failed', error, outcomeUnknown: false };
    }
    const response = await placing.answerUnlessStands(outcome.intent);
    if (response) return { kind: 'answered', response };
    onTrigger(account);
    return { kind: 'accepted', order: accepted, written: outcome.written };
  },
});
