// Deletes auth rows that can never matter again: refresh tokens past expiry, sessions with no
// live token left, and throttle counters whose window has ended.
import type { Db } from '../db/client.ts';
import { deleteExpiredAuthRows } from '../auth/queries.ts';
import { REGISTER_WINDOW_MS } from '../auth/throttle.ts';

export type SweepResult = Awaited<ReturnType<typeof deleteExpiredAuthRows>>;

export const sweepExpiredAuthRows = ({ db, loginWindowMin, now }: { db: Db; loginWindowMin: number; now: Date }): Promise<SweepResult> =>
  db.transaction((tx) =>
    deleteExpiredAuthRows(tx, {
      now,
      throttleWindowStart: new Date(now.getTime() - loginWindowMin * 60_000),
      registerWindowStart: new Date(now.getTime() - REGISTER_WINDOW_MS),
    }),
  );
