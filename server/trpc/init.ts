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
import { isApiKey } from '../auth/api-keys.ts';
import type { TApiKeyScope } from '../../contracts/auth.ts';

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({ transformer: superjson, errorFormatter: formatError });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

const BEARER = /^Bearer\s+(\S+)$/i;

/** The credential of an `Authorization: Bearer …` header (an access token or a personal API key). */
export const bearerTokenOf = (authorization: string | undefined): string | undefined => (authorization ? BEARER.exec(authorization)?.[1] : undefined);

/**
 * Who is asking: the user, and the session (refresh-token family) its access token was issued
 * with, undefined for a token older than that claim. Public procedures have neither.
 */
interface Caller<TUser extends AuthUser | undefined> {
  user: TUser;
  sessionId: string | undefined;
  /** A personal API key's scopes; undefined for a password's sign-in (which may do anything its role may). */
  keyScopes: ReadonlySet<TApiKeyScope> | undefined;
}

const ANONYMOUS: Caller<undefined> = { user: undefined, sessionId: undefined, keyScopes: undefined };

/**
 * Whether the caller may act on a live account where the input does not say so itself (a signal
 * webhook's mode, read from the database): a signed-in user, or a key with the live scope.
 */
export const liveAllowedOf = (ctx: { keyScopes: ReadonlySet<TApiKeyScope> | undefined }): boolean => ctx.keyScopes === undefined || ctx.keyScopes.has('live');

/** Whether the input asks for the live account (an order's or the bot's `live_mode`). */
const asksLive = async (getRawInput: () => Promise<unknown>): Promise<boolean> => {
  const input = await getRawInput().catch(() => undefined);
  return typeof input === 'object' && input !== null && (input as { live_mode?: unknown }).live_mode === true;
};

/**
 * A personal API key's caller: refused (403 naming the scope) where the procedure takes no key or
 * the key lacks its scope, and `live` where the input asks for the live account.
 */
const authorizeKey = async (ctx: Context, token: string, meta: ProcedureMeta | undefined, getRawInput: () => Promise<unknown>): Promise<Caller<AuthUser>> => {
  const { user, scopes } = await ctx.apiKeys.authenticate(token);
  ctx.http.userId = user.id;
  const scope = meta?.apiKeyScope;
  if (!scope) throw new AppError('FORBIDDEN', 'This route takes no API key: sign in with a password');
  if (!scopes.has(scope)) throw new AppError('FORBIDDEN', `This API key lacks the ${scope} scope`);
  if (scope === 'trade' && !scopes.has('live') && (await asksLive(getRawInput))) throw new AppError('FORBIDDEN', 'This API key lacks the live scope');
  return { user, sessionId: undefined, keyScopes: scopes };
};

/** The caller behind the bearer token (an access token or a personal API key), or a 401/403 when the role is not met. */
const authorize = async (ctx: Context, role: 'user' | 'admin', meta: ProcedureMeta | undefined, getRawInput: () => Promise<unknown>): Promise<Caller<AuthUser>> => {
  const token = bearerTokenOf(ctx.authorization);
  if (!token) throw new AppError('UNAUTHORIZED', 'Missing bearer token');
  // Operators sign in: no key reaches an admin route.
  if (isApiKey(token)) return role === 'admin' ? Promise.reject(new AppError('FORBIDDEN', 'Admin routes take no API key')) : authorizeKey(ctx, token, meta, getRawInput);
  const { user, sessionId } = await ctx.auth.authenticateToken(token);
  ctx.http.userId = user.id;
  if (role === 'admin' && user.role !== 'admin') throw new AppError('FORBIDDEN', 'Admin role required');
  return { user, sessionId, keyScopes: undefined };
};

/**
 * The one middleware every procedure passes, in order: the halt switch,
 * authentication and role, then the success status or the error mapping. One step instead of
 * a chain keeps the hot path short (tRPC copies its options at every middleware level).
 */
const guard = <TUser extends AuthUser | undefined>(resolveCaller: (ctx: Context, meta: ProcedureMeta | undefined, getRawInput: () => Promise<unknown>) => Promise<Caller<TUser>>) =>
  t.middleware(async ({ ctx, meta, next, getRawInput }) => {
    try {
      if (ctx.halt.isHalted() && !meta?.haltExempt) throw new AppError('SERVICE_HALTED');
      const caller = await resolveCaller(ctx, meta, getRawInput);
      const result = await next({ ctx: { user: caller.user, sessionId: caller.sessionId, keyScopes: caller.keyScopes } });
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
export const authedProcedure = t.procedure.use(guard((ctx, meta, getRawInput) => authorize(ctx, 'user', meta, getRawInput)));
export const adminProcedure = t.procedure.use(guard((ctx, meta, getRawInput) => authorize(ctx, 'admin', meta, getRawInput)));
