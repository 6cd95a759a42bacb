// Broker events in real mode: for every active US and KR key, one consumer of its adapter's
// events (Alpaca's trade_updates stream, KIS's polling) in the whole deployment, held by a lease
// in Postgres, feeding the order service as the simulator's events do. A consumer starts when its
// key is active (at start-up, or on the change feed), stops when the key is deactivated or
// deleted, when its lease is lost, and at shutdown. Each time the account's stream listens (the
// first time after a start included: a broker sends an update only to a stream listening when it
// happens, so an order placed before that is never reported) and at every restart of a polling
// consumer, the account's unfinished orders are reconciled with the broker: what fell in the gap
// arrives once, by reconciliation or by replay, never twice (fills are keyed by execution id and
// by the filled quantity).
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { ChangeFeed } from '../../events/changes.ts';
import type { ActiveKey, KeyCredentialsReader } from '../../keys/credentials.ts';
import type { Logger } from '../../observability/logger.ts';
import { createLeasedLoop, type LeasedLoop } from '../simulator/lease.ts';
import type { Broker, TBrokerEvent } from '../types.ts';
import type { RealAdapters } from './adapters.ts';

type Account = { userId: number; assetClass: TAssetClass; mode: TTradingMode };

/** The asset classes with a real adapter: every one. */
const CONSUMED: readonly TAssetClass[] = ['us_equity', 'kr_equity', 'crypto'];

export interface BrokerIngestionOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  changes: ChangeFeed;
  /** This instance's lease holder id. */
  holder: string;
  keys: KeyCredentialsReader;
  adapters: RealAdapters;
  /** Every event of every consumed account (the order service's intake, then the kill switch). */
  onEvent: (event: TBrokerEvent) => void;
  /**
   * Runs beside the account's event stream, under the same lease, until the signal aborts: the
   * order emulator's watch of the account's triggers on the broker's quotes.
   */
  alongside?: (account: Account, broker: Broker, signal: AbortSignal) => Promise<void>;
  /** Settles the account's unfinished orders with its broker. */
  reconcile: (account: Account) => Promise<unknown>;
  /** A consumer's lease; another instance takes the account over this long after its holder stopped renewing. */
  leaseTtlMs?: number;
  /** How often leases are renewed, keys re-read and stopped consumers restarted. */
  roundMs?: number;
}

interface Consumer {
  key: ActiveKey;
  loop: LeasedLoop;
  controller?: AbortController;
  running?: Promise<void>;
  /** Starts so far: every start after the first follows a gap in which events may have been missed. */
  starts: number;
  /**
   * Whether its adapter's events have ever called the listening hook (a stream's do, each time it
   * listens; a poller's never): a restart of one that did is reconciled once its stream listens.
   */
  listens: boolean;
}

export type BrokerIngestion = ReturnType<typeof createBrokerIngestion>;

export const createBrokerIngestion = ({ db, clock, logger, changes, holder, keys, adapters, onEvent, alongside, reconcile, leaseTtlMs = 15_000, roundMs = 5_000 }: BrokerIngestionOptions) => {
  const log = logger.child({ area: 'broker-events' });
  const consumers = new Map<number, Consumer>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let syncing: Promise<void> = Promise.resolve();

  const accountOf = ({ userId, assetClass, mode }: ActiveKey): Account => ({ userId, assetClass, mode });

  const reconcileAccount = async (key: ActiveKey, why: string) => {
    try {
      const outcome = await reconcile(accountOf(key));
      log.info({ keyId: key.keyId, userId: key.userId, assetClass: key.assetClass, why, outcome }, 'reconciled the account with its broker');
    } catch (error) {
      log.warn({ err: error, keyId: key.keyId, why }, 'reconciling the account failed; the next listening, restart or minute’s run tries again');
    }
  };

  /** Runs the account's events until aborted or the adapter gives up (then the next round restarts it). */
  const consume = async (consumer: Consumer, signal: AbortSignal) => {
    const { key } = consumer;
    consumer.starts += 1;
    const restarted = consumer.starts > 1;
    let listenings = 0;
    // Called by the stream off its delivery path: the events flow while the account is reconciled.
    const onListening = () => {
      consumer.listens = true;
      listenings += 1;
      return reconcileAccount(key, listenings > 1 ? 'stream reconnected' : restarted ? 'consumer restarted' : 'stream listening');
    };
    // What runs beside the events ends with them: a restart never leaves two running.
    const beside = new AbortController();
    const endBeside = () => beside.abort();
    signal.addEventListener('abort', endBeside, { once: true });
    let besides: Promise<void> | undefined;
    try {
      const broker = adapters.build({ ...accountOf(key), credentials: key.credentials }, { onListening });
      // A poller never listens: its restart is reconciled here, before its first reading, which
      // replays only the day's (KIS) or the last hour's (ccxt) orders.
      if (restarted && !consumer.listens) await reconcileAccount(key, 'consumer restarted');
      besides = alongside?.(accountOf(key), broker, beside.signal).catch((error: unknown) => log.warn({ err: error, keyId: key.keyId }, 'the work beside the broker events stopped'));
      for await (const event of broker.events(signal)) {
        // An order KIS has that no link names (placed outside this service) has no client id: not ours to record.
        if (event.client_order_id === '') continue;
        onEvent(event);
      }
    } catch (error) {
      if (!signal.aborted) log.warn({ err: error, keyId: key.keyId, userId: key.userId, assetClass: key.assetClass }, 'broker events stopped; restarting at the next round');
    } finally {
      beside.abort();
      signal.removeEventListener('abort', endBeside);
      await besides;
    }
  };

  const ensureRunning = (consumer: Consumer) => {
    if (consumer.running || stopped) return Promise.resolve();
    const controller = new AbortController();
    consumer.controller = controller;
    consumer.running = consume(consumer, controller.signal).finally(() => {
      consumer.running = undefined;
      consumer.controller = undefined;
    });
    log.info({ keyId: consumer.key.keyId, userId: consumer.key.userId, assetClass: consumer.key.assetClass }, 'taking in broker events');
    return Promise.resolve();
  };

  const halt = async (consumer: Consumer) => {
    consumer.controller?.abort();
    await consumer.running;
  };

  /** Renews (or takes) the consumer's lease and runs it while held; a lost lease stops it. */
  const round = async (consumer: Consumer) => {
    try {
      if (!(await consumer.loop.runOnce())) await halt(consumer);
    } catch (error) {
      log.warn({ err: error, keyId: consumer.key.keyId }, 'broker events lease round failed');
    }
  };

  const retire = async (keyId: number, consumer: Consumer) => {
    consumers.delete(keyId);
    await halt(consumer);
    await consumer.loop.stop();
  };

  /** Makes the consumers match the active keys now. */
  const syncOnce = async () => {
    if (stopped) return;
    const active = await keys.activeKeys({ assetClasses: CONSUMED, skip: (keyId, error) => log.warn({ keyId, err: error }, 'an active key does not decrypt; its events are not taken in') });
    const wanted = new Map(active.map((key) => [key.keyId, key]));
    for (const [keyId, consumer] of [...consumers]) if (!wanted.has(keyId)) await retire(keyId, consumer);
    for (const [keyId, key] of wanted) {
      if (stopped) return;
      let consumer = consumers.get(keyId);
      if (!consumer) {
        const made: Consumer = {
          key,
          starts: 0,
          listens: false,
          // Its work runs only while the lease is held; this module schedules the rounds (start() is never called).
          loop: createLeasedLoop({ db, clock, logger: log, name: `broker-events:key:${keyId}`, holder, ttlMs: leaseTtlMs, intervalMs: roundMs, work: () => ensureRunning(made) }),
        };
        consumers.set(keyId, made);
        consumer = made;
      }
      await round(consumer);
    }
  };

  /** One sync at a time, in order: a change noticed during one is seen by the next. */
  const sync = () => {
    syncing = syncing.then(syncOnce).catch((error: unknown) => log.warn({ err: error }, 'could not read the active broker keys'));
    return syncing;
  };

  const unsubscribe = changes.subscribe((change) => {
    if (change.kind === 'broker_keys' || change.kind === 'resync') void sync();
  });

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void sync().finally(schedule), roundMs);
    timer.unref();
  };

  return {
    /** The first sync (accounts with active keys start now), then a round every `roundMs`. */
    start: async () => {
      await sync();
      schedule();
    },
    sync,
    /** The key ids whose events this instance takes in now. */
    consuming: () => [...consumers.entries()].filter(([, consumer]) => consumer.running !== undefined).map(([keyId]) => keyId),
    stop: async () => {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await syncing;
      for (const [keyId, consumer] of [...consumers]) await retire(keyId, consumer);
    },
  };
};
