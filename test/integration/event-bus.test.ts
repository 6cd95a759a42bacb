// The event bus's wake-up: a writer calls `wake` after its commit, its own process reads at once
// and a NOTIFY sent outside the transaction wakes the other instances. The safety read is set an
// hour apart here, so only the wake-up can deliver. And its signals: a NOTIFY in the sender's
// transaction, heard by every instance only if that commits. On PostgreSQL the two buses have a
// pool each, as two instances do; embedded PGlite is one process's database, so there they share it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notify, openDatabase, type DatabaseHandle } from '../../server/db/client.ts';
import { createEventBus, type BusEvent, type EventBus } from '../../server/events/bus.ts';
import { capturedLogger } from '../support/logs.ts';
import { createTestDatabase, tempDir } from '../support/server.ts';

const HOUR_MS = 3_600_000;
/** The outbox does not reference users: any id will do. */
const USER_ID = 4_242;

describe('event bus wake-ups', () => {
  const handles: DatabaseHandle[] = [];
  let drop: () => Promise<void>;
  let writer: EventBus;
  let reader: EventBus;
  beforeAll(async () => {
    const created = await createTestDatabase();
    drop = created.drop;
    const open = () => openDatabase({ databaseUrl: created.url, dataDir: tempDir(), poolSize: 2 });
    const first = await open();
    handles.push(first);
    await first.migrate();
    const second = created.url ? await open() : first;
    if (second !== first) handles.push(second);
    const { logger } = capturedLogger();
    writer = await createEventBus({ database: first, logger, safetyPollMs: HOUR_MS });
    reader = await createEventBus({ database: second, logger, safetyPollMs: HOUR_MS });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
    for (const handle of handles) await handle.close();
    await drop?.();
  });

  /** Subscribes on `bus`; resolves, once subscribed, to the first event it will receive. */
  const nextOn = async (bus: EventBus, userId: number) => {
    let resolveEvent!: (event: BusEvent) => void;
    const received = new Promise<BusEvent>((resolve) => (resolveEvent = resolve));
    const unsubscribe = await bus.subscribe({ userId, channel: 'orders', listener: (event) => resolveEvent(event) });
    return { received: received.finally(unsubscribe) };
  };

  it('delivers to this process and to the other instance once the writer wakes them after commit', async () => {
    const userId = USER_ID;
    const here = await nextOn(writer, userId);
    const there = await nextOn(reader, userId);
    await handles[0]!.db.transaction((tx) => writer.append(tx, [{ userId, channel: 'orders', frame: { type: 'order_event', client_order_id: 'woken' }, at: new Date() }]));
    writer.wake();
    const [mine, theirs] = await Promise.all([here.received, there.received]);
    expect(mine.frame.client_order_id).toBe('woken');
    expect(theirs.frame.client_order_id).toBe('woken');
    expect(theirs.id).toBe(mine.id);
  });

  /** Appends one order event for `userId` in its own transaction. */
  const appendOne = (bus: EventBus, userId: number, clientOrderId: string) =>
    handles[0]!.db.transaction((tx) => bus.append(tx, [{ userId, channel: 'orders', frame: { type: 'order_event', client_order_id: clientOrderId }, at: new Date() }]));

  it('sends at most one NOTIFY per gap: the wake-ups within it are folded into one at its end', async () => {
    // A database of its own: no other bus of this file may NOTIFY where this one is counted.
    const created = await createTestDatabase();
    const own = await openDatabase({ databaseUrl: created.url, dataDir: tempDir(), poolSize: 2 });
    await own.migrate();
    const listening = created.url ? await openDatabase({ databaseUrl: created.url, dataDir: tempDir(), poolSize: 2 }) : own;
    const { logger } = capturedLogger();
    const paced = await createEventBus({ database: own, logger, safetyPollMs: HOUR_MS, announceGapMs: HOUR_MS });
    const ownReader = await createEventBus({ database: listening, logger, safetyPollMs: HOUR_MS });
    const payloads: string[] = [];
    let markerSeen!: () => void;
    const marker = new Promise<void>((resolve) => (markerSeen = resolve));
    const stopCounting = await listening.listen('ts_events', (payload) => {
      payloads.push(payload);
      if (payload === 'marker') markerSeen();
    });
    let closed = false;
    const append = (clientOrderId: string) =>
      own.db.transaction((tx) => paced.append(tx, [{ userId: USER_ID + 1, channel: 'orders', frame: { type: 'order_event', client_order_id: clientOrderId }, at: new Date() }]));
    try {
      const first = await nextOn(ownReader, USER_ID + 1);
      await append('first');
      paced.wake();
      expect((await first.received).frame.client_order_id).toBe('first');
      for (const id of ['second', 'third', 'fourth']) {
        await append(id);
        paced.wake();
      }
      // Closing waits for any NOTIFY under way; one sent after them all arrives after theirs.
      await paced.close();
      closed = true;
      await notify(own.db, 'ts_events', 'marker');
      await marker;
      expect(payloads.filter((payload) => payload !== 'marker')).toHaveLength(1);
    } finally {
      await stopCounting();
      if (!closed) await paced.close();
      await ownReader.close();
      if (listening !== own) await listening.close();
      await own.close();
      await created.drop();
    }
  });

  it('sends a signal to every instance when its transaction commits, and none when it rolls back', async () => {
    const userId = USER_ID + 3;
    const heard: { bus: string; key: string }[] = [];
    let secondHeard!: () => void;
    const second = new Promise<void>((resolve) => (secondHeard = resolve));
    const stops = [writer, reader].map((bus, index) =>
      bus.onSignal((signal) => {
        if (signal.userId !== userId) return;
        heard.push({ bus: index === 0 ? 'writer' : 'reader', key: signal.key });
        if (heard.length === 2) secondHeard();
      }),
    );
    try {
      const rollback = new Error('rolled back on purpose');
      await expect(
        handles[0]!.db.transaction(async (tx) => {
          await writer.signal(tx, { topic: 'test', userId, key: 'rolled back' });
          throw rollback;
        }),
      ).rejects.toBe(rollback);
      await handles[0]!.db.transaction((tx) => writer.signal(tx, { topic: 'test', userId, key: 'committed' }));
      // Signals arrive in commit order: had the rolled-back one been sent, it would come first.
      await second;
      expect(heard.map(({ key }) => key)).toEqual(['committed', 'committed']);
      expect(heard.map(({ bus }) => bus).sort()).toEqual(['reader', 'writer']);
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('delivers to the other instance what a wake-up held for the gap\'s end', async () => {
    const { logger } = capturedLogger();
    const paced = await createEventBus({ database: handles[0]!, logger, safetyPollMs: HOUR_MS, announceGapMs: 200 });
    try {
      const userId = USER_ID + 2;
      const first = await nextOn(reader, userId);
      await appendOne(paced, userId, 'now');
      paced.wake();
      expect((await first.received).frame.client_order_id).toBe('now');
      const second = await nextOn(reader, userId);
      await appendOne(paced, userId, 'at the gap\'s end');
      paced.wake();
      expect((await second.received).frame.client_order_id).toBe("at the gap's end");
    } finally {
      await paced.close();
    }
  });
});
