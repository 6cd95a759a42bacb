// Each kind's wire format, and one attempt to deliver a message in it: a signed JSON POST for a
// webhook, `{text}` to Slack, `{content}` to Discord, Telegram's sendMessage, a plain-text
// e-mail. An attempt resolves when delivered and throws DeliveryFailed with a reason safe to
// store and show (a status, a refusal, a timeout: never the destination or a secret).
import { createHmac } from 'node:crypto';
import type { TNotificationKind, TNotificationTarget } from '../../contracts/notifications.ts';
import type { Mailer } from '../alerts/email.ts';
import type { Clock } from '../clock.ts';
import { checkDestination, DestinationRefused, type DestinationRules, type Resolve } from './destinations.ts';
import type { NoticeItem } from './events.ts';
import { postJson } from './transport.ts';

/** A channel's destination, as it is kept (encrypted) and used. */
export type Target = { url: string } | { bot_token: string; chat_id: string } | { address: string };

/** A create body's config as the kind's target (the contract has required the kind's fields). */
export const targetOf = (kind: TNotificationKind, config: TNotificationTarget): Target => {
  if (kind === 'telegram') return { bot_token: config.bot_token ?? '', chat_id: config.chat_id ?? '' };
  if (kind === 'email') return { address: config.address ?? '' };
  return { url: config.url ?? '' };
};

export interface Outgoing {
  channelId: string;
  name: string;
  kind: TNotificationKind;
  target: Target;
  /** A webhook's signing secret. */
  secret: string | null;
  items: NoticeItem[];
}

export interface SenderDeps {
  clock: Clock;
  rules: DestinationRules;
  resolve?: Resolve;
  /** NOTIFY_TELEGRAM_API_URL: https://api.telegram.org unless a test points it at its fake. */
  telegramApiUrl: string;
  /** The SMTP relay (SMTP_HOST); without one, e-mail channels cannot deliver. */
  mailer: Mailer | undefined;
  timeoutMs: number;
}

export class DeliveryFailed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'DeliveryFailed';
  }
}

/** Discord refuses content over 2,000 characters, Telegram over 4,096. */
const LIMITS: Partial<Record<TNotificationKind, number>> = { discord: 2_000, telegram: 4_096, slack: 12_000 };

/** Slack reads &, < and > as control characters (`<!channel>` would page everyone). */
const escapeSlack = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The message as people read it: one line, or a heading and a line per event. */
export const messageText = (items: readonly NoticeItem[]): string => {
  const [only] = items;
  if (items.length === 1 && only) return only.text;
  return [`${items.length} events:`, ...items.map((item) => `• ${item.text}`)].join('\n');
};

const clip = (text: string, limit: number | undefined): string => (limit !== undefined && text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

/** The signature of a webhook body: hex HMAC-SHA256 of "<timestamp>.<body>" under the channel's secret. */
export const webhookSignature = (secret: string, timestamp: string, body: string): string => `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

const urlOf = (target: Target): string => ('url' in target ? target.url : '');

/** The URL an attempt posts to: the channel's own, or the Telegram API's for its bot. */
export const destinationUrl = (kind: TNotificationKind, target: Target, telegramApiUrl: string): string =>
  kind === 'telegram' && 'bot_token' in target ? `${telegramApiUrl.replace(/\/+$/, '')}/bot${target.bot_token}/sendMessage` : urlOf(target);

const bodyOf = (outgoing: Outgoing, at: Date): string => {
  const text = clip(messageText(outgoing.items), LIMITS[outgoing.kind]);
  switch (outgoing.kind) {
    case 'slack':
      return JSON.stringify({ text: escapeSlack(text) });
    case 'discord':
      // No mention in a notification pings anyone.
      return JSON.stringify({ content: text, allowed_mentions: { parse: [] } });
    case 'telegram':
      return JSON.stringify({ chat_id: 'chat_id' in outgoing.target ? outgoing.target.chat_id : '', text });
    default:
      return JSON.stringify({ type: 'notification', channel: { id: outgoing.channelId, name: outgoing.name }, text, events: outgoing.items, sent_at: at.toISOString() });
  }
};

/** Whether a 2xx answer means delivered: Telegram says so in its body as well. */
const accepted = (kind: TNotificationKind, answer: { status: number; body: string }): boolean => {
  if (answer.status < 200 || answer.status >= 300) return false;
  if (kind !== 'telegram') return true;
  try {
    return (JSON.parse(answer.body) as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
};

const sendEmail = async (deps: SenderDeps, outgoing: Outgoing): Promise<void> => {
  if (!deps.mailer) throw new DeliveryFailed('e-mail is not configured on this service (SMTP_HOST)');
  if (!('address' in outgoing.target)) throw new DeliveryFailed('no address');
  const first = outgoing.items[0];
  const subject = outgoing.items.length === 1 && first ? first.text.slice(0, 120) : `${outgoing.items.length} trading events`;
  try {
    await deps.mailer.send({ to: [outgoing.target.address], subject, text: `${messageText(outgoing.items)}\n`, signal: AbortSignal.timeout(deps.timeoutMs) });
  } catch (error) {
    const { code, responseCode } = (error ?? {}) as { code?: unknown; responseCode?: unknown };
    throw new DeliveryFailed(`smtp error${typeof responseCode === 'number' ? ` ${responseCode}` : ''}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
};

/** One attempt. Throws DeliveryFailed; the destination is judged again at each attempt. */
export const sendOnce = async (deps: SenderDeps, outgoing: Outgoing): Promise<void> => {
  if (outgoing.kind === 'email') return sendEmail(deps, outgoing);
  let destination;
  try {
    destination = await checkDestination({ kind: outgoing.kind, url: destinationUrl(outgoing.kind, outgoing.target, deps.telegramApiUrl), rules: deps.rules, resolve: deps.resolve });
  } catch (error) {
    throw new DeliveryFailed(error instanceof DestinationRefused ? `destination refused: ${error.message}` : 'destination refused');
  }
  const at = deps.clock.now();
  const body = bodyOf(outgoing, at);
  const headers: Record<string, string> = {};
  if (outgoing.kind === 'webhook' && outgoing.secret) {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    headers['x-signature-timestamp'] = timestamp;
    headers['x-signature'] = webhookSignature(outgoing.secret, timestamp, body);
  }
  let answer;
  try {
    answer = await postJson(destination, body, headers, deps.timeoutMs);
  } catch (error) {
    throw new DeliveryFailed(error instanceof Error ? error.message : 'network error');
  }
  if (!accepted(outgoing.kind, answer)) throw new DeliveryFailed(answer.status >= 200 && answer.status < 300 ? `HTTP ${answer.status} without ok` : `HTTP ${answer.status}`);
};
