// SQL on the auth tables: refresh-token families and tokens (sessions), the attempt throttles,
// and personal API keys. The only module that knows their columns.
import { and, count, desc, eq, isNull, lt, max, ne, notExists, or, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { apiKeys, authThrottle, refreshTokenFamilies, refreshTokens } from '../db/schema/index.ts';

export const insertSession = async (db: Queryable, { familyId, userId, at }: { familyId: string; userId: number; at: Date }): Promise<void> => {
  await db.insert(refreshTokenFamilies).values({ id: familyId, userId, createdAt: at });
};

export const insertRefreshToken = async (db: Queryable, values: { jti: string; familyId: string; userId: number; at: Date; expiresAt: Date }): Promise<void> => {
  const { at, ...rest } = values;
  await db.insert(refreshTokens).values({ ...rest, issuedAt: at });
};

/** The user's session, locked for the rest of the transaction; undefined when it is not theirs. */
export const lockSession = async (db: Queryable, { familyId, userId }: { familyId: string; userId: number }) =>
  (
    await db
      .select()
      .from(refreshTokenFamilies)
      .where(and(eq(refreshTokenFamilies.id, familyId), eq(refreshTokenFamilies.userId, userId)))
      .for('update')
  )[0];

/** Marks a refresh token used; false when it was already used or does not belong to the session. */
export const claimRefreshToken = async (db: Queryable, { jti, familyId, at }: { jti: string; familyId: string; at: Date }): Promise<boolean> => {
  const claimed = await db
    .update(refreshTokens)
    .set({ usedAt: at })
    .where(and(eq(refreshTokens.jti, jti), eq(refreshTokens.familyId, familyId), isNull(refreshTokens.usedAt)))
    .returning({ jti: refreshTokens.jti });
  return claimed.length > 0;
};

/** Revokes one session of the user, or all of them (but `exceptFamilyId`); the ids it revoked. */
export const revokeSessions = async (
  db: Queryable,
  { userId, familyId, exceptFamilyId, reason, at }: { userId: number; familyId?: string; exceptFamilyId?: string; reason: string; at: Date },
): Promise<string[]> => {
  const revoked = await db
    .update(refreshTokenFamilies)
    .set({ revokedAt: at, revokedReason: reason })
    .where(
      and(
        eq(refreshTokenFamilies.userId, userId),
        familyId === undefined ? undefined : eq(refreshTokenFamilies.id, familyId),
        exceptFamilyId === undefined ? undefined : ne(refreshTokenFamilies.id, exceptFamilyId),
        isNull(refreshTokenFamilies.revokedAt),
      ),
    )
    .returning({ id: refreshTokenFamilies.id });
  return revoked.map((row) => row.id);
};

/**
 * A page of the user's live sessions, the most recently refreshed first: families not revoked
 * whose newest refresh token has not expired. Its newest token's issue time is when the session
 * was last used (each refresh rotates), its expiry when the session ends unless refreshed.
 */
export const listLiveSessions = async (db: Queryable, { userId, at, page, size }: { userId: number; at: Date; page: number; size: number }) => {
  const newest = db
    .select({ familyId: refreshTokens.familyId, lastUsedAt: max(refreshTokens.issuedAt).as('last_used_at'), expiresAt: max(refreshTokens.expiresAt).as('expires_at') })
    .from(refreshTokens)
    .where(eq(refreshTokens.userId, userId))
    .groupBy(refreshTokens.familyId)
    .as('newest');
  // The subquery's column is no table column, so no mapping serialises a Date: the instant goes as text.
  const live = and(eq(refreshTokenFamilies.userId, userId), isNull(refreshTokenFamilies.revokedAt), sql`${newest.expiresAt} > ${at.toISOString()}::timestamptz`);
  const [rows, [counted]] = await Promise.all([
    db
      .select({ id: refreshTokenFamilies.id, createdAt: refreshTokenFamilies.createdAt, lastUsedAt: newest.lastUsedAt, expiresAt: newest.expiresAt })
      .from(refreshTokenFamilies)
      .innerJoin(newest, eq(newest.familyId, refreshTokenFamilies.id))
      .where(live)
      .orderBy(desc(newest.lastUsedAt), desc(refreshTokenFamilies.id))
      .limit(size)
      .offset((page - 1) * size),
    db.select({ total: count() }).from(refreshTokenFamilies).innerJoin(newest, eq(newest.familyId, refreshTokenFamilies.id)).where(live),
  ]);
  return { rows, total: counted?.total ?? 0 };
};

export type ThrottleScope = (typeof authThrottle.$inferSelect)['scope'];
export type ThrottleKey = { scope: ThrottleScope; key: string; address: string };

const throttleRow = ({ scope, key, address }: ThrottleKey) =>
  and(eq(authThrottle.scope, scope), eq(authThrottle.key, key), eq(authThrottle.address, address));

/**
 * Counts one attempt unless the key already holds `max` within the window, in one statement:
 * the upsert takes the row's lock, so parallel attempts are counted one after another and no
 * more than `max` get through. Returns false when the attempt is refused.
 */
export const claimAttempt = async (db: Queryable, { at, windowStart, max, ...key }: ThrottleKey & { at: Date; windowStart: Date; max: number }): Promise<boolean> => {
  // Raw SQL parameters bypass the column mapping: pass instants as text with a cast (postgres.js
  // does not serialise a Date here).
  const stale = sql`${authThrottle.windowStartedAt} < ${windowStart.toISOString()}::timestamptz`;
  const claimed = await db
    .insert(authThrottle)
    .values({ ...key, attempts: 1, windowStartedAt: at })
    .onConflictDoUpdate({
      target: [authThrottle.scope, authThrottle.key, authThrottle.address],
      set: {
        attempts: sql`case when ${stale} then 1 else ${authThrottle.attempts} + 1 end`,
        windowStartedAt: sql`case when ${stale} then ${at.toISOString()}::timestamptz else ${authThrottle.windowStartedAt} end`,
      },
      setWhere: sql`${stale} or ${authThrottle.attempts} < ${max}::integer`,
    })
    .returning({ attempts: authThrottle.attempts });
  return claimed.length > 0;
};

export const throttleWindowStart = async (db: Queryable, key: ThrottleKey): Promise<Date | undefined> =>
  (await db.select({ at: authThrottle.windowStartedAt }).from(authThrottle).where(throttleRow(key)))[0]?.at;

export const clearAttempts = async (db: Queryable, key: ThrottleKey): Promise<void> => {
  await db.delete(authThrottle).where(throttleRow(key));
};

/**
 * Gives back one counted attempt (one that turned out not to be a failure). Should the window
 * have rolled over since it was counted, the new window is one lower: never below zero.
 */
export const releaseAttempt = async (db: Queryable, key: ThrottleKey): Promise<void> => {
  await db
    .update(authThrottle)
    .set({ attempts: sql`${authThrottle.attempts} - 1` })
    .where(and(throttleRow(key), sql`${authThrottle.attempts} > 0`));
};

/**
 * Deletes auth rows that can never matter again; counts what went. Throttle rows go once their
 * window has passed: `registerWindowStart` for registrations, `throttleWindowStart` for the rest.
 */
export const deleteExpiredAuthRows = async (
  db: Queryable,
  { now, throttleWindowStart, registerWindowStart }: { now: Date; throttleWindowStart: Date; registerWindowStart: Date },
) => {
  const tokens = await db.delete(refreshTokens).where(lt(refreshTokens.expiresAt, now)).returning({ jti: refreshTokens.jti });
  const families = await db
    .delete(refreshTokenFamilies)
    .where(
      and(
        lt(refreshTokenFamilies.createdAt, now),
        notExists(db.select({ one: sql`1` }).from(refreshTokens).where(sql`${refreshTokens.familyId} = ${refreshTokenFamilies.id}`)),
      ),
    )
    .returning({ id: refreshTokenFamilies.id });
  const throttles = await db
    .delete(authThrottle)
    .where(
      or(
        and(eq(authThrottle.scope, 'register'), lt(authThrottle.windowStartedAt, registerWindowStart)),
        and(ne(authThrottle.scope, 'register'), lt(authThrottle.windowStartedAt, throttleWindowStart)),
      ),
    )
    .returning({ key: authThrottle.key });
  return { refreshTokens: tokens.length, families: families.length, throttles: throttles.length };
};

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export const insertApiKey = async (db: Queryable, values: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> => (await db.insert(apiKeys).values(values).returning())[0]!;

/** The user's keys still in force (not revoked), newest first. */
export const listApiKeys = (db: Queryable, userId: number): Promise<ApiKeyRow[]> =>
  db.select().from(apiKeys).where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt))).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));

/** The key of this secret's hash, whoever's, revoked or not. */
export const findApiKeyByHash = async (db: Queryable, secretHash: string): Promise<ApiKeyRow | undefined> => (await db.select().from(apiKeys).where(eq(apiKeys.secretHash, secretHash)))[0];

export const findApiKeyById = async (db: Queryable, id: string): Promise<ApiKeyRow | undefined> => (await db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0];

/** Revokes one key of the user (or all of them); the ids it revoked (none for another user's or a revoked one). */
export const revokeApiKeys = async (db: Queryable, { userId, id, reason, at }: { userId: number; id?: string; reason: string; at: Date }): Promise<string[]> =>
  (
    await db
      .update(apiKeys)
      .set({ revokedAt: at, revokedReason: reason })
      .where(and(eq(apiKeys.userId, userId), id === undefined ? undefined : eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id })
  ).map((row) => row.id);

/** Notes a key's use, unless it was noted within the last minute (a write at most once a minute per key). */
export const touchApiKey = async (db: Queryable, { id, at }: { id: string; at: Date }): Promise<void> => {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, new Date(at.getTime() - 60_000)))));
};
