// SQL of the portfolio history: an account's day-start snapshots and its flows by day over a
// range. The snapshots and flows are written by the controls (controls/queries.ts); this module
// only reads them, for the views of an account's past.
import { and, asc, between, eq, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { accountFlows, equitySnapshots } from '../db/schema/index.ts';

export interface AccountRange {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  /** The first and last UTC day, 'YYYY-MM-DD', both included. */
  from: string;
  through: string;
}

/** A day-start snapshot: the equity (and cash, where recorded) at the first evaluation of `day`. */
export interface StoredSnapshot {
  day: string;
  equity: string;
  cash: string | null;
}

/** The account's snapshots of the days in the range, oldest first. */
export const readSnapshots = (db: Queryable, { userId, assetClass, mode, from, through }: AccountRange): Promise<StoredSnapshot[]> =>
  db
    .select({ day: equitySnapshots.day, equity: equitySnapshots.equity, cash: equitySnapshots.cash })
    .from(equitySnapshots)
    .where(and(eq(equitySnapshots.userId, userId), eq(equitySnapshots.assetClass, assetClass), eq(equitySnapshots.mode, mode), between(equitySnapshots.day, from, through)))
    .orderBy(asc(equitySnapshots.day));

/** The account's flows summed by day over the range, oldest first. */
export const readFlowsByDay = (db: Queryable, { userId, assetClass, mode, from, through }: AccountRange): Promise<{ day: string; amount: string }[]> =>
  db
    .select({ day: accountFlows.day, amount: sql<string>`sum(${accountFlows.amount})::text` })
    .from(accountFlows)
    .where(and(eq(accountFlows.userId, userId), eq(accountFlows.assetClass, assetClass), eq(accountFlows.mode, mode), between(accountFlows.day, from, through)))
    .groupBy(accountFlows.day)
    .orderBy(asc(accountFlows.day));
