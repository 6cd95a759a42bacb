// Authentication: registration, login with throttling, refresh-token rotation with reuse
// detection, logout, password change. Every write here is one transaction with its audit record.
import { randomUUID } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { TPasswordChange, TTokenResponse, TUserLogin, TUserRegister } from '../../contracts/auth.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Db, Tx } from '../db/client.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { refreshTokenFamilies, refreshTokens, users } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { HaltSwitch } from '../system/halt.ts';
import { createDummyHash, hashPassword, verifyPassword } from './passwords.ts';
import type { LoginThrottle } from './throttle.ts';
import type { TokenSigner } from './tokens.ts';
import { toAuthUser, type AuthUser, type UserDirectory } from './users.ts';

export interface AuthServiceDeps {
  db: Db;
  tokens: TokenSigner;
  throttle: LoginThrottle;
  users: UserDirectory;
  halt: HaltSwitch;
  changes: ChangeFeed;
}

const usernameKey = (username: string) => username.toLowerCase();

export type AuthService = Awaited<ReturnType<typeof createAuthService>>;

export const createAuthService = async ({ db, tokens, throttle, users: directory, halt, changes }: AuthServiceDeps) => {
  const dummyHash = await createDummyHash();

  /** While halted, only admins may obtain tokens (so an operator can always lift the halt). */
  const refuseWhileHalted = (user: AuthUser) => {
    if (halt.isHalted() && user.role !== 'admin') throw new AppError('SERVICE_HALTED');
  };

  const issueTokens = async (tx: Tx, userId: number, familyId: string): Promise<TTokenResponse> => {
    const jti = randomUUID();
    await tx.insert(refreshTokens).values({ jti, familyId, userId, expiresAt: new Date(Date.now() + tokens.refreshTtlSec * 1000) });
    return {
      access_token: await tokens.signAccess(userId),
      refresh_token: await tokens.signRefresh(userId, jti, familyId),
      token_type: 'bearer',
      expires_in: tokens.accessTtlSec,
    };
  };

  const revokeFamilies = (tx: Tx, where: ReturnType<typeof eq>, reason: string) =>
    tx.update(refreshTokenFamilies).set({ revokedAt: new Date(), revokedReason: reason }).where(and(where, isNull(refreshTokenFamilies.revokedAt)));

  const register = async (input: TUserRegister, origin: RequestOrigin): Promise<AuthUser> => {
    const passwordHash = await hashPassword(input.password);
    try {
      return await db.transaction(async (tx) => {
        const [taken] = await tx
          .select({ username: users.username })
          .from(users)
          .where(sql`lower(${users.username}) = ${usernameKey(input.username)} or lower(${users.email}) = ${input.email.toLowerCase()}`)
          .limit(1);
        if (taken) throw new AppError('CONFLICT', 'Username or e-mail is already registered');
        const [row] = await tx.insert(users).values({ username: input.username, email: input.email, passwordHash }).returning();
        const user = toAuthUser(row!);
        await recordAudit(tx, { action: 'auth.register', actorUserId: user.id, subjectUserId: user.id, origin });
        return user;
      });
    } catch (error) {
      // Two registrations racing for one name: the unique index decides, the loser gets 409.
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', 'Username or e-mail is already registered');
      throw error;
    }
  };

  const login = async (input: TUserLogin, origin: RequestOrigin): Promise<TTokenResponse> => {
    const key = usernameKey(input.username);
    await throttle.check(key, origin.address);
    const [row] = await db.select().from(users).where(sql`lower(${users.username}) = ${key}`);
    const passwordOk = await verifyPassword(row?.passwordHash ?? dummyHash, input.password);
    if (!row || !passwordOk) {
      await db.transaction(async (tx) => {
        await throttle.recordFailure(tx, key, origin.address);
        await recordAudit(tx, { action: 'auth.login_failed', subjectUserId: row?.id ?? null, origin, data: { username: input.username } });
      });
      throw new AppError('UNAUTHORIZED', 'Invalid username or password');
    }
    const user = toAuthUser(row);
    if (!user.isActive) throw new AppError('FORBIDDEN', 'Account is deactivated');
    refuseWhileHalted(user);
    return db.transaction(async (tx) => {
      await throttle.clear(tx, key, origin.address);
      const familyId = randomUUID();
      await tx.insert(refreshTokenFamilies).values({ id: familyId, userId: user.id });
      await recordAudit(tx, { action: 'auth.login', actorUserId: user.id, subjectUserId: user.id, origin });
      return issueTokens(tx, user.id, familyId);
    });
  };

  const refresh = async (refreshToken: string, origin: RequestOrigin): Promise<TTokenResponse> => {
    const claims = await tokens.verify(refreshToken, 'refresh');
    const user = await directory.get(claims.userId);
    if (!user || !user.isActive) throw new AppError('UNAUTHORIZED', 'Invalid refresh token');
    refuseWhileHalted(user);

    const outcome = await db.transaction(async (tx) => {
      const [family] = await tx
        .select()
        .from(refreshTokenFamilies)
        .where(and(eq(refreshTokenFamilies.id, claims.familyId!), eq(refreshTokenFamilies.userId, user.id)))
        .for('update');
      if (!family || family.revokedAt) return { ok: false as const };
      // Single use: only the caller that flips used_at from null may rotate.
      const [claimed] = await tx
        .update(refreshTokens)
        .set({ usedAt: new Date() })
        .where(and(eq(refreshTokens.jti, claims.jti), eq(refreshTokens.familyId, family.id), isNull(refreshTokens.usedAt)))
        .returning({ jti: refreshTokens.jti });
      if (!claimed) {
        // A used (or unknown) token of a live family was presented: treat it as theft and end the family.
        await revokeFamilies(tx, eq(refreshTokenFamilies.id, family.id), 'reuse');
        await recordAudit(tx, { action: 'auth.refresh_reuse', subjectUserId: user.id, origin, data: { family_id: family.id } });
        return { ok: false as const };
      }
      return { ok: true as const, tokens: await issueTokens(tx, user.id, family.id) };
    });
    if (!outcome.ok) throw new AppError('UNAUTHORIZED', 'Invalid refresh token');
    return outcome.tokens;
  };

  const logout = async (user: AuthUser, refreshToken: string, origin: RequestOrigin): Promise<void> => {
    const claims = await tokens.verify(refreshToken, 'refresh');
    if (claims.userId !== user.id) throw new AppError('UNAUTHORIZED', 'Invalid refresh token');
    await db.transaction(async (tx) => {
      await revokeFamilies(tx, eq(refreshTokenFamilies.id, claims.familyId!), 'logout');
      await recordAudit(tx, { action: 'auth.logout', actorUserId: user.id, subjectUserId: user.id, origin });
    });
  };

  const changePassword = async (user: AuthUser, input: TPasswordChange, origin: RequestOrigin): Promise<void> => {
    const [row] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, user.id));
    if (!row || !(await verifyPassword(row.passwordHash, input.current_password))) {
      throw new AppError('VALIDATION_ERROR', 'Current password is incorrect', {
        errors: [{ path: 'current_password', message: 'is incorrect' }],
      });
    }
    const passwordHash = await hashPassword(input.new_password);
    await db.transaction(async (tx) => {
      await tx.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, user.id));
      await revokeFamilies(tx, eq(refreshTokenFamilies.userId, user.id), 'password_change');
      await recordAudit(tx, { action: 'auth.password_change', actorUserId: user.id, subjectUserId: user.id, origin });
      await changes.publish(tx, { kind: 'user', id: user.id });
    });
    directory.forget(user.id);
  };

  /** Resolves a Bearer access token to an active user, or throws 401. */
  const authenticate = async (accessToken: string): Promise<AuthUser> => {
    const claims = await tokens.verify(accessToken, 'access');
    const user = await directory.get(claims.userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'Invalid token');
    if (!user.isActive) throw new AppError('UNAUTHORIZED', 'Account is deactivated');
    return user;
  };

  return { register, login, refresh, logout, changePassword, authenticate };
};
