// /api/auth: register, login, refresh, me, logout, password, sessions, personal API keys.
import { z } from 'zod';
import {
  ZApiKeyCreate,
  ZApiKeyCreated,
  ZApiKeyIdPath,
  ZApiKeyList,
  ZOtherSessionsRevoked,
  ZPasswordChange, ZSessionIdPath, ZSessionList, ZSessionListQuery, ZTokenRefresh, ZTokenResponse, ZUserLogin, ZUserRegister, ZUserResponse } from '../../contracts/auth.ts';
import { toUserResponse } from '../users/users.ts';
import { authedProcedure, publicProcedure, router } from '../trpc/init.ts';

const tags = ['auth'];

export const authRouter = router({
  register: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/register', tags, summary: 'Create a user' }, status: 201, errors: ['CONFLICT', 'RATE_LIMIT_EXCEEDED'] })
    .input(ZUserRegister)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) => toUserResponse(await ctx.auth.register({ input, origin: ctx.origin }))),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, summary: 'Exchange credentials for tokens' },
      haltExempt: true,
      // Halt-exempt for admins only: a user's login answers 503 while halted.
      errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED', 'SERVICE_HALTED'],
    })
    .input(ZUserLogin)
    .output(ZTokenResponse)
    .mutation(({ ctx, input }) => ctx.auth.login({ input, origin: ctx.origin })),

  refresh: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/refresh', tags, summary: 'Rotate a refresh token' }, haltExempt: true, errors: ['UNAUTHORIZED', 'SERVICE_HALTED'] })
    .input(ZTokenRefresh)
    .output(ZTokenResponse)
    .mutation(({ ctx, input }) => ctx.auth.refresh({ refreshToken: input.refresh_token, origin: ctx.origin })),

  me: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: { method: 'GET', path: '/auth/me', tags, summary: 'The current user', protect: true } })
    // Declared void on purpose: without an input, trpc-to-openapi builds a z.object({}) per request.
    .input(z.void())
    .output(ZUserResponse)
    .query(({ ctx }) => toUserResponse(ctx.user)),

  logout: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'Revoke a refresh-token family', protect: true }, status: 204 })
    .input(ZTokenRefresh)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.auth.logout({ user: ctx.user, refreshToken: input.refresh_token, origin: ctx.origin })),

  logoutAll: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/logout-all', tags, summary: 'End every session and every token of the current user', protect: true }, status: 204 })
    .input(z.void())
    .output(z.void())
    .mutation(({ ctx }) => ctx.auth.logoutAll({ user: ctx.user, origin: ctx.origin })),

  changePassword: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/password', tags, summary: 'Change the password; every session and token ends', protect: true },
      status: 204,
      errors: ['RATE_LIMIT_EXCEEDED'],
    })
    .input(ZPasswordChange)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.auth.changePassword({ user: ctx.user, input, origin: ctx.origin })),

  // The literal path first: trpc-to-openapi takes the first route that fits.
  revokeOtherSessions: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/sessions/revoke-others', tags, summary: 'End every session but the current one (the one this access token was issued with)', protect: true },
      errors: ['CONFLICT'],
    })
    .input(z.void())
    .output(ZOtherSessionsRevoked)
    .mutation(({ ctx }) => ctx.sessions.revokeOthers({ user: ctx.user, currentSessionId: ctx.sessionId, origin: ctx.origin })),

  sessions: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/sessions', tags, summary: 'Your live sessions, most recently used first; `current` marks the one this access token belongs to', protect: true } })
    .input(ZSessionListQuery)
    .output(ZSessionList)
    .query(({ ctx, input }) => ctx.sessions.list({ user: ctx.user, currentSessionId: ctx.sessionId, query: input })),

  revokeSession: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/auth/sessions/{id}', tags, summary: 'End one of your sessions: its refresh token stops working', protect: true }, status: 204, errors: ['NOT_FOUND'] })
    .input(ZSessionIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.sessions.revoke({ user: ctx.user, currentSessionId: ctx.sessionId, sessionId: input.id, origin: ctx.origin })),

  // Personal API keys: managed only by a password's sign-in (no key reaches these routes).
  createApiKey: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/api-keys', tags, summary: 'Create a personal API key with scopes; its secret is answered this once', protect: true }, status: 201 })
    .input(ZApiKeyCreate)
    .output(ZApiKeyCreated)
    .mutation(({ ctx, input }) => ctx.apiKeys.create({ user: ctx.user, input, origin: ctx.origin })),

  apiKeys: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/api-keys', tags, summary: 'Your personal API keys in force (never their secrets), newest first', protect: true } })
    .input(z.void())
    .output(ZApiKeyList)
    .query(({ ctx }) => ctx.apiKeys.list({ user: ctx.user })),

  revokeApiKey: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/auth/api-keys/{id}', tags, summary: 'Revoke one of your personal API keys: it stops working on every instance at once', protect: true }, status: 204, errors: ['NOT_FOUND'] })
    .input(ZApiKeyIdPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.apiKeys.revoke({ user: ctx.user, id: input.id, origin: ctx.origin })),
});
