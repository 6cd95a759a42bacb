// Users as the rest of the service sees them: a cached lookup by id (every authenticated request
// needs it) that the change feed invalidates, and the wire mapping.
import { eq } from 'drizzle-orm';
import type { TUserResponse } from '../../contracts/auth.ts';
import type { Db } from '../db/client.ts';
import { users, type UserRow } from '../db/schema/index.ts';
import type { ChangeFeed } from '../events/changes.ts';

export interface AuthUser {
  id: number;
  username: string;
  email: string;
  role: 'user' | 'admin';
  isActive: boolean;
  createdAt: Date;
}

export const toAuthUser = (row: UserRow): AuthUser => ({
  id: row.id,
  username: row.username,
  email: row.email,
  role: row.role,
  isActive: row.isActive,
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

export interface UserDirectory {
  /** The user, or null when there is none; served from memory after the first read. */
  get(id: number): Promise<AuthUser | null>;
  forget(id: number): void;
}

/** Entries expire after this even without a notification: a bound, not the mechanism. */
const SAFETY_TTL_MS = 60_000;
const MAX_ENTRIES = 50_000;

export const createUserDirectory = ({ db, changes }: { db: Db; changes: ChangeFeed }): UserDirectory => {
  const cache = new Map<number, { user: AuthUser | null; loadedAt: number }>();
  // Bumped by every forget: a read that started before a change must not cache what it read.
  let epoch = 0;
  const forget = (id: number) => {
    epoch++;
    cache.delete(id);
  };
  changes.subscribe((change) => {
    if (change.kind === 'user') forget(change.id);
  });
  return {
    forget,
    get: async (id) => {
      const hit = cache.get(id);
      if (hit && Date.now() - hit.loadedAt < SAFETY_TTL_MS) return hit.user;
      const readEpoch = epoch;
      const [row] = await db.select().from(users).where(eq(users.id, id));
      const user = row ? toAuthUser(row) : null;
      if (readEpoch === epoch) {
        if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(id, { user, loadedAt: Date.now() });
      }
      return user;
    },
  };
};
