// /api/signals: the user's signal webhooks (made, listed, rotated, removed) and the signals they
// took. The hooks themselves are called at /hooks/{token} (server/http/hooks.ts). Reads take a
// personal API key's read scope; changes to hooks its trade scope, and live besides for a live hook.
import { z } from 'zod';
import { ZWebhookSignalList, ZSignalListQuery, ZSignalWebhookCreate, ZSignalWebhookCreated, ZSignalWebhookIdPath, ZSignalWebhookList } from '../../contracts/signals.ts';
import { authedProcedure, liveAllowedOf, router } from '../trpc/init.ts';

const tags = ['signals'];
const openapi = (method: 'GET' | 'POST' | 'DELETE', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const signalsRouter = router({
  createWebhook: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('POST', '/signals/webhooks', 'Make a signal webhook: its URL /hooks/{token} is answered this once (only a hash of the token is kept)'), status: 201 })
    .input(ZSignalWebhookCreate)
    .output(ZSignalWebhookCreated)
    .mutation(({ ctx, input }) => ctx.signals.webhooks.create({ user: ctx.user, origin: ctx.origin, liveAllowed: liveAllowedOf(ctx), input })),

  webhooks: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/signals/webhooks', 'Your signal webhooks in force (never their tokens), newest first') })
    .input(z.void())
    .output(ZSignalWebhookList)
    .query(({ ctx }) => ctx.signals.webhooks.list({ user: ctx.user })),

  rotateWebhook: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('POST', '/signals/webhooks/{id}/rotate', 'Give one of your signal webhooks a new token (answered this once); the old one is 404 at once'), errors: ['NOT_FOUND'] })
    .input(ZSignalWebhookIdPath)
    .output(ZSignalWebhookCreated)
    .mutation(({ ctx, input }) => ctx.signals.webhooks.rotate({ user: ctx.user, origin: ctx.origin, liveAllowed: liveAllowedOf(ctx), id: input.id })),

  removeWebhook: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('DELETE', '/signals/webhooks/{id}', 'Remove one of your signal webhooks: its token is 404 at once; its signals stay listed'), status: 204, errors: ['NOT_FOUND'] })
    .input(ZSignalWebhookIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.signals.webhooks.remove({ user: ctx.user, origin: ctx.origin, id: input.id })),

  list: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/signals', 'The signals your webhooks took, newest first, with what became of each (accepted with its order, refused or invalid with the code and reason)') })
    .input(ZSignalListQuery)
    .output(ZWebhookSignalList)
    .query(({ ctx, input }) => ctx.signals.list({ user: ctx.user, query: input })),
});
