// Users as the rest of the service sees them: a cached lookup by id (every authenticated request
// needs it, so it is read once and dropped when the change feed says the user changed), the
// operator actions on users, and the first admin's bootstrap.
import type { TUserList } from '../../contracts/admin.ts';
import type { TUserResponse } from '../../contracts/auth.ts';
import type { TPageQuery } from '../../contracts/common.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { UserRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Logger } from '../observability/logger.ts';
import { hashPassword } from '../auth/passwords.ts';
import { revokeApiKeys, revokeSessions } from '../auth/queries.ts';
import { findUserById, findUserByUsername, insertUser, listUsersPage, updateUser } from './queries.ts';

export interface AuthUser {
  id: number;
  username: string;
  email: string;
  role: 'user' | 'admin';
  isActive: boolean;
  /** Tokens carrying an older version are dead. */
  tokenVersion: number;
  createdAt: Date;
}

export const toAuthUser = (row: UserRow): AuthUser => ({
  id: row.id,
  username: row.username,
  email: row.email,
  role: row.role,
  isActive: row.isActive,
  tokenVersion: row.tokenVersion,
  createdAt: row.createdAt,
});

export const toUserResponse = (user: AuthUser): TUserResponse => ({
  id: user.id,
  username: user.username,
  email: user.email,
  role: user.role,
  is_active: user.isActive,
  created_at: user.createdAt.toISOString(),
});

/** Entries expire after this even without a notification: a bound, not the mechanism. */
const SAFETY_TTL_MS = 60_000;
const MAX_ENTRIES = 50_000;

/** What start-up did about ADMIN_USERNAME. */
export type AdminBootstrap =
  | { outcome: 'created'; user: AuthUser }
  | { outcome: 'exists'; user: AuthUser }
  /** A user of that name exists but is not an active admin: start-up never promotes or revives. */
  | { outcome: 'left_alone'; user: AuthUser; reason: 'not_admin' | 'deactivated' };

export type Users = ReturnType<typeof createUsers>;

export const createUsers = ({ db, changes, clock }: { db: Db; changes: ChangeFeed; clock: Clock; logger: Logger }) => {
  const cache = new Map<number, { user: AuthUser | null; loadedAt: number }>();
  // Bumped by every forget: a read that started before a change must not cache what it read.
  let epoch = 0;
  const forget = (id?: number) => {
    epoch++;
    if (id === undefined) cache.clear();
    else cache.delete(id);
  };
  changes.subscribe((change) => {
    if (change.kind === 'user') forget(change.id);
    else if (change.kind === 'resync') forget();
  });

  /** The user, or null when there is none; served from memory after the first read. */
  const get = async (id: number): Promise<AuthUser | null> => {
    const hit = cache.get(id);
    if (hit && clock.now().getTime() - hit.loadedAt < SAFETY_TTL_MS) return hit.user;
    const readEpoch = epoch;
    const row = await findUserById(db, id);
    const user = row ? toAuthUser(row) : null;
    if (readEpoch === epoch) {
      if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(id, { user, loadedAt: clock.now().getTime() });
    }
    return user;
  };

  /** The user of that name (any case), or null; for the operator's commands, not cached. */
  const byUsername = async (username: string): Promise<AuthUser | null> => {
    const row = await findUserByUsername(db, username);
    return row ? toAuthUser(row) : null;
  };

  const list = async ({ page }: { page: TPageQuery }): Promise<TUserList> => {
    const { rows, total } = await listUsersPage(db, page);
    return { items: rows.map((row) => toUserResponse(toAuthUser(row))), total, page: page.page, size: page.size };
  };

  /** Deactivation also ends every token and session of the user; reactivation revives none. */
  const setActive = async ({ actor, userId, active, origin }: { actor: AuthUser; userId: number; active: boolean; origin: RequestOrigin }): Promise<AuthUser> => {
    if (!active && userId === actor.id) throw new AppError('CONFLICT', 'An admin cannot deactivate itself');
    const at = clock.now();
    const updated = await db.transaction(async (tx) => {
      const row = await updateUser(tx, userId, { isActive: active, raiseTokenVersion: !active, at });
      if (!row) throw new AppError('NOT_FOUND', 'User not found');
      if (!active) await revokeSessions(tx, { userId, reason: 'deactivated', at });
      if (!active) await revokeApiKeys(tx, { userId, reason: 'deactivated', at });
      await recordAudit(tx, { action: active ? 'admin.user_activate' : 'admin.user_deactivate', actorUserId: actor.id, subjectUserId: userId, origin, at });
      await changes.publish(tx, { kind: 'user', id: userId });
      return toAuthUser(row);
    });
    // Other instances drop their copy on the notification; this one must not wait for its own.
    forget(userId);
    return updated;
  };

  const refuseTakenEmail = (email: string) => (error: unknown): never => {
    if (isUniqueViolation(error)) throw new AppError('CONFLICT', `The e-mail ${email} belongs to another user`);
    throw error;
  };

  /**
   * Start-up's ADMIN_USERNAME: creates that admin when no such user exists. An existing user is
   * left as it is (never promoted or reactivated behind an operator's back); the caller logs why.
   */
  const bootstrapAdmin = async ({ username, password, email }: { username: string; password: string; email: string }): Promise<AdminBootstrap> => {
    const existing = await findUserByUsername(db, username);
    if (existing) {
      const user = toAuthUser(existing);
      if (user.role !== 'admin') return { outcome: 'left_alone', user, reason: 'not_admin' };
      if (!user.isActive) return { outcome: 'left_alone', user, reason: 'deactivated' };
      return { outcome: 'exists', user };
    }
    const passwordHash = await hashPassword(password);
    const at = clock.now();
    const user = await db
      .transaction(async (tx) => {
        const row = await insertUser(tx, { username, email, passwordHash, role: 'admin', at });
        await recordAudit(tx, { action: 'admin.bootstrap_create', subjectUserId: row.id, data: { via: 'startup' }, at });
        return toAuthUser(row);
      })
      .catch(refuseTakenEmail(email));
    return { outcome: 'created', user };
  };

  /**
   * The operator's explicit `users create-admin`: creates the admin, or promotes and reactivates
   * the existing user of that name (its password is left alone).
   */
  const promoteAdmin = async ({ username, password, email }: { username: string; password: string; email: string }): Promise<{ user: AuthUser; created: boolean }> => {
    const passwordHash = await hashPassword(password);
    const at = clock.now();
    const result = await db
      .transaction(async (tx) => {
        const existing = await findUserByUsername(tx, username, { forUpdate: true });
        if (existing) {
          const row = await updateUser(tx, existing.id, { role: 'admin', isActive: true, at });
          await recordAudit(tx, { action: 'admin.promote', subjectUserId: existing.id, data: { via: 'cli', was_role: existing.role, was_active: existing.isActive }, at });
          await changes.publish(tx, { kind: 'user', id: existing.id });
          return { user: toAuthUser(row!), created: false };
        }
        const row = await insertUser(tx, { username, email, passwordHash, role: 'admin', at });
        await recordAudit(tx, { action: 'admin.bootstrap_create', subjectUserId: row.id, data: { via: 'cli' }, at });
        return { user: toAuthUser(row), created: true };
      })
      .catch(refuseTakenEmail(email));
    forget(result.user.id);
    return result;
  };

  return { get, byUsername, forget, list, setActive, bootstrapAdmin, promoteAdmin };
};
