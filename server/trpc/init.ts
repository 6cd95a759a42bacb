// tRPC instance and the base procedure builders: public, authed, admin. Every procedure passes
// the same middleware: the halt switch, authentication and role, success status, error mapping.
import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { AppError } from '../errors.ts';
import type { AuthUser } from '../users/users.ts';
import type { Context } from './context.ts';
import { formatError, toTRPCError } from './errors.ts';
import type { ProcedureMeta } from './meta.ts';

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({ transformer: superjson, errorFormatter: formatError });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * Who is asking: the user, and the session (refresh-token family) its access token was issued
 * with, undefined for a token older than that claim. Public procedures have neither.
 */
interface Caller<TUser extends AuthUser | undefined> {
  user: TUser;
  sessionId: string | undefined;
}

const ANONYMOUS: Caller<undefined> = { user: undefined, sessionId: undefined };

/** The caller behind the bearer token, or a 401/403 when the role is not met. */
const authorize = async (ctx: Context, role: 'user' | 'admin'): Promise<Caller<AuthUser>> => {
  const token = ctx.authorization ? BEARER.exec(ctx.authorization)?.[1] : undefined;
  if (!token) throw new AppError('UNAUTHORIZED', 'Missing bearer token');
  const { user, sessionId } = await ctx.auth.authenticateToken(token);
  ctx.http.userId = user.id;
  if (role === 'admin' && user.role !== 'admin') throw new AppError('FORBIDDEN', 'Admin role required');
  return { user, sessionId };
};

/**
 * The one middleware every procedure passes, in order: the halt switch,
 * authentication and role, then the success status or the error mapping. One step instead of
 * a chain keeps the hot path short (tRPC copies its options at every middleware level).
 */
const guard = <TUser extends AuthUser | undefined>(resolveCaller: (ctx: Context) => Promise<Caller<TUser>>) =>
  t.middleware(async ({ ctx, meta, next }) => {
    try {
      if (ctx.halt.isHalted() && !meta?.haltExempt) throw new AppError('SERVICE_HALTED');
      const caller = await resolveCaller(ctx);
      const result = await next({ ctx: { user: caller.user, sessionId: caller.sessionId } });
      if (result.ok) {
        // A procedure that decides its own status (201 created or 200 updated) keeps it.
        if (meta?.status) ctx.http.status ??= meta.status;
        return result;
      }
      const cause = result.error.cause;
      if (cause instanceof AppError) throw cause;
      if (cause instanceof ZodError && result.error.code === 'BAD_REQUEST') {
        throw new TRPCError({ code: 'UNPROCESSABLE_CONTENT', message: 'Request validation failed', cause });
      }
      return result;
    } catch (error) {
      throw error instanceof AppError ? toTRPCError(error) : error;
    }
  });

export const publicProcedure = t.procedure.use(guard(() => Promise.resolve(ANONYMOUS)));
export const authedProcedure = t.procedure.use(guard((ctx) => authorize(ctx, 'user')));
export const adminProcedure = t.procedure.use(guard((ctx) => authorize(ctx, 'admin')));
