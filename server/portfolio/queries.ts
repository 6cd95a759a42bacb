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

/**
 * Every fill of the account before `before` (an instant), oldest first: the lots a later sell
 * closes may have been bought before any range asked for. A year of an active account's fills is
 * read on every performance request: the rows come as plain text and epoch milliseconds, with no
 * per-row mapping of the query builder's and no date text to parse.
 */
export const readAccountFills = async (db: Queryable, { userId, assetClass, mode, before }: { userId: number; assetClass: TAssetClass; mode: TTradingMode; before: Date }): Promise<AccountFill[]> => {
  const rows = await rowsOf<{ symbol: string; side: 'buy' | 'sell'; client_order_id: string; qty: string; price: string; fee: string; tax: string; at_ms: number }>(
    db,
    sql`select o.symbol, o.side, f.client_order_id, f.qty::text as qty, f.price::text as price, f.fee::text as fee, f.tax::text as tax,
        (extract(epoch from f.at) * 1000)::float8 as at_ms
      from ${orderFills} f join ${orders} o on o.user_id = f.user_id and o.client_order_id = f.client_order_id
      where f.user_id = ${userId} and o.asset_class = ${assetClass} and o.live = ${mode === 'live'} and f.at < ${before.toISOString()}::timestamptz
      order by f.at, f.id`,
  );
  return rows.map((row) => ({ symbol: row.symbol, side: row.side, clientOrderId: row.client_order_id, qty: row.qty, price: row.price, fee: row.fee, tax: row.tax, at: new Date(row.at_ms) }));
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
