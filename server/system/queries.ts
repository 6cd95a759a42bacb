// SQL on system_state: service-wide values every instance must agree on.
import { eq, sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { systemState } from '../db/schema/index.ts';

export interface StoredState {
  value: Record<string, unknown>;
  version: number;
  updatedAt: Date;
}

export const readState = async (db: Queryable, key: string): Promise<StoredState | undefined> =>
  (await db.select({ value: systemState.value, version: systemState.version, updatedAt: systemState.updatedAt }).from(systemState).where(eq(systemState.key, key)))[0];

/** Writes a value and raises its version in one statement; returns what was stored. */
export const writeState = async (db: Queryable, { key, value, at, by }: { key: string; value: Record<string, unknown>; at: Date; by: string }): Promise<StoredState> => {
  const [row] = await db
    .insert(systemState)
    .values({ key, value, version: 1, updatedAt: at, updatedBy: by })
    .onConflictDoUpdate({ target: systemState.key, set: { value, version: sql`${systemState.version} + 1`, updatedAt: at, updatedBy: by } })
    .returning({ value: systemState.value, version: systemState.version, updatedAt: systemState.updatedAt });
  return row!;
};
