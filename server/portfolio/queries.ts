// SQL of an account's past: its day-start snapshots and its flows by day over a range, and its
// fills. The snapshots and flows are written by the controls (controls/queries.ts), the fills by
// the order service; this module only reads them, for the views of an account's past.
import { and, asc, between, eq, lt, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { rowsOf, type Queryable } from '../db/client.ts';
import { accountFlows, equitySnapshots, orderFills, orders } from '../db/schema/index.ts';

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

/** A fill of the account as the ledger reads it: which order side, and its exact amounts. */
export interface AccountFill {
  symbol: string;
  side: 'buy' | 'sell';
  clientOrderId: string;
  qty: string;
  price: string;
  fee: string;
  tax: string;
  at: Date;
}

/** A fill of the user as the cache keeps it: with its account and its id. */
export interface UserFill extends AccountFill {
  id: number;
  assetClass: TAssetClass;
  live: boolean;
}

/**
 * The user's fills of every account (with an id above `afterId`, when given), oldest first: what
 * the fill cache (fill-cache.ts) reads when a user's fills changed.
 */
export const readUserFills = async (db: Queryable, { userId, afterId }: { userId: number; afterId?: number | undefined }): Promise<UserFill[]> => {
  const rows = await rowsOf<{ id: string; asset_class: TAssetClass; live: boolean; symbol: string; side: 'buy' | 'sell'; client_order_id: string; qty: string; price: string; fee: string; tax: string; at_ms: number }>(
    db,
    sql`select f.id::text as id, o.asset_class, o.live, o.symbol, o.side, f.client_order_id, f.qty::text as qty, f.price::text as price, f.fee::text as fee,
        f.tax::text as tax, (extract(epoch from f.at) * 1000)::float8 as at_ms
      from ${orderFills} f join ${orders} o on o.user_id = f.user_id and o.client_order_id = f.client_order_id
      where f.user_id = ${userId} ${afterId === undefined ? sql`` : sql`and f.id > ${afterId}`}
      order by f.at, f.id`,
  );
  return rows.map((row) => ({
    id: Number(row.id),
    assetClass: row.asset_class,
    live: row.live,
    symbol: row.symbol,
    side: row.side,
    clientOrderId: row.client_order_id,
    qty: row.qty,
    price: row.price,
    fee: row.fee,
    tax: row.tax,
    at: new Date(row.at_ms),
  }));
};

/** How many fills the user has and the greatest id among them (MIN_SAFE_INTEGER for none): one read of the primary key. */
export const userFillStamp = async (db: Queryable, userId: number): Promise<{ count: number; maxId: number }> => {
  const [row] = await rowsOf<{ count: number; max_id: string | null }>(db, sql`select count(*)::integer as count, max(id)::text as max_id from ${orderFills} where user_id = ${userId}`);
  return { count: row?.count ?? 0, maxId: row?.max_id == null ? Number.MIN_SAFE_INTEGER : Number(row.max_id) };
};

/** When the account was reset (its flows of kind `reset`) before `before`, oldest first: each removed every position. */
export const readResets = async (db: Queryable, { userId, assetClass, mode, before }: { userId: number; assetClass: TAssetClass; mode: TTradingMode; before: Date }): Promise<Date[]> =>
  (
    await db
      .select({ at: accountFlows.at })
      .from(accountFlows)
      .where(and(eq(accountFlows.userId, userId), eq(accountFlows.assetClass, assetClass), eq(accountFlows.mode, mode), eq(accountFlows.kind, 'reset'), lt(accountFlows.at, before)))
      .orderBy(asc(accountFlows.at))
  ).map((row) => row.at);

/** The account's flows in the range's days, oldest first. */
export const readFlows = (db: Queryable, { userId, assetClass, mode, from, through }: AccountRange) =>
  db
    .select({ at: accountFlows.at, kind: accountFlows.kind, amount: accountFlows.amount, equityBefore: accountFlows.equityBefore, equityAfter: accountFlows.equityAfter })
    .from(accountFlows)
    .where(and(eq(accountFlows.userId, userId), eq(accountFlows.assetClass, assetClass), eq(accountFlows.mode, mode), between(accountFlows.day, from, through)))
    .orderBy(asc(accountFlows.at), asc(accountFlows.id));
