// The submit step of a placement, as one seam: a Submission commits what the placement needs and
// sends the order to its broker. Two implementations, chosen by the composition root for each
// account: in books (in-books-submission.ts: the simulator's one transaction) and remote
// (remote-submission.ts: the intent first, then the call). The placement never asks which.
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderResponse } from '../../contracts/orders.ts';
import { BrokerRejectedError, type Broker, type BrokerOrder, type BrokerOrderRequest, type BrokerSnapshot, type FundsRejectedError, type TBrokerEvent } from '../brokers/types.ts';
import type { Tx } from '../db/client.ts';
import type { InstrumentRow, OrderRow } from '../db/schema/index.ts';
import type { WrittenAcceptance } from './broker-answer.ts';
import type { IntentOutcome } from './write-queries.ts';

/** A placement past its gates, as a submission carries it out. */
export interface Placing {
  account: { userId: number; assetClass: TAssetClass; mode: TTradingMode };
  /** The account's broker (the remote submission calls it). */
  broker: Broker;
  /** The order's intent: its pending row. */
  intent: OrderRow;
  /** The order's instrument (an emulated order's stop is set on its tick grid). */
  instrument?: InstrumentRow | undefined;
  /** The order as its broker is asked to take it. */
  request: BrokerOrderRequest;
  /**
   * The risk gate's rules, for a submission that judges them on the account as read with its lock
   * (`Submission.judgesRiskUnderLock`): the refusal, or undefined.
   */
  judge?: ((tx: Tx, account: BrokerSnapshot, price: string) => Promise<FundsRejectedError | undefined>) | undefined;
  /** The intent statement (the row, its audit record and `placed` event, its rate unit, the lock check) in the caller's transaction. */
  writeIntent: (tx: Tx) => Promise<IntentOutcome>;
  /**
   * Takes the intent back in the caller's transaction when the books refuse the order with a
   * refusal of the gates' own (funds, availability or sizing, judged again under the account's
   * lock): no order, the refusal audited as a gate's. False, with nothing written, for any other
   * refusal (the broker's: the order stays, rejected).
   */
  undoIntent: (tx: Tx, refusal: BrokerRejectedError) => Promise<boolean>;
  /** The intent statement committed on its own. */
  commitIntent: () => Promise<IntentOutcome>;
  /**
   * What a committed intent statement means for the placement: undefined when the intent stands
   * (the order goes to the broker), else the answer (a full window's 429, a running lock's 422,
   * or a copy's replay).
   */
  answerUnlessStands: (outcome: IntentOutcome) => Promise<TOrderResponse | undefined>;
  /** Records the broker's acceptance with the events that came with it, in the caller's transaction; undefined when the order is no longer pending. */
  writeAcceptance: (tx: Tx, accepted: BrokerOrder, events: readonly TBrokerEvent[]) => Promise<WrittenAcceptance | undefined>;
}

/** What a submission committed and what the broker did. */
export type Submitted =
  /** The intent did not stand (a full window, a lock, a copy that won the id): the placement's answer. */
  | { kind: 'answered'; response: TOrderResponse }
  /** The broker took the order; `written` when its acceptance was recorded with it. */
  | { kind: 'accepted'; order: BrokerOrder; written?: WrittenAcceptance }
  /** The books refused the order as the gates do and its intent was taken back (undoIntent): no order, the refusal audited. */
  | { kind: 'refused'; error: BrokerRejectedError }
  /** The intent committed and the broker call failed; `outcomeUnknown` when it may have reached the broker. */
  | { kind: 'failed'; error: unknown; outcomeUnknown: boolean }
  /** The database failed during the one transaction of intent and order: it committed whole or not at all. */
  | { kind: 'lost'; error: unknown };

export interface Submission {
  /** Commits what the placement needs and answers what the broker did; throws only when nothing committed. */
  submit(placing: Placing): Promise<Submitted>;
  /**
   * True when it judges the risk rules itself (Placing.judge) in its transaction, on the account
   * read with its lock, where the gate would judge a snapshot read before it.
   */
  readonly judgesRiskUnderLock?: boolean;
}

/**
 * The placement's Submission for an account (the composition root knows which books it has);
 * `emulated` when the gates found the order's type held by the order emulator, not the broker.
 */
export type SubmissionFor = (account: Placing['account'], how?: { emulated: boolean }) => Submission;

/** Commits the intent on its own; the placement's answer when it does not stand. */
export const commitStandingIntent = async (placing: Placing): Promise<Submitted | undefined> => {
  const response = await placing.answerUnlessStands(await placing.commitIntent());
  return response ? { kind: 'answered', response } : undefined;
};

/** An order whose symbol is not registered goes to no broker: its intent commits, and is refused. */
export const unregisteredSymbolSubmission: Submission = {
  submit: async (placing) => (await commitStandingIntent(placing)) ?? { kind: 'failed', error: new BrokerRejectedError(`unknown symbol ${placing.intent.symbol}`), outcomeUnknown: false },
};
