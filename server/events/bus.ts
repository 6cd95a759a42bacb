// The event bus: durable per-user events written to the outbox in the transaction of the change
// they report, read back by every instance after commit and handed to that user's subscribers in
// this process, and no one else's. The writer wakes the readers after its commit (`wake`): this
// process reads at once, and a NOTIFY sent on its own, outside the writing transaction, wakes the
// others (a NOTIFY inside it would hold a database-wide lock through its commit and so serialise
// every commit that wrote an event). The rows are the messages, so a wake-up lost (the writer
// died between its commit and the NOTIFY, or a LISTEN connection was down) loses nothing: the
// reader reads again when it reconnects, at the next wake-up of anyone, and at a slow safety
// interval.
import { performance } from 'node:perf_hooks';
import type { TAssetClass } from '../../contracts/common.ts';
import { notify, type DatabaseHandle, type Queryable } from '../db/client.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';
import { committedEnd, insertEvents, positionOf, readAfter, readUserEvents, settledEnd, type OutboxPosition, type OutboxRow, type TEventChannel } from './queries.ts';
import { listenForSignals, sendSignal, type Signal } from './signals.ts';

export type { Signal, TEventChannel };

/** An event as subscribers receive it. */
export interface BusEvent {
  id: number;
  userId: number;
  channel: TEventChannel;
  frame: Record<string, unknown>;
}

export interface NewEvent {
  userId: number;
  channel: TEventChannel;
  /** The frame as clients receive it; the bus adds its event_id. */
  frame: Record<string, unknown>;
  at: Date;
}

/** A price as the simulator (or a broker feed) made it: passing, never stored. */
export interface PriceTick {
  assetClass: TAssetClass;
  symbol: string;
  price: string;
  at: string;
}

export interface EventBus {
  /**
   * Writes events in the caller's transaction: they are delivered if and when it commits, once
   * the caller calls `wake` after the commit (or, at worst, at the next safety read).
   */
  append(tx: Queryable, events: NewEvent[]): Promise<void>;
  /** Called after a transaction that appended events committed: delivers them here and wakes the other instances. */
  wake(): void;
  /**
   * Calls `listener` with the user's events on `channel`: first those after `afterId` (a
   * resuming client's last event id; at most `BACKFILL_LIMIT` of them), then every new one, in
   * delivery order, each once. Resolves once the backfill is handed over; returns the unsubscribe.
   */
  subscribe(opts: { userId: number; channel: TEventChannel; afterId?: number | undefined; listener: (event: BusEvent) => void }): Promise<() => void>;
  /** Announces a price to every instance (a NOTIFY: ticks skip the outbox; a missed one is superseded by the next). */
  publishTick(tick: PriceTick): Promise<void>;
  /** Every price announced by any instance, from now on. */
  onTick(listener: (tick: PriceTick) => void): () => void;
  /** Sends a signal in `tx` to every instance, once it commits (signals.ts: never stored, never a client's frame). */
  signal(tx: Queryable, signal: Signal): Promise<void>;
  /** Every signal sent by any instance, from now on. */
  onSignal(listener: (signal: Signal) => void): () => void;
  /** How many subscriptions this process holds for the user (0 once its last client has gone). */
  subscriptionsOf(userId: number): number;
  /** Reads what is new now (tests; the wake-ups do this on their own). */
  poll(): Promise<void>;
  close(): Promise<void>;
}

/** The NOTIFY channel that wakes readers of the outbox (the notifications' dispatcher listens too). */
export const EVENTS_CHANNEL = 'ts_events';
const CHANNEL = EVENTS_CHANNEL;
const TICKS_CHANNEL = 'ts_ticks';
const BATCH = 500;
/** How long a first subscriber after a quiet spell waits for committed rows to settle (then it goes on). */
const CATCH_UP_WAIT_MS = 1_000;
export const BACKFILL_LIMIT = 1_000;

export interface EventBusOptions {
  database: DatabaseHandle;
  logger: Logger;
  /** A bound on a lost wake-up, not the mechanism (default 5 s). */
  safetyPollMs?: number;
  /** How soon to look again while an older transaction may still add earlier events (default 10 ms). */
  settlePollMs?: number;
  /** The least time between two NOTIFYs of this instance (default 20 ms). */
  announceGapMs?: number;
}

export const createEventBus = async ({ database, logger, safetyPollMs = 5_000, settlePollMs = 10, announceGapMs = 20 }: EventBusOptions): Promise<EventBus> => {
  const { db } = database;
  const log = logger.child({ area: 'events' });
  /** Per user, the listeners in this process. */
  const subscribers = new Map<number, Set<(event: BusEvent) => void>>();
  let cursor: OutboxPosition = await settledEnd(db);
  let closed = false;

  const dispatch = (row: OutboxRow) => {
    const listeners = subscribers.get(row.userId);
    if (!listeners) return;
    const event: BusEvent = { id: row.id, userId: row.userId, channel: row.channel, frame: row.frame };
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        log.error({ err: error }, 'event listener failed');
      }
    }
  };

  let settleTimer: NodeJS.Timeout | undefined;
  let unsettledSince: number | undefined;
  /** Reads and dispatches every settled row after the cursor; true when unsettled rows wait. */
  const readNew = async (): Promise<boolean> => {
    for (;;) {
      const rows = await readAfter(db, cursor, BATCH);
      for (const row of rows) {
        // Rows come in delivery order: past the first unsettled one, everything waits with it.
        if (!row.settled) return true;
        cursor = { txId: row.txId, id: row.id };
        dispatch(row);
      }
      if (rows.length < BATCH) return false;
    }
  };

  let running: Promise<void> | undefined;
  let again = false;
  /**
   * True when a wake-up found nobody listening in this process and was not read: the cursor may
   * be behind, and the first subscriber moves it to the end before it registers.
   */
  let behind = false;
  const poll = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (subscribers.size === 0) {
      behind = true;
      return running ?? Promise.resolve();
    }
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let waiting = false;
      do {
        again = false;
        try {
          waiting = await readNew();
        } catch (error) {
          if (!closed) log.error({ err: error }, 'reading the event outbox failed');
          waiting = true; // try again shortly
        }
      } while (again && !closed);
      if (!waiting || closed) {
        unsettledSince = undefined;
        return;
      }
      // An older transaction is still open: its events (if any) come first, so look again soon.
      unsettledSince ??= performance.now();
      if (performance.now() - unsettledSince > 5_000) {
        log.warn({ waitedMs: Math.round(performance.now() - unsettledSince) }, 'events wait for a long-running transaction to end');
        unsettledSince = performance.now();
      }
      settleTimer ??= setTimeout(() => {
        settleTimer = undefined;
        void poll();
      }, settlePollMs);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  let announcing: Promise<void> | undefined;
  let announceAgain = false;
  /** When the last NOTIFY went out (monotonic ms). */
  let lastAnnounced = Number.NEGATIVE_INFINITY;
  let announceTimer: NodeJS.Timeout | undefined;
  /**
   * Wakes every instance's reader with a NOTIFY of its own, at most one per announceGapMs: the
   * wake-ups of that span are folded into one at its end, which covers their rows too. Each
   * NOTIFY is a statement and a round trip; at hundreds of commits a second, one per commit
   * would cost more than the orders' own writes. This process reads at once (wake), so only the
   * other instances wait, by at most the gap.
   */
  const announce = () => {
    if (announcing || announceTimer) {
      announceAgain = true;
      return;
    }
    const wait = lastAnnounced + announceGapMs - performance.now();
    if (wait > 0) {
      announceTimer = setTimeout(() => {
        announceTimer = undefined;
        announce();
      }, wait);
      return;
    }
    announcing = (async () => {
      announceAgain = false;
      lastAnnounced = performance.now();
      try {
        await notify(db, CHANNEL, '');
      } catch (error) {
        if (!closed) log.warn({ err: error }, 'waking the other instances failed; they read at their next wake-up');
      }
    })().finally(() => {
      announcing = undefined;
      if (announceAgain && !closed) announce();
    });
  };

  const unlisten = await database.listen(
    CHANNEL,
    () => void poll(),
    () => void poll(),
  );
  const tickListeners = createListeners<[PriceTick]>((error) => log.error({ err: error }, 'tick listener failed'));
  const unlistenTicks = await database.listen(TICKS_CHANNEL, (payload) => {
    let tick: PriceTick;
    try {
      tick = JSON.parse(payload) as PriceTick;
    } catch {
      return;
    }
    tickListeners.publish(tick);
  });
  const signals = await listenForSignals(database, log);
  const safety = setInterval(() => void poll(), safetyPollMs);
  safety.unref();

  let catchingUp: Promise<void> | undefined;
  /**
   * Moves the cursor to the end of what is settled, as at start (once the reader is done). Rows
   * already committed but not settled yet (a transaction older than theirs still runs, anywhere
   * in the cluster) would come up behind the cursor later and reach the new subscriber as if they
   * were new: it waits, a bounded while, until what is committed is settled too.
   */
  const catchUp = () =>
    (catchingUp ??= (async () => {
      await running;
      const deadline = performance.now() + CATCH_UP_WAIT_MS;
      for (;;) {
        const [settled, committed] = await Promise.all([settledEnd(db), committedEnd(db)]);
        cursor = settled;
        if ((settled.txId === committed.txId && settled.id === committed.id) || performance.now() > deadline || closed) break;
        await new Promise((resolve) => setTimeout(resolve, settlePollMs));
      }
      behind = false;
    })().finally(() => {
      catchingUp = undefined;
    }));

  const subscribe: EventBus['subscribe'] = async ({ userId, channel, afterId, listener }) => {
    // The first subscriber after a quiet spell: what was written meanwhile is history, which only
    // a backfill (after last_event_id) brings.
    if (subscribers.size === 0 && (behind || catchingUp)) await catchUp();
    // Events dispatched while the backfill is read wait here (then the array is let go).
    let buffered: BusEvent[] | undefined = [];
    const entry = (event: BusEvent) => {
      if (event.channel !== channel) return;
      if (buffered) buffered.push(event);
      else listener(event);
    };
    let listeners = subscribers.get(userId);
    if (!listeners) subscribers.set(userId, (listeners = new Set()));
    listeners.add(entry);
    // Taken in the same tick as the registration: every row up to here was dispatched before it,
    // every later one will reach it.
    const upTo = cursor;
    const unsubscribe = () => {
      const set = subscribers.get(userId);
      set?.delete(entry);
      if (set?.size === 0) subscribers.delete(userId);
    };
    try {
      if (afterId !== undefined) {
        const since = (await positionOf(db, afterId)) ?? { id: afterId };
        for (const row of await readUserEvents(db, { userId, channel, since, upTo, limit: BACKFILL_LIMIT })) {
          listener({ id: row.id, userId: row.userId, channel: row.channel, frame: row.frame });
        }
      }
    } catch (error) {
      unsubscribe();
      throw error;
    }
    const held = buffered;
    buffered = undefined;
    for (const event of held) listener(event);
    // Rows after the cursor whose wake-up came while nobody listened are read now.
    void poll();
    return unsubscribe;
  };

  return {
    append: (tx, events) => insertEvents(tx, events),
    wake: () => {
      if (closed) return;
      void poll();
      announce();
    },
    subscribe,
    subscriptionsOf: (userId) => subscribers.get(userId)?.size ?? 0,
    publishTick: (tick) => notify(db, TICKS_CHANNEL, JSON.stringify(tick)),
    onTick: (listener) => tickListeners.add(listener),
    signal: sendSignal,
    onSignal: signals.on,
    poll,
    close: async () => {
      closed = true;
      clearTimeout(announceTimer);
      clearInterval(safety);
      if (settleTimer) clearTimeout(settleTimer);
      await running;
      await announcing;
      await unlisten();
      await unlistenTicks();
      await signals.close();
      tickListeners.clear();
      subscribers.clear();
    },
  };
};
