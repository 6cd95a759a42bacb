// SQL of notification channels, their messages and the cluster's outbox cursor: the only module
// that knows these tables.
import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { notificationChannels, notificationCursor, notificationMessages } from '../db/schema/index.ts';
import type { OutboxPosition } from '../events/queries.ts';

export type ChannelRow = typeof notificationChannels.$inferSelect;
export type MessageRow = typeof notificationMessages.$inferSelect;

export const insertChannel = async (db: Queryable, values: typeof notificationChannels.$inferInsert): Promise<ChannelRow> => {
  const [row] = await db.insert(notificationChannels).values(values).returning();
  return row!;
};

export const listChannels = (db: Queryable, userId: number): Promise<ChannelRow[]> =>
  db.select().from(notificationChannels).where(eq(notificationChannels.userId, userId)).orderBy(asc(notificationChannels.createdAt), asc(notificationChannels.id));

export const findOwnedChannel = async (db: Queryable, { userId, id }: { userId: number; id: string }): Promise<ChannelRow | undefined> =>
  (await db.select().from(notificationChannels).where(and(eq(notificationChannels.id, id), eq(notificationChannels.userId, userId))))[0];

export const findChannel = async (db: Queryable, id: string): Promise<ChannelRow | undefined> =>
  (await db.select().from(notificationChannels).where(eq(notificationChannels.id, id)))[0];

/** The channel under its row lock, for a delivery's outcome. */
export const lockChannel = async (db: Queryable, id: string): Promise<ChannelRow | undefined> =>
  (await db.select().from(notificationChannels).where(eq(notificationChannels.id, id)).for('update'))[0];

export const updateOwnedChannel = async (
  db: Queryable,
  { userId, id, change }: { userId: number; id: string; change: Partial<Pick<ChannelRow, 'events' | 'enabled' | 'consecutiveFailures' | 'disabledReason'>> },
): Promise<ChannelRow | undefined> =>
  (await db.update(notificationChannels).set(change).where(and(eq(notificationChannels.id, id), eq(notificationChannels.userId, userId))).returning())[0];

export const deleteOwnedChannel = async (db: Queryable, { userId, id }: { userId: number; id: string }): Promise<boolean> =>
  (await db.delete(notificationChannels).where(and(eq(notificationChannels.id, id), eq(notificationChannels.userId, userId))).returning({ id: notificationChannels.id })).length > 0;

/** An attempt's outcome on its channel: when, whether it delivered, the failures since the last that did. */
export const recordAttempt = async (
  db: Queryable,
  { id, at, ok, failures, disabledReason }: { id: string; at: Date; ok: boolean; failures: number; disabledReason?: string },
): Promise<void> => {
  await db
    .update(notificationChannels)
    .set({ lastDeliveryAt: at, lastDeliveryOk: ok, consecutiveFailures: failures, ...(disabledReason ? { enabled: false, disabledReason } : {}) })
    .where(eq(notificationChannels.id, id));
};

/** The enabled channels of these users (those an event batch may reach). */
/** Whether any user has a channel enabled: while none has, the outbox is not read for them. */
/** Deletes the messages that finished (delivered, failed, dropped) before `before`; returns how many. */
export const pruneMessages = async (db: Queryable, before: Date): Promise<number> =>
  (
    await db
      .delete(notificationMessages)
      .where(and(inArray(notificationMessages.status, ['delivered', 'failed', 'dropped']), lte(notificationMessages.finishedAt, before)))
      .returning({ id: notificationMessages.id })
  ).length;

export const anyChannelEnabled = async (db: Queryable): Promise<boolean> =>
  (await db.select({ id: notificationChannels.id }).from(notificationChannels).where(eq(notificationChannels.enabled, true)).limit(1)).length > 0;

export const enabledChannelsOf = (db: Queryable, userIds: readonly number[]): Promise<Pick<ChannelRow, 'id' | 'userId' | 'events' | 'createdAt'>[]> =>
  userIds.length === 0
    ? Promise.resolve([])
    : db
        .select({ id: notificationChannels.id, userId: notificationChannels.userId, events: notificationChannels.events, createdAt: notificationChannels.createdAt })
        .from(notificationChannels)
        .where(and(inArray(notificationChannels.userId, [...userIds]), eq(notificationChannels.enabled, true)));

// ---- the fold: one gathering message per channel ----

/** Adds items to the channel's gathering message, opening one (due `dueAt`) when none gathers. */
export const foldIntoMessage = async (db: Queryable, { channelId, items, at, dueAt }: { channelId: string; items: Record<string, unknown>[]; at: Date; dueAt: Date }): Promise<void> => {
  await db
    .insert(notificationMessages)
    .values({ channelId, status: 'gathering', items, openedAt: at, dueAt })
    .onConflictDoUpdate({
      target: notificationMessages.channelId,
      targetWhere: sql`${notificationMessages.status} = 'gathering'`,
      set: { items: sql`${notificationMessages.items} || excluded.items` },
    });
};

/** The gathering messages due by `at`, now queued (the caller sends their jobs in the same transaction). */
export const queueDueMessages = async (db: Queryable, at: Date): Promise<Pick<MessageRow, 'id' | 'channelId'>[]> =>
  db
    .update(notificationMessages)
    .set({ status: 'queued' })
    .where(and(eq(notificationMessages.status, 'gathering'), lte(notificationMessages.dueAt, at)))
    .returning({ id: notificationMessages.id, channelId: notificationMessages.channelId });

/** When the next gathering message falls due, if any does. */
export const nextDue = async (db: Queryable): Promise<Date | undefined> => {
  const [row] = await db
    .select({ dueAt: notificationMessages.dueAt })
    .from(notificationMessages)
    .where(eq(notificationMessages.status, 'gathering'))
    .orderBy(asc(notificationMessages.dueAt))
    .limit(1);
  return row?.dueAt;
};

export const findMessage = async (db: Queryable, id: number): Promise<MessageRow | undefined> =>
  (await db.select().from(notificationMessages).where(eq(notificationMessages.id, id)))[0];

export const updateMessage = async (db: Queryable, id: number, change: Partial<Pick<MessageRow, 'status' | 'attempts' | 'lastError' | 'finishedAt'>>): Promise<void> => {
  await db.update(notificationMessages).set(change).where(eq(notificationMessages.id, id));
};

/** A channel's messages (tests, and the list's last-delivery facts come from the channel row). */
export const messagesOf = (db: Queryable, channelId: string): Promise<MessageRow[]> =>
  db.select().from(notificationMessages).where(eq(notificationMessages.channelId, channelId)).orderBy(asc(notificationMessages.id));

// ---- the cluster's cursor over the outbox ----

const CURSOR_ID = 1;

/**
 * The cursor under its row lock, or undefined when another instance holds it (that one reads
 * now; this one need not wait). Created at `start` the first time.
 */
export const claimCursor = async (db: Queryable, start: () => Promise<OutboxPosition>): Promise<OutboxPosition | undefined> => {
  const read = async () => (await db.select().from(notificationCursor).where(eq(notificationCursor.id, CURSOR_ID)).for('update', { skipLocked: true }))[0];
  let row = await read();
  if (!row) {
    const exists = (await db.select({ id: notificationCursor.id }).from(notificationCursor).where(eq(notificationCursor.id, CURSOR_ID))).length > 0;
    if (exists) return undefined;
    const { txId, id } = await start();
    await db.insert(notificationCursor).values({ id: CURSOR_ID, txId, eventId: id }).onConflictDoNothing();
    row = await read();
    if (!row) return undefined;
  }
  return { txId: row.txId, id: row.eventId };
};

export const moveCursor = async (db: Queryable, position: OutboxPosition): Promise<void> => {
  await db.update(notificationCursor).set({ txId: position.txId, eventId: position.id }).where(eq(notificationCursor.id, CURSOR_ID));
};
