// tRPC instance and the base procedure builders: public, authed, admin. Every procedure passes
// the same middleware: route bookkeeping, success status, the halt switch and error mapping.
import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { AppError } from '../errors.ts';
import type { AuthedContext, Context } from './context.ts';
import { describeError, toTRPCError } from './errors.ts';
import type { ProcedureMeta } from './meta.ts';

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    transformer: superjson,
    errorFormatter: ({ shape, error }) => {
      const described = describeError(error);
      // No stack, ever: the shape's data is rebuilt from what callers may see.
      return {
        ...shape,
        message: described.message,
        data: {
          code: shape.data.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          domainCode: described.domainCode,
          errors: described.errors,
          retryAfterSec: described.retryAfterSec,
        },
      };
    },
  });

export const router = t.router;
export const middleware = t.middleware;

const baseProcedure = t.procedure.use(async ({ ctx, meta, path, next }) => {
  ctx.http.route ??= meta?.openapi?.path ? `/api${meta.openapi.path}` : `trpc:${path}`;
  if (ctx.services.halt.isHalted() && !meta?.haltExempt) throw toTRPCError(new AppError('SERVICE_HALTED'));
  const result = await next();
  if (result.ok) {
    if (meta?.status) ctx.http.status = meta.status;
    return result;
  }
  const cause = result.error.cause;
  if (cause instanceof AppError) throw toTRPCError(cause);
  if (cause instanceof ZodError && result.error.code === 'BAD_REQUEST') {
    throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: 'Request validation failed', cause });
  }
  return result;
});

export const publicProcedure = baseProcedure;

const BEARER = /^Bearer\s+(\S+)$/i;

export const authedProcedure = baseProcedure.use(async ({ ctx, next }) => {
  const token = ctx.authorization ? BEARER.exec(ctx.authorization)?.[1] : undefined;
  if (!token) throw toTRPCError(new AppError('UNAUTHORIZED', 'Missing bearer token'));
  let user;
  try {
    user = await ctx.services.auth.authenticate(token);
  } catch (error) {
    throw error instanceof AppError ? toTRPCError(error) : error;
  }
  ctx.http.userId = user.id;
  return next({ ctx: { ...ctx, user } satisfies AuthedContext });
});

export const adminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.user.role !== 'admin') throw toTRPCError(new AppError('FORBIDDEN', 'Admin role required'));
  return next();
});
