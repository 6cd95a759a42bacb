// The order service, composed: placement through the five gates with idempotent client order ids
// and the intent written before the broker is called (placement.ts); cancel, replace and closing
// a position (commands.ts); reads of orders, positions and the account (reads.ts); the intake of
// broker events (intake.ts); the reconciler that settles intents a crash left without an answer,
// and orders whose events no stream heard (reconcile.ts); and the publisher of order events
// (publisher.ts). Each part takes only what it needs; this module builds them once from OrderDeps.
import type { TAssetClass } from '../../contracts/common.ts';
import type { Alerts } from '../alerts/index.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { setLiveEnabled } from '../controls/queries.ts';
import { findOrderByClientId } from './queries.ts';
import type { Db } from '../db/client.ts';
import type { EventBus } from '../events/bus.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import { createCommands } from './commands.ts';
import { createIntake } from './intake.ts';
import { createOrderAudit } from './order-audit.ts';
import { createPlacement } from './placement.ts';
import { runChildGates } from './gates.ts';
import { createPreview } from './preview.ts';
import { createPlacementsUnderWay } from './placements-under-way.ts';
import { createPublisher } from './publisher.ts';
import { createReads } from './reads.ts';
import { createReconciler } from './reconcile.ts';
import type { SubmissionFor } from './submission.ts';
import { emulatedSubmission } from './emulator/emulated-submission.ts';
import { createOrderEmulator } from './emulator/watch.ts';
import { createOcoSettlement } from './emulator/oco.ts';
import { createExits } from './emulator/exits.ts';
import { createEmulatedExpiry } from './emulator/expiry.ts';

export { toOrderResponse } from './records.ts';
/** The order list's kept count, for the job that folds its changes (server/jobs). */
export { orderTally } from './queries.ts';
export type { PlaceOptions } from './prepare.ts';

export interface OrderDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  instruments: Instruments;
  forUser: BrokerOfAccount;
  alerts: Alerts;
  events: EventBus;
  /** How an account's orders reach its broker: in the broker's books in our database, or remote. */
  submissionFor: SubmissionFor;
  /** Whether an operator has suspended live orders (cached; never false by default in production wiring). */
  liveSuspended?: () => boolean;
  /** How long a duplicate placement waits for its first copy's answer (tests lengthen it). */
  replayWaitMs?: number;
  /** How often an idle trigger watch looks again on its own (emulator/watch.ts has the default; tests lengthen it). */
  triggerIdleReloadMs?: number;
}

export type Orders = ReturnType<typeof createOrders>;

export const createOrders = ({ db, clock, config, logger, metrics, instruments, forUser, alerts, events, submissionFor, liveSuspended = () => false, replayWaitMs, triggerIdleReloadMs }: OrderDeps) => {
  const audit = createOrderAudit(clock);
  const publisher = createPublisher({ events, clock, logger });
  // Shared by the placement and the intake: an order's first events arrive while it is placed.
  const underWay = createPlacementsUnderWay();
  // The order emulator: triggers of what a real broker does not hold, watched beside its events.
  // A fired trigger's child meets the placement's gates but the rate limit and the lock.
  const emulator = createOrderEmulator({ db, clock, logger, instruments, audit, publisher, checkChild: (attempt) => runChildGates(attempt, gateDeps), idleReloadMs: triggerIdleReloadMs });
  const emulated = emulatedSubmission({ db, clock, audit, publisher, onTrigger: emulator.changed });
  const submissionOf: SubmissionFor = (account, how) => (how?.emulated ? emulated : submissionFor(account));
  const { place, gateDeps } = createPlacement({ db, clock, config, logger, metrics, alerts, instruments, forUser, liveSuspended, audit, publisher, underWay, submissionFor: submissionOf, replayWaitMs });
  const { get, list, positions, account, watchedSymbols } = createReads({ db, clock, forUser });
  const { preview } = createPreview({ instruments, forUser });
  const { cancel, replace, cancelAll, closePosition } = createCommands({ db, clock, instruments, forUser, audit, publisher, place, gateDeps, onTriggerChange: emulator.changed });
  // A bracket's or an oto's exits the emulator holds are armed with the entry's fills.
  const armExits = createExits({ clock, audit, publisher, instruments });
  // An emulated OCO's (or a bracket's exits') leg that fills ends the other, in the fill's transaction.
  const settleOco = createOcoSettlement({ clock, audit, publisher });
  const { ingest, idle } = createIntake({ db, clock, logger, forUser, audit, publisher, underWay, children: { ...emulator, armExits, settleOco } });
  // What it finds is told and followed up as the intake's broker events are.
  const reconcile = createReconciler({ db, clock, logger, forUser, audit, publisher, fillFollowUps: { armExits, settleOco }, onTriggerChange: emulator.changed });
  const expireEmulated = createEmulatedExpiry({ db, clock, audit, publisher, onTriggerChange: emulator.changed });

  /** Sets a user's live flag for an asset class (the live-promotion area will call this). */
  const setLive = ({ userId, assetClass, enabled }: { userId: number; assetClass: TAssetClass; enabled: boolean }) => setLiveEnabled(db, { userId, assetClass, enabled, at: clock.now() });

  return {
    place,
    preview,
    get,
    /** The user's order under a client order id, whatever its state (a signal's outcome reads it). */
    byClientOrderId: ({ userId, clientOrderId }: { userId: number; clientOrderId: string }) => findOrderByClientId(db, { userId, clientOrderId }),
    list,
    cancel,
    replace,
    cancelAll,
    closePosition,
    positions,
    account,
    ingest,
    idle,
    reconcile,
    /** Ends the emulated day orders past their session's close (the day-order expiry job). */
    expireEmulated,
    /** Watches an account's emulated orders' triggers (the broker ingestion runs it under the account's lease). */
    watchTriggers: emulator.watch,
    watchedSymbols,
    setLive,
    onEvent: publisher.onEvent,
  };
};
