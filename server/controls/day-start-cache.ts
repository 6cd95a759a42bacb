// The day-start equity of each account, as stored in equity_snapshots, kept in memory once read:
// a stored snapshot never changes during its day, so each account costs the database one write
// and one read per UTC day and instance instead of two statements per order. Today's flows come
// beside it (day-flows.ts: read only for an account reset today, once per reset).
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Db } from '../db/client.ts';
import { createDayFlows } from './day-flows.ts';
import { dayStartEquity } from './queries.ts';

export interface DayStartQuery {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  /** The UTC day, 'YYYY-MM-DD'. */
  day: string;
  /** The account's equity now: the snapshot when this is the day's first evaluation anywhere. */
  equity: string;
  /** The cash part of `equity`, stored with the snapshot (the portfolio history's points show it). */
  cash?: string | undefined;
  at: Date;
  /** The account's last reset, as its broker answered with `equity`. */
  resetAt: Date | null | undefined;
}

/** The account's day-start equity snapshot and today's flows, exact decimal text. */
export interface DayStart {
  equity: string;
  flows: string;
}

export type DayStartEquity = (query: DayStartQuery) => Promise<DayStart>;

export const createDayStartEquity = (db: Db): DayStartEquity => {
  const flowsOf = createDayFlows(db);
  const snapshotOf = createSnapshots(db);
  return async (query) => {
    const [equity, flows] = await Promise.all([snapshotOf(query), flowsOf(query)]);
    return { equity, flows };
  };
};

const createSnapshots = (db: Db) => {
  let day = '';
  const known = new Map<string, Promise<string>>();
  return (query: DayStartQuery): Promise<string> => {
    // Only today's snapshots are kept: the map empties when the UTC day turns.
    if (query.day !== day) {
      day = query.day;
      known.clear();
    }
    const key = `${query.userId}:${query.assetClass}:${query.mode}`;
    const cached = known.get(key);
    if (cached) return cached;
    const read = dayStartEquity(db, query);
    known.set(key, read);
    read.catch(() => {
      if (known.get(key) === read) known.delete(key);
    });
    return read;
  };
};
