// Placement of an order, top to bottom: prepare the attempt → answer a duplicate → the first four
// gates → the intent → submit it to the broker → record the broker's answer. Idempotent by client
// order id: a copy of a request under way in this process waits for it and answers the same.
import { randomUUID } from 'node:crypto';
import type { TOrderResponse } from '../../contracts/orders.ts';
import { recordAudit, type AuditRecord } from '../audit/log.ts';
import type { Alerts } from '../alerts/index.ts';
import { FundsRejectedError } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { createDayStartEquity } from '../controls/day-start-cache.ts';
import { utcDateOf } from '../controls/day-start.ts';
import type { Db, Queryable } from '../db/client.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { placementStep } from '../observability/placement-steps.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import { createAnswerRecorder, fundsRefusalOf } from './broker-answer.ts';
import { createDuplicates } from './duplicates.ts';
import type { OrderAttempt, TGateName } from './attempt.ts';
import { deferredChecksOf, deferredRefusalOf, GateRefusal, releaseClaims, runGates } from './gates.ts';
import type { OrderAudit } from './order-audit.ts';
import { placementKey, type PlacementsUnderWay } from './placements-under-way.ts';
import type { OrderPublisher } from './publisher.ts';
import { findOrderByClientId } from './queries.ts';
import { insertIntentRecorded, withdrawIntentRecorded, type IntentOutcome } from './write-queries.ts';
import { trailMetadataOf } from './trailing.ts';
import { createPreparation, type PlaceOptions, type PreparedPlacement } from './prepare.ts';
import { auditRecordOf, brokerRequestOf, intentRowOf, placedPayloadOf } from './records.ts';
import { unregisteredSymbolSubmission, type Placing, type SubmissionFor } from './submission.ts';
import { EMULATED_EXITS, entryAloneOf } from './emulator/exits.ts';

/**
 * The risk gate's refusal that the books make again under the account's lock (funds, the quantity
 * available to sell, sizing: another placement took what the gate saw free), else undefined.
 */
const refusalUnderLockOf = (error: unknown): GateRefusal | undefined => {
  const answer = fundsRefusalOf(error);
  return answer && new GateRefusal('risk', answer);
};

export type CountGate = (assetClass: OrderAttempt['assetClass'], gate: TGateName, outcome: 'passed' | 'refused' | 'failed') => void;

export interface PlacementDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  alerts: Alerts;
  instruments: Instruments;
  forUser: BrokerOfAccount;
  liveSuspended: () => boolean;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce' | 'followUser' | 'signalUnconfirmed' | 'followUnconfirmed'>;
  underWay: PlacementsUnderWay;
  /** How an account's orders are submitted (chosen by the composition root). */
  submissionFor: SubmissionFor;
  /** How long a duplicate waits for its first copy's answer (duplicates.ts has the default). */
  replayWaitMs?: number;
}

export const createPlacement = ({ db, clock, config, logger, metrics, alerts, instruments, forUser, liveSuspended, audit, publisher, underWay, submissionFor, replayWaitMs }: PlacementDeps) => {
  const dayStart = createDayStartEquity(db);
  /**
   * Whether the account's submission judges the risk rules on the account read with its lock: not
   * for a close (its cancels come before its sell), a replace or a fired child (judged on their
   * own terms), nor an order the order emulator holds.
   */
  const judgesRiskUnderLock = (attempt: Pick<OrderAttempt, 'userId' | 'assetClass' | 'mode' | 'closing' | 'replacing' | 'quotedPrice' | 'emulated' | 'emulatedExits'>): boolean =>
    // The account's first evaluation of the day (here) takes its day-start equity outside the
    // placement's transaction, where it is kept for the day's later ones.
    dayStart.knows({ ...attempt, day: utcDateOf(clock.now()) }) &&
    !attempt.closing &&
    !attempt.replacing &&
    attempt.quotedPrice === undefined &&
    !attempt.emulated &&
    !attempt.emulatedExits &&
    submissionFor({ userId: attempt.userId, assetClass: attempt.assetClass, mode: attempt.mode }).judgesRiskUnderLock === true;
  const gateDeps = { db, clock, config, forUser, dayStart, liveSuspended, judgesRiskUnderLock };
  const countGate: CountGate = (assetClass, gate, outcome) => metrics.ordersByGate.labels({ asset_class: assetClass, gate, outcome }).inc();
  const duplicates = createDuplicates({ db, publisher, replayWaitMs });
  const prepare = createPreparation({ db, instruments, forUser, judgesRiskUnderLock });
  const answers = createAnswerRecorder({ db, clock, logger, alerts, audit, publisher, underWay, countGate });

  /**
   * Places an order, or answers as a replay. A copy that arrives while its original is still
   * being placed in this process waits for it and answers the same (or its refusal), so copies
   * never run the gates (nor count toward the rate limit) beside it.
   */
  const place = async (opts: PlaceOptions): Promise<TOrderResponse> => {
    const clientOrderId = opts.request.client_order_id ?? randomUUID().replaceAll('-', '');
    const key = placementKey(opts.user.id, clientOrderId);
    const original = underWay.running(key);
    if (original) {
      const failure = await original.then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure && !(await findOrderByClientId(db, { userId: opts.user.id, clientOrderId }))) throw failure;
    }
    placementStep(opts.user.id, clientOrderId, 'received');
    const answer = await underWay.track(key, placeOnce({ ...opts, clientOrderId }));
    placementStep(opts.user.id, clientOrderId, 'answered');
    return answer;
  };

  const placeOnce = async (opts: PlaceOptions & { clientOrderId: string }): Promise<TOrderResponse> => {
    const prepared = await prepare(opts);
    if (prepared.taken) return duplicates.answerDuplicate(prepared.user.id, prepared.clientOrderId, prepared.hash);
    const racedAnswer = await passGates(prepared);
    if (racedAnswer) return racedAnswer;
    placementStep(prepared.user.id, prepared.clientOrderId, 'gated');
    if (opts.beforeClose) {
      await opts.beforeClose().catch(async (error: unknown) => {
        await releaseClaims(db, prepared.attempt);
        throw error;
      });
    }
    const placing = placingOf(prepared);
    // An unregistered symbol goes to no broker, whichever the account has.
    const submission = prepared.instrument ? submissionFor(placing.account, { emulated: prepared.attempt.emulated === true }) : unregisteredSymbolSubmission;
    const submitted = await submission.submit(placing);
    switch (submitted.kind) {
      case 'answered':
        return submitted.response;
      case 'lost':
        return answerLostTransaction(prepared, submitted.error);
      case 'refused':
        // Audited in the transaction that took the intent back.
        return endRefusal(prepared, refusalUnderLockOf(submitted.error)!);
      case 'failed':
        return answers.recordFailed(prepared, placing.intent, submitted.error, submitted.outcomeUnknown);
      case 'accepted':
        if (submitted.written) underWay.forgetRecorded(placementKey(prepared.user.id, prepared.clientOrderId), submitted.written.events);
        countGate(prepared.attempt.assetClass, 'broker', 'passed');
        return answers.recordAccepted(prepared, placing.intent, submitted.order, submitted.written);
    }
  };

  /** A gate's refusal as the audit log records it: no order, the attempt's id and symbol. */
  const refusalRecordOf = ({ user, clientOrderId, symbol, origin, attempt }: PreparedPlacement, refusal: GateRefusal): AuditRecord => {
    const identity = { userId: user.id, clientOrderId, assetClass: attempt.assetClass, broker: 'simulator', live: attempt.mode === 'live', brokerOrderId: null };
    return auditRecordOf(identity, 'order.refused', { gate: refusal.gate, code: refusal.error.code, reason: refusal.error.message, symbol }, clock.now(), origin);
  };

  /** The end of a refusal that is audited: its rate units given back, its count, its answer. */
  const endRefusal = async ({ attempt }: PreparedPlacement, refusal: GateRefusal): Promise<never> => {
    await releaseClaims(db, attempt);
    countGate(attempt.assetClass, refusal.gate, 'refused');
    throw refusal.error;
  };

  /** Refusals at gates 1-4 create no order: the id stays unused, the refusal is audited. */
  const refuse = async (prepared: PreparedPlacement, refusal: GateRefusal): Promise<never> => {
    await recordAudit(db, refusalRecordOf(prepared, refusal));
    return endRefusal(prepared, refusal);
  };

  /**
   * The first four gates. A refusal is audited and thrown, unless a copy of the request made the
   * order meanwhile: then the answer is that copy's replay.
   */
  const passGates = async (prepared: PreparedPlacement): Promise<TOrderResponse | undefined> => {
    const { user, clientOrderId, hash, attempt } = prepared;
    try {
      await runGates(attempt, gateDeps);
      return undefined;
    } catch (error) {
      if (!(error instanceof GateRefusal)) throw error;
      if (await findOrderByClientId(db, { userId: user.id, clientOrderId })) return duplicates.answerRacedDuplicate(attempt, clientOrderId, hash);
      return refuse(prepared, error);
    }
  };

  /**
   * The database failed, not the broker: the placement's one transaction committed whole (its
   * COMMIT went out before the connection broke) or not at all. Committed, it is this order's
   * answer; else nothing of the order stands, and the caller's retry with the same client order
   * id places it (503, or 503 again while the database stays away).
   */
  const answerLostTransaction = async ({ user, clientOrderId, hash, attempt }: PreparedPlacement, error: unknown): Promise<TOrderResponse> => {
    if (await findOrderByClientId(db, { userId: user.id, clientOrderId })) return duplicates.answerRacedDuplicate(attempt, clientOrderId, hash);
    await releaseClaims(db, attempt);
    throw error;
  };

  /** The risk gate's rules left to the submission, refusing as the books refuse: the gate's answer inside. */
  const riskJudgeOf = ({ riskUnderLock }: OrderAttempt): Placing['judge'] =>
    riskUnderLock &&
    (async (tx, account, price) => {
      const refusal = await riskUnderLock(tx, account, price);
      return refusal && new FundsRejectedError(`risk rules: ${refusal.message}`, refusal.message, refusal.code);
    });

  /** The placement as its submission carries it out: the intent, the broker request, and the records it writes. */
  const placingOf = (prepared: PreparedPlacement): Placing => {
    const { user, request, origin, source, clientOrderId, symbol, hash, attempt } = prepared;
    const broker = attempt.broker!;
    const at = clock.now();
    const metadata: Record<string, unknown> = {
      source,
      ...(attempt.liquidation ? { liquidation: true } : {}),
      ...(request.report_uuid ? { report_uuid: request.report_uuid } : {}),
      ...(request.order_type === 'stop_limit' ? { stop_limit_price: request.limit_price } : {}),
      // A trailing stop's trail, for its broker to hold; its stop and mark come with the answer.
      ...trailMetadataOf(request),
      // Held by the order emulator rather than the broker (DESIGN §6 "Advanced orders").
      ...(attempt.emulated ? { emulated: true } : {}),
      // A bracket's or an oto's exits held by the order emulator, armed with the entry's fills.
      ...(attempt.emulatedExits ? { [EMULATED_EXITS]: true } : {}),
      // An oto's or an oco's class; a bracket's is its bracket.
      ...(request.order_class === 'oto' || request.order_class === 'oco' ? { order_class: request.order_class } : {}),
    };
    // The intent and its audit record, before the broker is called: a crash after this point is
    // found by the reconciler, never lost.
    const row = intentRowOf({ userId: user.id, clientOrderId, request, live: attempt.mode === 'live', symbol, broker: broker.name, qty: attempt.qty, limitPrice: attempt.limitPrice, stopPrice: attempt.stopPrice, metadata, requestHash: hash, at });
    // The intent in one statement, with the checks its gates left to the write: a full window or
    // a running lock writes nothing, and nor does a copy that won the race for the id.
    const checks = deferredChecksOf(attempt, gateDeps, at);
    const write = (q: Queryable) =>
      insertIntentRecorded(q, row, {
        audit: [auditRecordOf(row, 'order.placed', { symbol, side: request.side, qty: attempt.qty, order_type: request.order_type }, clock.now(), origin)],
        // No event: the `placed` frame is written with the broker's answer, which gives it the broker's id.
        events: [],
        ...checks,
      });
    const answerUnlessStands = async (outcome: IntentOutcome): Promise<TOrderResponse | undefined> => {
      const refusal = deferredRefusalOf(attempt, checks, outcome, gateDeps);
      // Refused at the last moment, unless it is a copy of an order made meanwhile: a replay.
      if (refusal && (await findOrderByClientId(db, { userId: user.id, clientOrderId }))) return duplicates.answerRacedDuplicate(attempt, clientOrderId, hash);
      if (refusal) return refuse(prepared, await refusal());
      // A copy of this request won the race for the id: answer as its replay.
      if (!outcome.placed) return duplicates.answerRacedDuplicate(attempt, clientOrderId, hash);
      countGate(attempt.assetClass, 'risk', 'passed');
      return undefined;
    };
    return {
      account: { userId: user.id, assetClass: attempt.assetClass, mode: attempt.mode },
      broker,
      instrument: prepared.instrument,
      intent: row,
      // An entry whose exits are emulated goes to its broker alone.
      request: attempt.emulatedExits ? entryAloneOf(brokerRequestOf(row, request)) : brokerRequestOf(row, request),
      judge: riskJudgeOf(attempt),
      writeIntent: write,
      // The books' refusal under the lock is the risk gate's, made on what the gate could not see
      // (DESIGN: refusals at gates 1-4 create no order): the intent written in this transaction
      // goes again, and the refusal is audited in its place. Taken back by a delete of what the
      // intent wrote rather than under a savepoint: a savepoint costs every placement a
      // statement on the hot path (the account's lock is held one round trip per placement),
      // where the delete costs only the refusals a statement.
      undoIntent: async (tx, error) => {
        const refusal = refusalUnderLockOf(error);
        return refusal !== undefined && (await withdrawIntentRecorded(tx, row, refusalRecordOf(prepared, refusal)));
      },
      commitIntent: () => write(db),
      answerUnlessStands,
      writeAcceptance: (tx, accepted, events) => answers.writeAcceptance(tx, row, placedPayloadOf(request, symbol), accepted, events),
    };
  };

  return { place, gateDeps };
};
