// Authentication: registration, login and password change under the attempt throttles (per
// username, per client address) with every password hash queued, sessions
// (refresh-token families) with single-use rotation and reuse detection, logout of one session or
// of all, and the access-token check every request makes. Every write is one transaction with its
// audit record.
import { randomUUID } from 'node:crypto';
import type { TPasswordChange, TTokenResponse, TUserLogin, TUserRegister } from '../../contracts/auth.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db, Queryable } from '../db/client.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Halt } from '../system/halt.ts';
import { findUserById, findUserByUsername, insertUser, isUsernameOrEmailTaken, updateUser } from '../users/queries.ts';
import { toAuthUser, type AuthUser, type Users } from '../users/users.ts';
import { createDummyHash, type Passwords } from './passwords.ts';
import { claimRefreshToken, revokeApiKeys, insertRefreshToken, insertSession, lockSession, revokeSessions } from './queries.ts';
import { addressBucket, type Throttle, type ThrottleKey } from './throttle.ts';
import type { TokenSigner } from './tokens.ts';

export interface AuthDeps {
  db: Db;
  clock: Clock;
  tokens: TokenSigner;
  throttle: Throttle;
  passwords: Passwords;
  users: Users;
  halt: Halt;
  changes: ChangeFeed;
}

export type Auth = Awaited<ReturnType<typeof createAuth>>;

const invalidRefresh = () => new AppError('UNAUTHORIZED', 'Invalid refresh token');

export const createAuth = async ({ db, clock, tokens, throttle, passwords, users, halt, changes }: AuthDeps) => {
  const dummyHash = await createDummyHash();

  /**
   * For a hash or a check that did not happen (the hash queue was full): the attempts counted
   * for it are given back, then the refusal goes on.
   */
  const givingBack = (keys: readonly ThrottleKey[]) => async (error: unknown): Promise<never> => {
    await throttle.release(db, keys);
    throw error;
  };

  /** While halted, only admins may obtain tokens (so an operator can always lift the halt). */
  const refuseWhileHalted = (role: AuthUser['role'] | undefined) => {
    if (halt.isHalted() && role !== 'admin') throw new AppError('SERVICE_HALTED');
  };

  const issueTokens = async (tx: Queryable, user: AuthUser, familyId: string): Promise<TTokenResponse> => {
    const jti = randomUUID();
    const at = clock.now();
    await insertRefreshToken(tx, { jti, familyId, userId: user.id, at, expiresAt: new Date(at.getTime() + tokens.refreshTtlSec * 1000) });
    const subject = { userId: user.id, version: user.tokenVersion };
    return {
      access_token: await tokens.signAccess({ ...subject, familyId }),
      refresh_token: await tokens.signRefresh({ ...subject, jti, familyId }),
      token_type: 'bearer',
      expires_in: tokens.accessTtlSec,
    };
  };

  /** Opens a session for a user whose credentials were proven, inside the caller's transaction. */
  const openSession = async (tx: Queryable, { user, origin }: { user: AuthUser; origin?: RequestOrigin }): Promise<TTokenResponse> => {
    const familyId = randomUUID();
    await insertSession(tx, { familyId, userId: user.id, at: clock.now() });
    await recordAudit(tx, { action: 'auth.login', actorUserId: user.id, subjectUserId: user.id, origin, at: clock.now() });
    return issueTokens(tx, user, familyId);
  };

  /** Counted per client address before the hash, so a flood costs no hashing past the limit. */
  const register = async ({ input, origin }: { input: TUserRegister; origin: RequestOrigin }): Promise<AuthUser> => {
    const perAddress = { scope: 'register' as const, key: '', address: addressBucket(origin.address) };
    await throttle.admit(perAddress);
    const passwordHash = await passwords.hash(input.password).catch(givingBack([perAddress]));
    try {
      return await db.transaction(async (tx) => {
        if (await isUsernameOrEmailTaken(tx, input)) throw new AppError('CONFLICT', 'Username or e-mail is already registered');
        const at = clock.now();
        const user = toAuthUser(await insertUser(tx, { username: input.username, email: input.email, passwordHash, role: 'user', at }));
        await recordAudit(tx, { action: 'auth.register', actorUserId: user.id, subjectUserId: user.id, origin, at });
        return user;
      });
    } catch (error) {
      // Two registrations racing for one name: the unique index decides, the loser gets 409.
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', 'Username or e-mail is already registered');
      throw error;
    }
  };

  const login = async ({ input, origin }: { input: TUserLogin; origin: RequestOrigin }): Promise<TTokenResponse> => {
    const row = await findUserByUsername(db, input.username);
    // Decided before any credential is checked: a halted service verifies no user's password.
    refuseWhileHalted(row?.role);
    // Failures count per username and address, and per address alone (any username, unknown
    // ones included), so new usernames buy no extra guesses. The address goes first: refused
    // there, the username's count is left alone.
    const perAddress = { scope: 'login_address' as const, key: '', address: addressBucket(origin.address) };
    const perUsername = { scope: 'login' as const, key: input.username.toLowerCase(), address: origin.address };
    await throttle.admitAll([perAddress, perUsername]);
    const passwordOk = await passwords.verify(row?.passwordHash ?? dummyHash, input.password).catch(givingBack([perAddress, perUsername]));
    if (!row || !passwordOk) {
      await recordAudit(db, { action: 'auth.login_failed', subjectUserId: row?.id ?? null, origin, data: { username: input.username }, at: clock.now() });
      throw new AppError('UNAUTHORIZED', 'Invalid username or password');
    }
    const user = toAuthUser(row);
    if (!user.isActive) throw new AppError('FORBIDDEN', 'Account is deactivated');
    return db.transaction(async (tx) => {
      await throttle.reset(tx, perUsername);
      // Only this attempt is given back: one known account must not wipe the address's failures.
      await throttle.release(tx, [perAddress]);
      return openSession(tx, { user, origin });
    });
  };

  const refresh = async ({ refreshToken, origin }: { refreshToken: string; origin: RequestOrigin }): Promise<TTokenResponse> => {
    const claims = await tokens.verify(refreshToken, 'refresh');
    const user = await users.get(claims.userId);
    if (!user || !user.isActive || claims.version !== user.tokenVersion) throw invalidRefresh();
    refuseWhileHalted(user.role);

    const outcome = await db.transaction(async (tx) => {
      const session = await lockSession(tx, { familyId: claims.familyId!, userId: user.id });
      if (!session || session.revokedAt) return undefined;
      const at = clock.now();
      // Single use: only the caller that marks the token used may rotate.
      if (!(await claimRefreshToken(tx, { jti: claims.jti, familyId: session.id, at }))) {
        // A used (or unknown) token of a live session was presented: treat it as theft and end it.
        await revokeSessions(tx, { userId: user.id, familyId: session.id, reason: 'reuse', at });
        await recordAudit(tx, { action: 'auth.refresh_reuse', subjectUserId: user.id, origin, data: { family_id: session.id }, at });
        return undefined;
      }
      return issueTokens(tx, user, session.id);
    });
    if (!outcome) throw invalidRefresh();
    return outcome;
  };

  const logout = async ({ user, refreshToken, origin }: { user: AuthUser; refreshToken: string; origin: RequestOrigin }): Promise<void> => {
    const claims = await tokens.verify(refreshToken, 'refresh');
    if (claims.userId !== user.id) throw invalidRefresh();
    const at = clock.now();
    await db.transaction(async (tx) => {
      await revokeSessions(tx, { userId: user.id, familyId: claims.familyId!, reason: 'logout', at });
      await recordAudit(tx, { action: 'auth.logout', actorUserId: user.id, subjectUserId: user.id, origin, at });
    });
  };

  /** Ends every session and every token of the user, the one presented included. */
  const endEverySession = async (tx: Queryable, { user, reason }: { user: AuthUser; reason: string }) => {
    const at = clock.now();
    await updateUser(tx, user.id, { raiseTokenVersion: true, at });
    await revokeSessions(tx, { userId: user.id, reason, at });
    await changes.publish(tx, { kind: 'user', id: user.id });
  };

  const logoutAll = async ({ user, origin }: { user: AuthUser; origin: RequestOrigin }): Promise<void> => {
    await db.transaction(async (tx) => {
      await endEverySession(tx, { user, reason: 'logout_all' });
      await recordAudit(tx, { action: 'auth.logout_all', actorUserId: user.id, subjectUserId: user.id, origin, at: clock.now() });
    });
    users.forget(user.id);
  };

  /** Throttled like login, per user: a stolen access token must not buy unlimited guesses. */
  const changePassword = async ({ user, input, origin }: { user: AuthUser; input: TPasswordChange; origin: RequestOrigin }): Promise<void> => {
    const throttleKey = { scope: 'password' as const, key: String(user.id), address: '' };
    await throttle.admit(throttleKey);
    const row = await findUserById(db, user.id);
    if (!row || !(await passwords.verify(row.passwordHash, input.current_password).catch(givingBack([throttleKey])))) {
      await recordAudit(db, { action: 'auth.password_change_failed', actorUserId: user.id, subjectUserId: user.id, origin, at: clock.now() });
      throw new AppError('VALIDATION_ERROR', 'Current password is incorrect', { errors: [{ path: 'current_password', message: 'is incorrect' }] });
    }
    const passwordHash = await passwords.hash(input.new_password).catch(givingBack([throttleKey]));
    await db.transaction(async (tx) => {
      await updateUser(tx, user.id, { passwordHash, at: clock.now() });
      await endEverySession(tx, { user, reason: 'password_change' });
      await revokeApiKeys(tx, { userId: user.id, reason: 'password_change', at: clock.now() });
      await throttle.reset(tx, throttleKey);
      await recordAudit(tx, { action: 'auth.password_change', actorUserId: user.id, subjectUserId: user.id, origin, at: clock.now() });
    });
    users.forget(user.id);
  };

  /**
   * Resolves an access token to an active user, the token's expiry and the session it was issued
   * with (undefined for a token older than that claim), or throws 401.
   */
  const authenticateToken = async (accessToken: string): Promise<{ user: AuthUser; expiresAt: Date; sessionId: string | undefined }> => {
    const claims = await tokens.verify(accessToken, 'access');
    const user = await users.get(claims.userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'Invalid token');
    if (!user.isActive) throw new AppError('UNAUTHORIZED', 'Account is deactivated');
    if (claims.version !== user.tokenVersion) throw new AppError('UNAUTHORIZED', 'Token revoked');
    return { user, expiresAt: claims.expiresAt, sessionId: claims.familyId };
  };

  /** A session for a user without a password check: for the CLI and test factories. */
  const issueSession = ({ user }: { user: AuthUser }): Promise<TTokenResponse> => db.transaction((tx) => openSession(tx, { user }));

  return { register, login, refresh, logout, logoutAll, changePassword, authenticateToken, issueSession };
};
