// /api/exchange-keys: a user's exchange and broker keys. The literal /test is registered apart
// from /{id} by method, so each path reaches its own procedure.
import { z } from 'zod';
import {
  ZExchangeKeyCreate,
  ZExchangeKeyIdPath,
  ZExchangeKeyListQuery,
  ZExchangeKeyPatch,
  ZExchangeKeyResponse,
  ZExchangeKeyTestRequest,
  ZExchangeKeyTestResponse,
} from '../../contracts/keys.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['exchange-keys'];

export const keysRouter = router({
  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/exchange-keys', tags, summary: 'Register a key (encrypted at rest; never returned)', protect: true }, status: 201, errors: ['CONFLICT', 'FEATURE_DISABLED'] })
    .input(ZExchangeKeyCreate)
    .output(ZExchangeKeyResponse)
    .mutation(({ ctx, input }) => ctx.keys.create({ user: ctx.user, input, origin: ctx.origin })),

  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/exchange-keys', tags, summary: 'Your keys, masked (a plain array)', protect: true } })
    .input(ZExchangeKeyListQuery)
    .output(z.array(ZExchangeKeyResponse))
    .query(({ ctx, input }) => ctx.keys.list({ user: ctx.user, assetClass: input.asset_class })),

  test: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/exchange-keys/test', tags, summary: 'Dry-run a key against its broker; nothing is stored', protect: true }, errors: ['FEATURE_DISABLED'] })
    .input(ZExchangeKeyTestRequest)
    .output(ZExchangeKeyTestResponse)
    .mutation(({ ctx, input }) => ctx.keys.test({ user: ctx.user, input })),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/exchange-keys/{id}', tags, summary: 'Change the label or is_active of a key', protect: true }, errors: ['NOT_FOUND'] })
    .input(ZExchangeKeyPatch)
    .output(ZExchangeKeyResponse)
    .mutation(({ ctx, input }) => ctx.keys.change({ user: ctx.user, input, origin: ctx.origin })),

  remove: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/exchange-keys/{id}', tags, summary: 'Delete a key and release its broker', protect: true }, status: 204, errors: ['NOT_FOUND'] })
    .input(ZExchangeKeyIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.keys.remove({ user: ctx.user, id: input.id, origin: ctx.origin })),
});
