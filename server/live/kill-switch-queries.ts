// SQL of the kill switch: the day-start snapshots and the accounts at or past the warning line
// in one statement, the once-a-day critical alert rows, and the lock written with them.
import { sql } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import { rowsOf, type Queryable } from '../db/client.ts';
import { criticalAlerts, equitySnapshots } from '../db/schema/index.ts';

export interface AccountEquity {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  equity: string;
}

export interface LosingAccount extends AccountEquity {
  dayStartEquity: string;
}

/**
 * Takes today's day-start snapshot of every account that has none yet (this evaluation is its
 * first of the UTC day), and returns the accounts whose equity is `warnPct` % or more below their
 * snapshot. One statement, whatever the number of accounts: the equities travel as one JSON
 * parameter. An account whose snapshot is taken now is at 0 % and never returned.
 */
export const snapshotAndFindLosses = async (db: Queryable, { accounts, day, at, warnPct }: { accounts: AccountEquity[]; day: string; at: Date; warnPct: string }): Promise<LosingAccount[]> => {
  if (accounts.length === 0) return [];
  const json = JSON.stringify(accounts.map((account) => ({ user_id: account.userId, asset_class: account.assetClass, mode: account.mode, equity: account.equity })));
  const rows = await rowsOf<{ user_id: number; asset_class: TAssetClass; mode: TTradingMode; equity: string; start: string }>(
    db,
    sql`with now_equity as (select * from jsonb_to_recordset(${json}::jsonb) as e(user_id integer, asset_class text, mode text, equity numeric)),
      taken as (
        insert into ${equitySnapshots} (user_id, asset_class, mode, day, equity, taken_at)
        select user_id, asset_class, mode, ${day}::date, equity, ${at.toISOString()}::timestamptz from now_equity
        on conflict do nothing
      )
      select e.user_id, e.asset_class, e.mode, e.equity::text as equity, s.equity::text as start
      from now_equity e
      join ${equitySnapshots} s on s.user_id = e.user_id and s.asset_class = e.asset_class and s.mode = e.mode and s.day = ${day}::date
      where s.equity > 0 and (e.equity - s.equity) / s.equity * 100 <= -(${warnPct}::numeric)`,
  );
  return rows.map((row) => ({ userId: row.user_id, assetClass: row.asset_class, mode: row.mode, equity: row.equity, dayStartEquity: row.start }));
};

export type TCriticalKind = 'daily_loss_warning' | 'kill_switch_lock';

/**
 * Records a critical alert unless this user, asset class, day and kind has one: true only for the
 * one call that wrote it (the unique key decides between instances).
 */
export const recordCriticalAlert = async (
  db: Queryable,
  values: { userId: number; assetClass: TAssetClass; day: string; kind: TCriticalKind; title: string; data: Record<string, unknown>; at: Date },
): Promise<boolean> =>
  (
    await db
      .insert(criticalAlerts)
      .values({ userId: values.userId, assetClass: values.assetClass, day: values.day, kind: values.kind, title: values.title, data: values.data, createdAt: values.at })
      .onConflictDoNothing()
      .returning({ id: criticalAlerts.id })
  ).length > 0;
