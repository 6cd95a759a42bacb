// Users' notification channels (webhook, Slack, Discord, Telegram, e-mail), the messages that fold
// their events, and the one cursor with which the cluster reads the outbox for them.
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, smallint, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { users } from './users.ts';

/**
 * A destination of the user's events. Where it goes (URL, bot token and chat, address) is one
 * encrypted JSON value, as exchange keys are kept; a webhook's signing secret too. The kind and
 * events enums are TypeScript's only (plain text), so a new kind or event needs no migration.
 */
export const notificationChannels = pgTable(
  'notification_channels',
  {
    id: uuid('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['webhook', 'slack', 'discord', 'telegram', 'email'] }).notNull(),
    /** The kind's destination as JSON, encrypted (keys/crypto.ts). */
    targetEnc: text('target_enc').notNull(),
    /** A webhook's HMAC signing secret, encrypted; null for the other kinds. */
    secretEnc: text('secret_enc'),
    events: jsonb('events').$type<string[]>().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    /** Failed attempts since the last delivered one; at the limit the channel is disabled. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    disabledReason: text('disabled_reason'),
    lastDeliveryAt: tsColumn('last_delivery_at'),
    /** Whether that last attempt delivered. */
    lastDeliveryOk: boolean('last_delivery_ok'),
    createdAt: createdAt(),
  },
  (t) => [index('notification_channels_user_idx').on(t.userId)],
);

/**
 * One message of a channel: the events that arrived within the fold window, then its delivery.
 * `gathering` takes more events until `due_at`; `queued` has a pg-boss job; it ends `delivered`,
 * `failed` (its retries spent) or `dropped` (the channel went away or was disabled first).
 */
export const notificationMessages = pgTable(
  'notification_messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    channelId: uuid('channel_id')
      .notNull()
      .references(() => notificationChannels.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['gathering', 'queued', 'delivered', 'failed', 'dropped'] }).notNull(),
    /** The folded events, oldest first, as the message lists them. */
    items: jsonb('items').$type<Record<string, unknown>[]>().notNull(),
    openedAt: tsColumn('opened_at').notNull(),
    dueAt: tsColumn('due_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    finishedAt: tsColumn('finished_at'),
  },
  (t) => [
    // At most one gathering message per channel: the fold's target.
    uniqueIndex('notification_messages_gathering_idx').on(t.channelId).where(sql`${t.status} = 'gathering'`),
    index('notification_messages_due_idx').on(t.dueAt).where(sql`${t.status} = 'gathering'`),
    index('notification_messages_channel_idx').on(t.channelId, t.id),
  ],
);

/**
 * Where the cluster's reading of the outbox for notifications stands: one row, locked by the
 * reader of the moment, moved in the transaction that folds what it read (each event once).
 */
export const notificationCursor = pgTable('notification_cursor', {
  id: smallint('id').primaryKey(),
  txId: bigint('tx_id', { mode: 'number' }).notNull(),
  eventId: bigint('event_id', { mode: 'number' }).notNull(),
});
