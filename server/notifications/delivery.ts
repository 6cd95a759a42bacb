// A queued message's delivery, as one pg-boss job attempt: its channel's destination decrypted,
// one attempt in the kind's wire format, the outcome written on the message and the channel.
// A failure throws, so pg-boss retries it with backoff until its retries are spent; the
// channel's FAILURE_LIMIT-th failure in a row disables it, says why in the list and writes an
// audit row, and the message then waits for nothing more.
import { recordAudit } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { KeyCipher } from '../keys/crypto.ts';
import type { Logger } from '../observability/logger.ts';
import type { NoticeItem } from './events.ts';
import { findChannel, findMessage, lockChannel, recordAttempt, updateMessage, type ChannelRow } from './queries.ts';
import { DeliveryFailed, sendOnce, type Outgoing, type SenderDeps, type Target } from './senders.ts';

/** Failed attempts in a row that disable a channel. */
export const FAILURE_LIMIT = 10;

export interface DeliveryDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  cipher: KeyCipher;
  senders: SenderDeps;
  /** pg-boss's retries of one message (NOTIFY_RETRY_LIMIT): past them the message is failed. */
  retryLimit: number;
}

/** The channel's destination and secret in clear, or undefined when they no longer decrypt. */
export const outgoingOf = (cipher: KeyCipher, channel: ChannelRow, items: NoticeItem[]): Outgoing | undefined => {
  const target = cipher.decrypt(channel.targetEnc);
  const secret = channel.secretEnc === null ? null : cipher.decrypt(channel.secretEnc);
  if (target === undefined || secret === undefined) return undefined;
  return { channelId: channel.id, name: channel.name, kind: channel.kind, target: JSON.parse(target) as Target, secret, items };
};

/** One attempt at message `messageId`; `retryCount` is pg-boss's count of earlier attempts. */
export const deliverMessage = async (deps: DeliveryDeps, messageId: number, retryCount: number): Promise<void> => {
  const { db, clock, cipher } = deps;
  const message = await findMessage(db, messageId);
  if (message?.status !== 'queued') return;
  const channel = await findChannel(db, message.channelId);
  if (!channel?.enabled) {
    await updateMessage(db, messageId, { status: 'dropped', finishedAt: clock.now() });
    return;
  }
  const items = message.items as unknown as NoticeItem[];
  const outgoing = outgoingOf(cipher, channel, items);
  let failure: string | undefined;
  try {
    if (!outgoing) throw new DeliveryFailed('the stored destination no longer decrypts (the service secret changed)');
    await sendOnce(deps.senders, outgoing);
  } catch (error) {
    failure = error instanceof DeliveryFailed ? error.message : 'delivery failed';
  }
  const at = clock.now();
  const attempts = message.attempts + 1;
  const last = await db.transaction(async (tx) => {
    const current = await lockChannel(tx, channel.id);
    if (!current) return false;
    if (failure === undefined) {
      await recordAttempt(tx, { id: channel.id, at, ok: true, failures: 0 });
      await updateMessage(tx, messageId, { status: 'delivered', attempts, lastError: null, finishedAt: at });
      return false;
    }
    const failures = current.consecutiveFailures + 1;
    const disabling = current.enabled && failures >= FAILURE_LIMIT;
    const disabledReason = disabling ? `Disabled after ${failures} failed deliveries in a row; the last: ${failure}` : undefined;
    await recordAttempt(tx, { id: channel.id, at, ok: false, failures, ...(disabledReason ? { disabledReason } : {}) });
    const last = disabling || !current.enabled || retryCount >= deps.retryLimit;
    await updateMessage(tx, messageId, { status: last ? 'failed' : 'queued', attempts, lastError: failure, ...(last ? { finishedAt: at } : {}) });
    if (disabling) {
      await recordAudit(tx, { action: 'notifications.channel_disabled', subjectUserId: channel.userId, at, data: { channel_id: channel.id, kind: channel.kind, name: channel.name, reason: disabledReason } });
    }
    return last;
  });
  if (failure === undefined) return;
  deps.logger.warn({ area: 'notifications', channelId: channel.id, kind: channel.kind, messageId, attempt: attempts, failure }, 'notification delivery failed');
  // pg-boss retries a job that throws; a last attempt ends here instead.
  if (!last) throw new DeliveryFailed(failure);
};
