// Deletes auth rows that can never matter again: refresh tokens past expiry, families with no
// live token left, and failed logins older than the throttle window.
import { and, lt, notExists, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { loginFailures, refreshTokenFamilies, refreshTokens } from '../db/schema/index.ts';

export interface SweepResult {
  refreshTokens: number;
  families: number;
  loginFailures: number;
}

export const sweepExpiredAuthRows = async ({ db, loginWindowMin, now = new Date() }: { db: Db; loginWindowMin: number; now?: Date }): Promise<SweepResult> =>
  db.transaction(async (tx) => {
    const tokens = await tx.delete(refreshTokens).where(lt(refreshTokens.expiresAt, now)).returning({ jti: refreshTokens.jti });
    const families = await tx
      .delete(refreshTokenFamilies)
      .where(
        and(
          lt(refreshTokenFamilies.createdAt, now),
          notExists(tx.select({ one: sql`1` }).from(refreshTokens).where(sql`${refreshTokens.familyId} = ${refreshTokenFamilies.id}`)),
        ),
      )
      .returning({ id: refreshTokenFamilies.id });
    const failures = await tx
      .delete(loginFailures)
      .where(lt(loginFailures.failedAt, new Date(now.getTime() - loginWindowMin * 60_000)))
      .returning({ id: loginFailures.id });
    return { refreshTokens: tokens.length, families: families.length, loginFailures: failures.length };
  });
