// /api/auth: register, login, refresh, me, logout, password.
import { z } from 'zod';
import { ZPasswordChange, ZTokenRefresh, ZTokenResponse, ZUserLogin, ZUserRegister, ZUserResponse } from '../../contracts/auth.ts';
import { toUserResponse } from '../auth/users.ts';
import { authedProcedure, publicProcedure, router } from '../trpc/init.ts';

const tags = ['auth'];

export const authRouter = router({
  register: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/register', tags, summary: 'Create a user' }, status: 201, errors: ['CONFLICT'] })
    .input(ZUserRegister)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) => toUserResponse(await ctx.services.auth.register(input, ctx.origin))),

  login: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/auth/login', tags, summary: 'Exchange credentials for tokens' },
      haltExempt: true,
      // Halt-exempt for admins only: a user's login answers 503 while halted.
      errors: ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED', 'SERVICE_HALTED'],
    })
    .input(ZUserLogin)
    .output(ZTokenResponse)
    .mutation(({ ctx, input }) => ctx.services.auth.login(input, ctx.origin)),

  refresh: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/refresh', tags, summary: 'Rotate a refresh token' }, haltExempt: true, errors: ['UNAUTHORIZED', 'SERVICE_HALTED'] })
    .input(ZTokenRefresh)
    .output(ZTokenResponse)
    .mutation(({ ctx, input }) => ctx.services.auth.refresh(input.refresh_token, ctx.origin)),

  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/auth/me', tags, summary: 'The current user', protect: true } })
    // Declared void on purpose: without an input, trpc-to-openapi builds a z.object({}) per request.
    .input(z.void())
    .output(ZUserResponse)
    .query(({ ctx }) => toUserResponse(ctx.user)),

  logout: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/logout', tags, summary: 'Revoke a refresh-token family', protect: true }, status: 204 })
    .input(ZTokenRefresh)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.auth.logout(ctx.user, input.refresh_token, ctx.origin)),

  changePassword: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/auth/password', tags, summary: 'Change the password and revoke every session', protect: true }, status: 204 })
    .input(ZPasswordChange)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.services.auth.changePassword(ctx.user, input, ctx.origin)),
});
