// /api/notifications/channels: a user's notification channels. A personal API key with `read`
// lists them; creating, changing, deleting and testing take no key (a channel is where the
// user's trading activity goes: a leaked key must not be able to redirect it).
import { z } from 'zod';
import {
  ZNotificationChannel,
  ZNotificationChannelCreate,
  ZNotificationChannelCreated,
  ZNotificationChannelIdPath,
  ZNotificationChannelList,
  ZNotificationChannelUpdate,
  ZNotificationTestResult,
} from '../../contracts/notifications.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['notifications'];

export const notificationsRouter = router({
  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/notifications/channels', tags, summary: 'Add a notification channel (destination encrypted at rest; a webhook’s signing secret answered this once)', protect: true }, status: 201, errors: ['CONFLICT'] })
    .input(ZNotificationChannelCreate)
    .output(ZNotificationChannelCreated)
    .mutation(({ ctx, input }) => ctx.notifications.create({ user: ctx.user, input, origin: ctx.origin })),

  list: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: { method: 'GET', path: '/notifications/channels', tags, summary: 'Your notification channels (never their destinations or secrets)', protect: true } })
    .input(z.void())
    .output(ZNotificationChannelList)
    .query(({ ctx }) => ctx.notifications.list({ user: ctx.user })),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/notifications/channels/{id}', tags, summary: 'Change a channel’s events or enable or disable it (enabling clears its failures)', protect: true }, errors: ['NOT_FOUND'] })
    .input(ZNotificationChannelUpdate)
    .output(ZNotificationChannel)
    .mutation(({ ctx, input }) => ctx.notifications.update({ user: ctx.user, input, origin: ctx.origin })),

  remove: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/notifications/channels/{id}', tags, summary: 'Delete a notification channel', protect: true }, status: 204, errors: ['NOT_FOUND'] })
    .input(ZNotificationChannelIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.notifications.remove({ user: ctx.user, id: input.id, origin: ctx.origin })),

  test: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/notifications/channels/{id}/test', tags, summary: 'Send a test message to a channel now, and say whether it was delivered', protect: true }, errors: ['NOT_FOUND'] })
    .input(ZNotificationChannelIdPath)
    .output(ZNotificationTestResult)
    .mutation(({ ctx, input }) => ctx.notifications.test({ user: ctx.user, id: input.id })),
});
