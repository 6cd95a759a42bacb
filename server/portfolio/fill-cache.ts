// Each user's fills kept in memory between reads of its past: a year of an active account's fills
// is read by every performance and ledger request, and fills are only ever added. Each read first
// takes the user's count of fills and greatest id (one read of the primary key): unchanged, the
// kept fills are the answer; grown by rows above the greatest id only, those are read and added;
// any other difference (a fill whose transaction committed after a higher id was read, from this
// instance or another) reads them all again. A bounded number of users is kept, least recently
// read first out, and a user with more fills than `maxFills` is read each time and not kept (the
// memory stays bounded at about users × maxFills rows).
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { readUserFills, userFillStamp, type AccountFill, type UserFill } from './queries.ts';

interface Kept {
  count: number;
  maxId: number;
  fills: UserFill[];
}

const byTime = (a: UserFill, b: UserFill) => a.at.getTime() - b.at.getTime() || a.id - b.id;

export type AccountFills = (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode; before: Date }) => Promise<AccountFill[]>;

export const createFillCache = (db: Queryable, { users = 64, maxFills = 50_000 }: { users?: number; maxFills?: number } = {}): AccountFills => {
  const kept = new Map<number, Kept>();

  const fresh = async (userId: number): Promise<Kept> => {
    const fills = await readUserFills(db, { userId });
    return { count: fills.length, maxId: fills.reduce((max, fill) => Math.max(max, fill.id), Number.MIN_SAFE_INTEGER), fills };
  };

  const current = async (userId: number): Promise<Kept> => {
    const stamp = await userFillStamp(db, userId);
    const entry = kept.get(userId);
    if (entry && entry.count === stamp.count && entry.maxId === stamp.maxId) return entry;
    if (entry && stamp.count > entry.count && stamp.maxId > entry.maxId) {
      const added = await readUserFills(db, { userId, afterId: entry.maxId });
      // Exactly the rows the stamp counted: nothing committed below the greatest id meanwhile.
      if (entry.count + added.length === stamp.count) {
        return { count: stamp.count, maxId: added.reduce((max, fill) => Math.max(max, fill.id), entry.maxId), fills: [...entry.fills, ...added].sort(byTime) };
      }
    }
    return fresh(userId);
  };

  return async ({ userId, assetClass, mode, before }) => {
    const entry = await current(userId);
    kept.delete(userId);
    if (entry.count <= maxFills) kept.set(userId, entry);
    for (const oldest of kept.keys()) {
      if (kept.size <= users) break;
      kept.delete(oldest);
    }
    const live = mode === 'live';
    const end = before.getTime();
    return entry.fills.filter((fill) => fill.assetClass === assetClass && fill.live === live && fill.at.getTime() < end);
  };
};
