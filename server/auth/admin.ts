// Operator actions on users, and the first admin's bootstrap (start-up and CLI).
import { count, desc, eq, sql } from 'drizzle-orm';
import type { TUserList } from '../../contracts/admin.ts';
import type { TPageQuery } from '../../contracts/common.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import { ConfigError } from '../config.ts';
import type { Db } from '../db/client.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { refreshTokenFamilies, users } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { ChangeFeed } from '../events/changes.ts';
import { hashPassword } from './passwords.ts';
import { toAuthUser, toUserResponse, type AuthUser, type UserDirectory } from './users.ts';

export const listUsers = async ({ db, page }: { db: Db; page: TPageQuery }): Promise<TUserList> => {
  const rows = await db
    .select()
    .from(users)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(page.size)
    .offset((page.page - 1) * page.size);
  const [total] = await db.select({ n: count() }).from(users);
  return { items: rows.map((row) => toUserResponse(toAuthUser(row))), total: total?.n ?? 0, page: page.page, size: page.size };
};

export const setUserActive = async (opts: {
  db: Db;
  changes: ChangeFeed;
  users: UserDirectory;
  actor: AuthUser;
  userId: number;
  active: boolean;
  origin: RequestOrigin;
}): Promise<AuthUser> => {
  const { db, changes, users: directory, actor, userId, active, origin } = opts;
  if (!active && userId === actor.id) throw new AppError('CONFLICT', 'An admin cannot deactivate itself');
  const updated = await db.transaction(async (tx) => {
    const [row] = await tx.update(users).set({ isActive: active, updatedAt: new Date() }).where(eq(users.id, userId)).returning();
    if (!row) throw new AppError('NOT_FOUND', 'User not found');
    if (!active) {
      await tx
        .update(refreshTokenFamilies)
        .set({ revokedAt: new Date(), revokedReason: 'deactivated' })
        .where(sql`${refreshTokenFamilies.userId} = ${userId} and ${refreshTokenFamilies.revokedAt} is null`);
    }
    await recordAudit(tx, { action: active ? 'admin.user_activate' : 'admin.user_deactivate', actorUserId: actor.id, subjectUserId: userId, origin });
    await changes.publish(tx, { kind: 'user', id: userId });
    return toAuthUser(row);
  });
  // Other instances drop their copy on the notification; this one must not wait for its own.
  directory.forget(userId);
  return updated;
};

/** Creates the user with role admin, or promotes the existing one (its password is left alone). */
export const ensureAdmin = async (opts: {
  db: Db;
  changes: ChangeFeed;
  username: string;
  password: string;
  email: string;
  via: 'startup' | 'cli';
}): Promise<{ user: AuthUser; created: boolean }> => {
  const { db, changes, username, password, email, via } = opts;
  const passwordHash = await hashPassword(password);
  try {
    return await createOrPromoteAdmin({ db, changes, username, email, passwordHash, via });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConfigError('ADMIN_EMAIL', `${email} belongs to another user; choose another address`);
    throw error;
  }
};

const createOrPromoteAdmin = ({ db, changes, username, email, passwordHash, via }: {
  db: Db;
  changes: ChangeFeed;
  username: string;
  email: string;
  passwordHash: string;
  via: 'startup' | 'cli';
}): Promise<{ user: AuthUser; created: boolean }> =>
  db.transaction(async (tx) => {
    const [existing] = await tx.select().from(users).where(sql`lower(${users.username}) = ${username.toLowerCase()}`).for('update');
    if (existing) {
      const [row] = await tx.update(users).set({ role: 'admin', isActive: true, updatedAt: new Date() }).where(eq(users.id, existing.id)).returning();
      if (existing.role !== 'admin' || !existing.isActive) {
        await recordAudit(tx, { action: 'admin.bootstrap_promote', subjectUserId: existing.id, data: { via } });
        await changes.publish(tx, { kind: 'user', id: existing.id });
      }
      return { user: toAuthUser(row!), created: false };
    }
    const [row] = await tx.insert(users).values({ username, email, passwordHash, role: 'admin' }).returning();
    await recordAudit(tx, { action: 'admin.bootstrap_create', subjectUserId: row!.id, data: { via } });
    return { user: toAuthUser(row!), created: true };
  });
