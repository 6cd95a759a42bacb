// The order events of the service: written to the outbox in the transaction of the change they
// report, then announced after its commit, which wakes the outbox's readers and tells this
// process's listeners (the events area carries them further). And two internal signals, changes no
// client sees, told to the other instances: an order whose outcome became unknown, and an
// account's emulated triggers changed (its watch, wherever it runs, reads them again).
import { ZTradingMode, type TBrokerEvent, type TTradingMode } from '../../contracts/brokers.ts';
import { ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import type { TOrderEvent } from '../../contracts/orders.ts';
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/client.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { EventBus } from '../events/bus.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';
import { outboxRowsOf } from './records.ts';

/** The signal of an order marked with its outcome unknown (its key: the client order id). */
const UNCONFIRMED_TOPIC = 'order_unconfirmed';
/** The signal of an account's emulated triggers changed (its key: the asset class and the mode). */
const TRIGGERS_TOPIC = 'order_triggers';

/** An account as the trigger signal names it. */
export interface TriggerAccount {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
}

export interface PublisherDeps {
  events: EventBus;
  clock: Clock;
  logger: Logger;
}

export const createPublisher = ({ events, clock, logger }: PublisherDeps) => {
  /** Told after commit, in this process (the events area carries the events further). */
  const listeners = createListeners<[TOrderEvent]>((error) => logger.error({ err: error }, 'order event listener failed'));

  /**
   * Writes order events (and a fill's trade) to the outbox in the caller's transaction, so each is
   * delivered if and only if the change it reports commits; returns them for `announce` after.
   */
  const appendEvents = async (tx: Queryable, row: OrderRow, frames: TOrderEvent[], fill?: NonNullable<TBrokerEvent['fill']>): Promise<TOrderEvent[]> => {
    await events.append(tx, outboxRowsOf(row, frames, clock.now(), fill));
    return frames;
  };

  /** After the commit that wrote them to the outbox: wakes its readers and tells this process's listeners. */
  const announce = (frames: TOrderEvent[]) => {
    if (frames.length === 0) return;
    events.wake();
    for (const frame of frames) listeners.publish(frame);
  };

  const onEvent = (listener: (event: TOrderEvent) => void) => listeners.add(listener);

  /**
   * Calls `listener` with the user's order events as they commit on any instance (through the
   * event bus: `onEvent` hears only this process's), from now on. Resolves, once listening, to the
   * unsubscribe.
   */
  const followUser = (userId: number, listener: (event: TOrderEvent) => void): Promise<() => void> =>
    events.subscribe({ userId, channel: 'orders', listener: ({ frame }) => listener(frame as TOrderEvent) });

  /**
   * In the transaction that marks an order's outcome unknown: tells every instance once it
   * commits. The mark changes nothing a client sees (the order stays pending, no order event), yet
   * a duplicate waiting on another instance for the order's answer has it now (the 502 that says
   * so). A signal, not an outbox row: it is for this service's waiters only, and losing one costs
   * a waiter no more than its bound.
   */
  const signalUnconfirmed = (tx: Queryable, row: Pick<OrderRow, 'userId' | 'clientOrderId'>): Promise<void> =>
    events.signal(tx, { topic: UNCONFIRMED_TOPIC, userId: row.userId, key: row.clientOrderId });

  /**
   * Calls `listener` with the client order id of each of the user's orders marked with its outcome
   * unknown on any instance, from now on (listening already when this returns); returns the
   * unsubscribe.
   */
  const followUnconfirmed = (userId: number, listener: (clientOrderId: string) => void): (() => void) =>
    events.onSignal((signal) => {
      if (signal.topic === UNCONFIRMED_TOPIC && signal.userId === userId) listener(signal.key);
    });

  /**
   * After the commit that placed, canceled or changed an account's emulated trigger: tells every
   * instance, so that the one watching the account's triggers (under its lease) reads them now
   * rather than at its next look. Sent on its own, not in the change's transaction: a NOTIFY there
   * would hold a database-wide lock through the commit. A lost one costs only the watch's bound.
   */
  const signalTriggers = (db: Queryable, { userId, assetClass, mode }: TriggerAccount): Promise<void> =>
    events.signal(db, { topic: TRIGGERS_TOPIC, userId, key: `${assetClass}:${mode}` });

  /** Calls `listener` with each account whose triggers changed on any instance, from now on; returns the unsubscribe. */
  const followTriggers = (listener: (account: TriggerAccount) => void): (() => void) =>
    events.onSignal((signal) => {
      if (signal.topic !== TRIGGERS_TOPIC) return;
      const [assetClass, mode] = signal.key.split(':');
      const account = { assetClass: ZAssetClass.safeParse(assetClass), mode: ZTradingMode.safeParse(mode) };
      if (account.assetClass.success && account.mode.success) listener({ userId: signal.userId, assetClass: account.assetClass.data, mode: account.mode.data });
    });

  return { appendEvents, announce, onEvent, followUser, signalUnconfirmed, followUnconfirmed, signalTriggers, followTriggers };
};

export type OrderPublisher = ReturnType<typeof createPublisher>;
