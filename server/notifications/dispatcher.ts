// The notifications' reader of the outbox: once per cluster, each event once. It runs on the
// instances that run workers; whichever holds the cursor's row lock reads the settled events
// after it, folds each into the gathering message of every channel subscribed to it, and moves
// the cursor, in one transaction (a crash reads the same events again, never half of them). A
// message gathers for FOLD_MS from its first event (the clock's time), then it is queued: its
// pg-boss job is written in the transaction that queues it. Woken by the outbox's NOTIFY, by
// the clock when a message falls due, and at a slow safety interval.
//
// While no channel is enabled anywhere (a service whose users have none, as under an order load),
// the outbox's wake-ups are let pass: the safety interval alone moves the cursor on to the end,
// with one small read, so a cluster without channels pays nothing per order. A channel made
// meanwhile (here, which wakes the reader, or on another instance, seen within the interval) is
// sent only the events after its creation.
import type { Clock } from '../clock.ts';
import { wakeAt } from '../clock.ts';
import type { DatabaseHandle, Tx } from '../db/client.ts';
import { EVENTS_CHANNEL } from '../events/bus.ts';
import { readTimedAfter, settledEnd, type OutboxPosition } from '../events/queries.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Logger } from '../observability/logger.ts';
import { noticeItemOf, type NoticeItem } from './events.ts';
import { anyChannelEnabled, claimCursor, enabledChannelsOf, foldIntoMessage, moveCursor, nextDue, queueDueMessages } from './queries.ts';

/** Events of one channel within this span fold into one message. */
export const FOLD_MS = 5_000;
export const DELIVER_QUEUE = 'notification-deliver';
const BATCH = 500;
/** A bound on a lost wake-up, not the mechanism. */
const SAFETY_POLL_MS = 5_000;
/** How soon to look again while an older transaction may still add earlier events. */
const SETTLE_POLL_MS = 50;

export interface DeliverJob {
  messageId: number;
}

export interface Dispatcher {
  /** Reads what is new and queues what is due, now (tests; wake-ups do it on their own). */
  kick(): Promise<void>;
  /** A channel was made or enabled here: read the outbox at its wake-ups again. */
  channelsChanged(): void;
  stop(): Promise<void>;
}

interface Read {
  /** Rows were left: a full batch, or rows not settled yet. */
  more: boolean;
  unsettled: boolean;
  /** Whether any channel was enabled: when none was, the cursor moved on to the end unread. */
  channels: boolean;
}

/** Folds one batch of settled events after the cursor into their channels' messages. */
const foldBatch = async (tx: Tx): Promise<Read> => {
  const cursor = await claimCursor(tx, () => settledEnd(tx));
  if (!cursor) return { more: false, unsettled: false, channels: true };
  if (!(await anyChannelEnabled(tx))) {
    await moveCursor(tx, await settledEnd(tx));
    return { more: false, unsettled: false, channels: false };
  }
  const rows = await readTimedAfter(tx, cursor, BATCH);
  let position: OutboxPosition = cursor;
  const items: { userId: number; item: NoticeItem }[] = [];
  let unsettled = false;
  for (const row of rows) {
    if (!row.settled) {
      unsettled = true;
      break;
    }
    position = { txId: row.txId, id: row.id };
    const item = noticeItemOf(row);
    if (item) items.push({ userId: row.userId, item });
  }
  if (position === cursor) return { more: false, unsettled, channels: true };
  const channels = await enabledChannelsOf(tx, [...new Set(items.map(({ userId }) => userId))]);
  for (const channel of channels) {
    // A channel hears what happened once it existed (the cursor may have been behind its creation).
    const mine = items
      .filter(({ userId, item }) => userId === channel.userId && channel.events.includes(item.event) && new Date(item.at) >= channel.createdAt)
      .map(({ item }) => item);
    const first = mine[0];
    if (!first) continue;
    const at = new Date(first.at);
    await foldIntoMessage(tx, { channelId: channel.id, items: mine as unknown as Record<string, unknown>[], at, dueAt: new Date(at.getTime() + FOLD_MS) });
  }
  await moveCursor(tx, position);
  return { more: !unsettled && rows.length === BATCH, unsettled, channels: true };
};

export const startDispatcher = async ({ database, clock, logger, jobs }: { database: DatabaseHandle; clock: Clock; logger: Logger; jobs: JobQueue }): Promise<Dispatcher> => {
  const { db } = database;
  const log = logger.child({ area: 'notifications' });
  const boss = await jobs.boss();
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let cancelDue: (() => void) | undefined;
  let settleTimer: NodeJS.Timeout | undefined;
  /** As the last pass found: while false, the outbox's wake-ups are let pass (the safety interval reads). */
  let channelsEnabled = true;

  const queueDue = () =>
    db.transaction(async (tx) => {
      const due = await queueDueMessages(tx, clock.now());
      for (const message of due) await boss.send(DELIVER_QUEUE, { messageId: message.id } satisfies DeliverJob, { db: jobs.inTransaction(tx) });
      return due.length;
    });

  const pass = async () => {
    let read: Read;
    do read = await db.transaction(foldBatch);
    while (read.more && !stopped);
    channelsEnabled = read.channels;
    const queued = await queueDue();
    if (queued > 0) log.debug({ queued }, 'notification messages queued');
    const next = await nextDue(db);
    cancelDue?.();
    cancelDue = next && !stopped ? wakeAt(clock, next, () => void kick()) : undefined;
    if (read.unsettled && !stopped) settleTimer ??= setTimeout(() => ((settleTimer = undefined), void kick()), SETTLE_POLL_MS);
  };

  const kick = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (error) {
          if (!stopped) log.error({ err: error }, 'notifications: reading the outbox failed; trying again at the next wake-up');
        }
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const unlisten = await database.listen(
    EVENTS_CHANNEL,
    () => {
      if (channelsEnabled) void kick();
    },
    () => void kick(),
  );
  const safety = setInterval(() => void kick(), SAFETY_POLL_MS);
  safety.unref();
  void kick();
  return {
    kick,
    channelsChanged: () => {
      channelsEnabled = true;
    },
    stop: async () => {
      stopped = true;
      clearInterval(safety);
      if (settleTimer) clearTimeout(settleTimer);
      cancelDue?.();
      await running;
      await unlisten();
    },
  };
};
