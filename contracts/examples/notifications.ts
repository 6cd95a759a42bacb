// Examples of /api/notifications: a user's channels, created, listed, changed, deleted and tested.
import type { z } from 'zod';
import type {
  TNotificationChannel,
  ZNotificationChannel,
  ZNotificationChannelCreate,
  ZNotificationChannelCreated,
  ZNotificationChannelIdPath,
  ZNotificationChannelList,
  ZNotificationChannelUpdate,
  ZNotificationTestResult,
} from '../notifications.ts';
import { example, type OperationExample } from './types.ts';

/** A webhook channel as it is listed (its URL and secret never are). */
const EXAMPLE_CHANNEL: TNotificationChannel = {
  id: '7a1c9e42-3b5d-4f6a-8c2e-9d0b1a2c3e4f',
  name: 'fills to my server',
  kind: 'webhook',
  events: ['fill', 'rejection', 'kill_switch_lock'],
  enabled: true,
  failure_count: 0,
  disabled_reason: null,
  last_delivery_at: '2026-12-02T14:31:05.000Z',
  last_delivery_ok: true,
  created_at: '2026-12-01T18:02:11.000Z',
};

const DISABLED_CHANNEL: TNotificationChannel = {
  id: '0f3e2d1c-4b5a-4697-8877-665544332211',
  name: 'team chat',
  kind: 'slack',
  events: ['kill_switch_alert', 'kill_switch_lock', 'bot_halted'],
  enabled: false,
  failure_count: 10,
  disabled_reason: 'Disabled after 10 failed deliveries in a row; the last: HTTP 404',
  last_delivery_at: '2026-12-02T09:12:40.000Z',
  last_delivery_ok: false,
  created_at: '2026-11-20T07:45:00.000Z',
};

export const NOTIFICATION_EXAMPLES: Record<string, OperationExample> = {
  notificationsCreate: example<typeof ZNotificationChannelCreate, typeof ZNotificationChannelCreated>({
    input: { name: 'fills to my server', kind: 'webhook', config: { url: 'https://hooks.example.com/trading' }, events: ['fill', 'rejection', 'kill_switch_lock'] },
    output: { ...EXAMPLE_CHANNEL, last_delivery_at: null, last_delivery_ok: null, signing_secret: 'whsec_Zk3q9VnR2xLp7sTd0YbWc4Hf8Jm1Ga6Ue5Io2Kr9Ql0' },
  }),
  notificationsList: example<z.ZodVoid, typeof ZNotificationChannelList>({ output: { items: [EXAMPLE_CHANNEL, DISABLED_CHANNEL] } }),
  notificationsUpdate: example<typeof ZNotificationChannelUpdate, typeof ZNotificationChannel>({
    input: { id: DISABLED_CHANNEL.id, enabled: true },
    output: { ...DISABLED_CHANNEL, enabled: true, failure_count: 0, disabled_reason: null },
  }),
  notificationsRemove: example<typeof ZNotificationChannelIdPath, z.ZodVoid>({ input: { id: DISABLED_CHANNEL.id } }),
  notificationsTest: example<typeof ZNotificationChannelIdPath, typeof ZNotificationTestResult>({ input: { id: EXAMPLE_CHANNEL.id }, output: { delivered: true, error: null } }),
};
