// Wire shapes of /api/notifications: a user's channels (webhook, Slack, Discord, Telegram,
// e-mail), the events each is subscribed to, and a test delivery. A channel's destination and
// secret are accepted, never answered (a webhook's signing secret once, at creation).
import { z } from 'zod';
import { bodyBoolean, requestText, storableText, ZTimestamp } from './common.ts';

export const ZNotificationKind = z.enum(['webhook', 'slack', 'discord', 'telegram', 'email']);
export type TNotificationKind = z.infer<typeof ZNotificationKind>;

/**
 * What a channel may be told: a fill (whole or part), an order refused by the gates or the
 * broker, the kill switch's −4 % alert and its −5 % lock, live trading enabled, the bot halted, an
 * analysis report finished.
 */
export const ZNotificationEvent = z.enum(['fill', 'rejection', 'kill_switch_alert', 'kill_switch_lock', 'live_enabled', 'bot_halted', 'analysis_done']);
export type TNotificationEvent = z.infer<typeof ZNotificationEvent>;

const ZEvents = z
  .array(ZNotificationEvent)
  .min(1)
  .refine((events) => new Set(events).size === events.length, 'must not repeat an event');

/** The fields of `config` each kind takes: a URL (webhook, Slack, Discord), a bot and chat (Telegram), an address (e-mail). */
export const TARGET_FIELDS = {
  webhook: ['url'],
  slack: ['url'],
  discord: ['url'],
  telegram: ['bot_token', 'chat_id'],
  email: ['address'],
} as const satisfies Record<TNotificationKind, readonly string[]>;

/** A channel's destination: the fields of its kind (TARGET_FIELDS), each required there and refused elsewhere. */
export const ZNotificationTarget = z.object({
  url: storableText(z.string().max(2048)).optional(),
  bot_token: requestText()
    .max(256)
    .regex(/^[0-9]+:[A-Za-z0-9_-]+$/, 'a Telegram bot token: <digits>:<letters, digits, _ or ->')
    .optional(),
  /** A chat's id (digits, negative for groups) or a public channel's @name. */
  chat_id: requestText()
    .max(128)
    .regex(/^(-?[0-9]+|@[A-Za-z0-9_]{4,})$/, 'a chat id (digits) or @channelname')
    .optional(),
  address: storableText(z.email().max(254)).optional(),
});
export type TNotificationTarget = z.infer<typeof ZNotificationTarget>;

export const ZNotificationChannelCreate = z
  .object({ name: requestText().trim().min(1).max(64), kind: ZNotificationKind, config: ZNotificationTarget, events: ZEvents })
  .superRefine((body, ctx) => {
    const wanted: readonly string[] = TARGET_FIELDS[body.kind];
    for (const field of wanted) {
      if (body.config[field as keyof TNotificationTarget] === undefined) ctx.addIssue({ code: 'custom', path: ['config', field], message: `required for a ${body.kind} channel` });
    }
    for (const [field, value] of Object.entries(body.config)) {
      if (value !== undefined && !wanted.includes(field)) ctx.addIssue({ code: 'custom', path: ['config', field], message: `not a field of a ${body.kind} channel` });
    }
  });
export type TNotificationChannelCreate = z.infer<typeof ZNotificationChannelCreate>;

export const ZNotificationChannelIdPath = z.object({ id: requestText().min(1).max(64) });

/** PATCH: the path's id, and what changes (enabling a channel again clears its failures). */
export const ZNotificationChannelUpdate = ZNotificationChannelIdPath.extend({ events: ZEvents.optional(), enabled: bodyBoolean().optional() }).refine(
  (body) => body.events !== undefined || body.enabled !== undefined,
  'name events or enabled',
);
export type TNotificationChannelUpdate = z.infer<typeof ZNotificationChannelUpdate>;

export const ZNotificationChannel = z.object({
  id: z.string().meta({ format: 'uuid' }),
  name: z.string(),
  kind: ZNotificationKind,
  events: z.array(ZNotificationEvent),
  enabled: z.boolean(),
  /** Failed attempts since the last delivered one; at 10 the channel is disabled. */
  failure_count: z.number().int(),
  /** Why the service disabled the channel (null while enabled, or when the user disabled it). */
  disabled_reason: z.string().nullable(),
  /** The last delivery attempt: when, and whether it delivered. */
  last_delivery_at: ZTimestamp.nullable(),
  last_delivery_ok: z.boolean().nullable(),
  created_at: ZTimestamp,
});
export type TNotificationChannel = z.infer<typeof ZNotificationChannel>;

/** A creation's answer: the channel, and for a webhook its signing secret, shown this once. */
export const ZNotificationChannelCreated = ZNotificationChannel.extend({ signing_secret: z.string().nullable() });
export type TNotificationChannelCreated = z.infer<typeof ZNotificationChannelCreated>;

export const ZNotificationChannelList = z.object({ items: z.array(ZNotificationChannel) });

export const ZNotificationTestResult = z.object({
  delivered: z.boolean(),
  /** Why it was not (a status, a refusal, a timeout), free of the destination and its secrets. */
  error: z.string().nullable(),
});
export type TNotificationTestResult = z.infer<typeof ZNotificationTestResult>;
