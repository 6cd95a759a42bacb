// SQL on the shared outbound request budgets (broker_request_budgets): take tokens, give unused
// ones back, pause a budget. The only module that knows the table.
//
// Time is the caller's (its injected clock), as for the leases. Instances' clocks differ a little:
// `refilled_at` never moves back, so a clock s ms ahead refills the bucket early by s ms once
// (at most rate x s tokens, and never past the burst), not on every take.
import { eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { brokerRequestBudgets as budgets } from '../../db/schema/index.ts';

/** A budget's shape: every instance passes the same (it comes from the settings). */
export interface BudgetShape {
  /** Tokens added per ms. */
  perMs: number;
  /** The most tokens the bucket holds. */
  burst: number;
}

export interface BudgetTake {
  /** Tokens granted now, 0 to `want`: each one is one request. */
  granted: number;
  /** Tokens left in the bucket as of `refilledAt`. */
  tokens: number;
  refilledAt: Date;
  pausedUntil: Date | null;
}

const timestamp = (at: Date) => sql`${at.toISOString()}::timestamptz`;

/**
 * Takes up to `want` whole tokens, refilling by the time elapsed since the last take first; grants
 * what is there, never more, and nothing during a pause. One upsert: the row's lock serialises
 * the takes of every instance, so no more are granted than the bucket holds.
 */
export const takeFromBudget = async (db: Queryable, { name, want, at, perMs, burst }: BudgetShape & { name: string; want: number; at: Date }): Promise<BudgetTake> => {
  const now = timestamp(at);
  const refilledAt = sql`greatest(${budgets.refilledAt}, ${now})`;
  const elapsedMs = sql`extract(epoch from (${refilledAt} - ${budgets.refilledAt}))::float8 * 1000`;
  const available = sql`least(${burst}::float8, ${budgets.tokens} + ${elapsedMs} * ${perMs}::float8)`;
  // The epsilon keeps float noise (0.9999999999) from withholding a token that is there.
  const granted = sql`case when ${budgets.pausedUntil} > ${now} then 0 else least(${want}::int, floor(${available} + 1e-9)::int) end`;
  const first = Math.min(want, Math.floor(burst));
  const [row] = await db
    .insert(budgets)
    .values({ name, tokens: burst - first, granted: first, refilledAt: at, pausedUntil: null })
    .onConflictDoUpdate({
      target: budgets.name,
      set: {
        tokens: sql`greatest(0, ${available} - ${granted})`,
        granted,
        refilledAt,
      },
    })
    .returning({ granted: budgets.granted, tokens: budgets.tokens, refilledAt: budgets.refilledAt, pausedUntil: budgets.pausedUntil });
  if (!row) throw new Error(`the request budget ${name} was not written`);
  return row;
};

/** Puts tokens an instance took and did not use back, never past the burst. */
export const giveBackToBudget = async (db: Queryable, { name, count, burst }: { name: string; count: number; burst: number }): Promise<void> => {
  await db
    .update(budgets)
    .set({ tokens: sql`least(${burst}::float8, ${budgets.tokens} + ${count}::float8)` })
    .where(eq(budgets.name, name));
};

/**
 * Pauses the budget until `until` for every instance (a broker's 429 Retry-After), and empties
 * it: it refills from nothing once the pause ends. A shorter pause never cuts a longer one.
 */
export const pauseBudget = async (db: Queryable, { name, until }: { name: string; until: Date }): Promise<void> => {
  const end = timestamp(until);
  await db
    .insert(budgets)
    .values({ name, tokens: 0, granted: 0, refilledAt: until, pausedUntil: until })
    .onConflictDoUpdate({
      target: budgets.name,
      set: {
        tokens: 0,
        refilledAt: sql`greatest(${budgets.refilledAt}, ${end})`,
        pausedUntil: sql`greatest(${budgets.pausedUntil}, ${end})`,
      },
    });
};

/** The budget as it stands, for tests and operators. */
export const readBudget = async (db: Queryable, name: string): Promise<typeof budgets.$inferSelect | undefined> =>
  (await db.select().from(budgets).where(eq(budgets.name, name)))[0];
