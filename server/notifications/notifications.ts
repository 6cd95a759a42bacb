// A user's notification channels (webhook, Slack, Discord, Telegram, e-mail): created with their
// destination judged by the guard and kept encrypted, listed without it, changed, deleted, tried
// with a test message; and, on the instances that run workers, the outbox's dispatcher and the
// delivery queue.
import { randomBytes, randomUUID } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { TNotificationChannel, TNotificationChannelCreate, TNotificationChannelCreated, TNotificationChannelUpdate, TNotificationEvent, TNotificationTestResult } from '../../contracts/notifications.ts';
import type { Mailer } from '../alerts/email.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DatabaseHandle } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { KeyCipher } from '../keys/crypto.ts';
import type { Logger } from '../observability/logger.ts';
import { deliverMessage, outgoingOf } from './delivery.ts';
import { checkDestination, DestinationRefused, type Resolve } from './destinations.ts';
import { DELIVER_QUEUE, startDispatcher, type DeliverJob, type Dispatcher } from './dispatcher.ts';
import { deleteOwnedChannel, findOwnedChannel, insertChannel, listChannels, updateOwnedChannel, type ChannelRow } from './queries.ts';
import { DeliveryFailed, destinationUrl, sendOnce, targetOf, type SenderDeps } from './senders.ts';

/** Channels one user may keep. */
const MAX_CHANNELS = 20;
/** One attempt's limit, connection and answer included. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NotificationsDeps {
  database: DatabaseHandle;
  clock: Clock;
  config: Pick<Config, 'NOTIFY_HOSTS' | 'NOTIFY_ALLOW_PRIVATE' | 'NOTIFY_TELEGRAM_API_URL' | 'NOTIFY_RETRY_LIMIT' | 'NOTIFY_RETRY_DELAY_SEC'>;
  logger: Logger;
  cipher: KeyCipher;
  jobs: JobQueue;
  /** The SMTP relay (SMTP_HOST); without one, e-mail channels are refused. */
  mailer: Mailer | undefined;
  /** Tests answer names themselves. */
  resolve?: Resolve;
}

export const channelOf = (row: ChannelRow): TNotificationChannel => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  events: row.events as TNotificationEvent[],
  enabled: row.enabled,
  failure_count: row.consecutiveFailures,
  disabled_reason: row.disabledReason,
  last_delivery_at: row.lastDeliveryAt?.toISOString() ?? null,
  last_delivery_ok: row.lastDeliveryOk,
  created_at: row.createdAt.toISOString(),
});

const notFound = (id: string) => new AppError('NOT_FOUND', `No notification channel ${id.slice(0, 64)}`);

/** The field of the create body a refused destination is about. */
const targetPath = (kind: TNotificationChannelCreate['kind']) => (kind === 'telegram' ? 'config.bot_token' : 'config.url');

export const createNotifications = ({ database, clock, config, logger, cipher, jobs, mailer, resolve }: NotificationsDeps) => {
  const { db } = database;
  const senders: SenderDeps = {
    clock,
    rules: { trustedHosts: config.NOTIFY_HOSTS, allowPrivate: config.NOTIFY_ALLOW_PRIVATE },
    ...(resolve ? { resolve } : {}),
    telegramApiUrl: config.NOTIFY_TELEGRAM_API_URL,
    mailer,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
  };
  let dispatcher: Dispatcher | undefined;

  const owned = async (userId: number, id: string): Promise<ChannelRow> => {
    // Channel ids are UUIDs: anything else names no channel (and must not reach the uuid column).
    const row = UUID.test(id) ? await findOwnedChannel(db, { userId, id }) : undefined;
    if (!row) throw notFound(id);
    return row;
  };

  /** Refuses a destination the guard would refuse at delivery: 422 naming the field. */
  const judge = async (input: TNotificationChannelCreate) => {
    if (input.kind === 'email') {
      if (!mailer) throw new AppError('VALIDATION_ERROR', 'config.address: e-mail notifications need the service’s SMTP settings (SMTP_HOST), which are not set', { errors: [{ path: 'config.address', message: 'e-mail is not configured on this service' }] });
      return;
    }
    try {
      await checkDestination({ kind: input.kind, url: destinationUrl(input.kind, targetOf(input.kind, input.config), config.NOTIFY_TELEGRAM_API_URL), rules: senders.rules, resolve });
    } catch (error) {
      if (!(error instanceof DestinationRefused)) throw error;
      const path = targetPath(input.kind);
      throw new AppError('VALIDATION_ERROR', `${path}: the destination is refused: ${error.message}`, { errors: [{ path, message: error.message }] });
    }
  };

  const create = async ({ user, input, origin }: { user: { id: number }; input: TNotificationChannelCreate; origin: RequestOrigin }): Promise<TNotificationChannelCreated> => {
    await judge(input);
    const at = clock.now();
    const secret = input.kind === 'webhook' ? `whsec_${randomBytes(32).toString('base64url')}` : null;
    const row = await db.transaction(async (tx) => {
      if ((await listChannels(tx, user.id)).length >= MAX_CHANNELS) throw new AppError('CONFLICT', `At most ${MAX_CHANNELS} notification channels per user`);
      const made = await insertChannel(tx, {
        id: randomUUID(),
        userId: user.id,
        name: input.name,
        kind: input.kind,
        targetEnc: cipher.encrypt(JSON.stringify(targetOf(input.kind, input.config))),
        secretEnc: secret === null ? null : cipher.encrypt(secret),
        events: input.events,
        createdAt: at,
      });
      await recordAudit(tx, { action: 'notifications.channel_created', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { channel_id: made.id, kind: made.kind, name: made.name, events: input.events } });
      return made;
    });
    dispatcher?.channelsChanged();
    return { ...channelOf(row), signing_secret: secret };
  };

  const list = async ({ user }: { user: { id: number } }) => ({ items: (await listChannels(db, user.id)).map(channelOf) });

  /** Events and enabled; enabling a channel again clears its failures and the reason it was disabled. */
  const update = async ({ user, input, origin }: { user: { id: number }; input: TNotificationChannelUpdate & { id: string }; origin: RequestOrigin }): Promise<TNotificationChannel> => {
    await owned(user.id, input.id);
    const at = clock.now();
    const row = await db.transaction(async (tx) => {
      const change = {
        ...(input.events ? { events: input.events } : {}),
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        ...(input.enabled === true ? { consecutiveFailures: 0, disabledReason: null } : {}),
      };
      const changed = await updateOwnedChannel(tx, { userId: user.id, id: input.id, change });
      if (!changed) throw notFound(input.id);
      await recordAudit(tx, { action: 'notifications.channel_changed', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { channel_id: changed.id, events: input.events, enabled: input.enabled } });
      return changed;
    });
    if (row.enabled) dispatcher?.channelsChanged();
    return channelOf(row);
  };

  const remove = async ({ user, id, origin }: { user: { id: number }; id: string; origin: RequestOrigin }): Promise<void> => {
    await owned(user.id, id);
    const at = clock.now();
    await db.transaction(async (tx) => {
      if (!(await deleteOwnedChannel(tx, { userId: user.id, id }))) throw notFound(id);
      await recordAudit(tx, { action: 'notifications.channel_deleted', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { channel_id: id } });
    });
  };

  /** Sends a test message now, whatever the channel's events or state; its outcome counts toward nothing. */
  const test = async ({ user, id }: { user: { id: number }; id: string }): Promise<TNotificationTestResult> => {
    const row = await owned(user.id, id);
    const at = clock.now().toISOString();
    const outgoing = outgoingOf(cipher, row, [{ event: 'fill', at, text: `Test message for the channel “${row.name}” from the trading service`, data: { test: true } }]);
    if (!outgoing) return { delivered: false, error: 'the stored destination no longer decrypts (the service secret changed)' };
    try {
      await sendOnce(senders, outgoing);
      return { delivered: true, error: null };
    } catch (error) {
      return { delivered: false, error: error instanceof DeliveryFailed ? error.message : 'delivery failed' };
    }
  };

  /** On an instance that runs workers: the delivery queue's worker and the outbox's dispatcher. */
  const startWorkers = async (boss: PgBoss): Promise<void> => {
    const delay = config.NOTIFY_RETRY_DELAY_SEC;
    await boss.createQueue(DELIVER_QUEUE, { retryLimit: config.NOTIFY_RETRY_LIMIT, retryDelay: delay, retryBackoff: delay > 0, ...(delay > 0 ? { retryDelayMax: 3_600 } : {}) });
    const deps = { db, clock, logger, cipher, senders, retryLimit: config.NOTIFY_RETRY_LIMIT };
    await boss.work<DeliverJob>(DELIVER_QUEUE, { pollingIntervalSeconds: 0.5, localConcurrency: 2 }, async ([job]) => {
      if (job) await deliverMessage(deps, job.data.messageId, job.retryCount);
    });
    dispatcher = await startDispatcher({ database, clock, logger, jobs });
  };

  return {
    create,
    list,
    update,
    remove,
    test,
    startWorkers,
    /** Reads the outbox now (tests; the dispatcher wakes on its own). */
    kick: () => dispatcher?.kick() ?? Promise.resolve(),
    stopWorkers: async () => {
      await dispatcher?.stop();
      dispatcher = undefined;
    },
  };
};

export type Notifications = ReturnType<typeof createNotifications>;
