// SQL of the leases: a named lease held by one instance at a time until it expires, renewed by
// its holder (the simulator's price walk, the bot runner, a KIS token's refresh). Shared by those
// areas, so it lives below them.
import { and, eq, lte, or, sql } from 'drizzle-orm';
import type { Queryable } from './client.ts';
import { leases } from './schema/index.ts';

/**
 * Takes the lease, or renews it for its holder, until `now + ttlMs`; true when `holder` holds it
 * afterwards. A lease another holder let expire (it stopped renewing: it died) is taken over.
 * Instants come from the caller's clock, not the database's, so a test can move time.
 */
export const takeLease = async (db: Queryable, { name, holder, now, ttlMs }: { name: string; holder: string; now: Date; ttlMs: number }): Promise<boolean> => {
  const expiresAt = new Date(now.getTime() + ttlMs);
  const rows = await db
    .insert(leases)
    .values({ name, holder, expiresAt })
    .onConflictDoUpdate({
      target: leases.name,
      set: { holder, expiresAt },
      setWhere: or(eq(leases.holder, holder), lte(leases.expiresAt, sql`${now.toISOString()}::timestamptz`)),
    })
    .returning({ holder: leases.holder });
  return rows[0]?.holder === holder;
};

/** Gives the lease up at once (a clean stop), so another instance need not wait for it to expire. */
export const releaseLease = async (db: Queryable, { name, holder }: { name: string; holder: string }): Promise<void> => {
  await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
};

export const findLease = async (db: Queryable, name: string): Promise<{ holder: string; expiresAt: Date } | undefined> =>
  (await db.select({ holder: leases.holder, expiresAt: leases.expiresAt }).from(leases).where(eq(leases.name, name)))[0];
