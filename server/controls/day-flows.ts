// Today's flows of each account (the equity its paper resets added or removed), as the daily P&L
// subtracts them. Only a reset makes a flow, and a reset moves the account's `resetAt`, which the
// broker answers with the equity: so an account not reset today has no flows and costs no read,
// and the flows read once for a reset stay right until the next reset shows in an equity read.
// Reading them up to that `resetAt` keeps them matched with the equity they are judged with.
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { utcDateOf } from './day-start.ts';
import { dayFlowsThrough } from './queries.ts';

export interface DayFlowsQuery {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  /** The UTC day, 'YYYY-MM-DD'. */
  day: string;
  /** The account's last reset as its broker answered with the equity (none: never reset). */
  resetAt: Date | null | undefined;
}

export interface DayFlows {
  (query: DayFlowsQuery): Promise<string>;
  /** The flows kept here for the account's last reset (none to keep: '0'), else undefined: what asking would read nothing for. */
  kept(query: DayFlowsQuery): Promise<string> | undefined;
}

const resetOn = (resetAt: Date | null | undefined, day: string): resetAt is Date => !!resetAt && utcDateOf(resetAt) === day;

/** The account's flows of the day, read each time (a view of the account, not the order path). */
export const readDayFlows = async (db: Queryable, query: DayFlowsQuery): Promise<string> =>
  resetOn(query.resetAt, query.day) ? dayFlowsThrough(db, { ...query, through: query.resetAt }) : '0';

/** readDayFlows kept in memory per account until its next reset (the order gates, the kill switch). */
export const createDayFlows = (db: Queryable): DayFlows => {
  let day = '';
  const known = new Map<string, { resetAtMs: number; total: Promise<string> }>();
  const keyOf = (query: DayFlowsQuery) => `${query.userId}:${query.assetClass}:${query.mode}`;
  const kept = (query: DayFlowsQuery): Promise<string> | undefined => {
    const { resetAt } = query;
    if (!resetOn(resetAt, query.day)) return Promise.resolve('0');
    const cached = query.day === day ? known.get(keyOf(query)) : undefined;
    return cached?.resetAtMs === resetAt.getTime() ? cached.total : undefined;
  };
  const flows = (query: DayFlowsQuery) => {
    const { resetAt } = query;
    if (!resetOn(resetAt, query.day)) return Promise.resolve('0');
    if (query.day !== day) {
      day = query.day;
      known.clear();
    }
    const key = keyOf(query);
    const cached = known.get(key);
    if (cached?.resetAtMs === resetAt.getTime()) return cached.total;
    const entry = { resetAtMs: resetAt.getTime(), total: dayFlowsThrough(db, { ...query, through: resetAt }) };
    known.set(key, entry);
    entry.total.catch(() => {
      if (known.get(key) === entry) known.delete(key);
    });
    return entry.total;
  };
  return Object.assign(flows, { kept });
};
