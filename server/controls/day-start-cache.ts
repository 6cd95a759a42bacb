// The day-start equity of each account, as stored in equity_snapshots, kept in memory once read:
// a stored snapshot never changes during its day, so each account costs the database one write
// and one read per UTC day and instance instead of two statements per order. Today's flows come
// beside it (day-flows.ts: read only for an account reset today, once per reset).
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Db, Queryable } from '../db/client.ts';
import { createDayFlows, readDayFlows } from './day-flows.ts';
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

/** An account's UTC day: what a kept snapshot is known by. */
type AccountDay = Pick<DayStartQuery, 'userId' | 'assetClass' | 'mode' | 'day'>;

export interface DayStartEquity {
  /**
   * The account's day-start equity and today's flows. `inTransaction`: a transaction to read
   * what is not kept here through (inside one, a read on another connection could wait for it);
   * what it reads is not kept, since the transaction may yet roll back.
   */
  (query: DayStartQuery, inTransaction?: Queryable): Promise<DayStart>;
  /** Whether the account's day-start equity of `day` is kept here: asking for it reads nothing unless its flows are new. */
  knows(query: AccountDay): boolean;
}

export const createDayStartEquity = (db: Db): DayStartEquity => {
  const flowsOf = createDayFlows(db);
  const snapshots = createSnapshots(db);
  const dayStart = async (query: DayStartQuery, inTransaction?: Queryable): Promise<DayStart> => {
    const kept = snapshots.kept(query);
    const [equity, flows] = inTransaction
      ? await Promise.all([kept ?? dayStartEquity(inTransaction, query), flowsOf.kept(query) ?? readDayFlows(inTransaction, query)])
      : await Promise.all([kept ?? snapshots.read(query), flowsOf(query)]);
    return { equity, flows };
  };
  return Object.assign(dayStart, { knows: (query: AccountDay) => snapshots.kept(query) !== undefined });
};

const keyOf = (query: Pick<DayStartQuery, 'userId' | 'assetClass' | 'mode'>) => `${query.userId}:${query.assetClass}:${query.mode}`;

const createSnapshots = (db: Db) => {
  let day = '';
  const known = new Map<string, Promise<string>>();
  /** The snapshot of the account's day kept here, if any. */
  const kept = (query: AccountDay): Promise<string> | undefined => (query.day === day ? known.get(keyOf(query)) : undefined);
  /** Takes (or reads) the snapshot and keeps it. */
  const read = (query: DayStartQuery): Promise<string> => {
    // Only today's snapshots are kept: the map empties when the UTC day turns.
    if (query.day !== day) {
      day = query.day;
      known.clear();
    }
    const key = keyOf(query);
    const cached = known.get(key);
    if (cached) return cached;
    const taken = dayStartEquity(db, query);
    known.set(key, taken);
    taken.catch(() => {
      if (known.get(key) === taken) known.delete(key);
    });
    return taken;
  };
  return { kept, read };
};
