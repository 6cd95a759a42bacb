// The operator overview (GET /api/admin/overview): what an operator on call looks at first —
// the halt and live suspension, users with live enabled, active locks, running bots, today's live
// orders and the newest critical alerts.
import type { TAdminOverview } from '../../contracts/admin.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import { utcDateOf } from '../controls/day-start.ts';
import { listActiveLocks, listLiveEnabled } from '../controls/queries.ts';
import { listLiveOrderCounts, listRecentCriticalAlerts } from './queries.ts';

/** How many critical alerts the overview shows. */
const RECENT_ALERTS = 50;

export type TRunningBot = TAdminOverview['running_bots'][number];

/**
 * The running bots. The bot area is not on this branch: an empty list until it lands, and then
 * this one function reads its table (wired in app.ts through `runningBots`).
 */
export const noRunningBots = (): Promise<TRunningBot[]> => Promise.resolve([]);

export interface OverviewDeps {
  db: Db;
  clock: Clock;
  isHalted: () => boolean;
  isLiveSuspended: () => boolean;
  runningBots: () => Promise<TRunningBot[]>;
}

export const readOverview = async ({ db, clock, isHalted, isLiveSuspended, runningBots }: OverviewDeps): Promise<TAdminOverview> => {
  const at = clock.now();
  const midnight = new Date(`${utcDateOf(at)}T00:00:00.000Z`);
  const [enabled, locks, bots, counts, alerts] = await Promise.all([
    listLiveEnabled(db),
    listActiveLocks(db, { at }),
    runningBots(),
    listLiveOrderCounts(db, { since: midnight }),
    listRecentCriticalAlerts(db, { limit: RECENT_ALERTS }),
  ]);
  return {
    as_of: at.toISOString(),
    halted: isHalted(),
    live_suspended: isLiveSuspended(),
    live_enabled: enabled.map((row) => ({ user_id: row.userId, username: row.username, asset_class: row.assetClass, first_live_order_at: row.firstLiveOrderAt?.toISOString() ?? null })),
    active_locks: locks.map((row) => ({ user_id: row.userId, username: row.username, asset_class: row.assetClass, locked_until: row.lockedUntil.toISOString(), reason: row.reason })),
    running_bots: bots,
    live_orders_today: counts.map((row) => ({ user_id: row.userId, asset_class: row.assetClass, count: row.count })),
    critical_alerts: alerts.map((row) => ({ id: row.id, user_id: row.userId, asset_class: row.assetClass, day: row.day, kind: row.kind, title: row.title, at: row.createdAt.toISOString() })),
  };
};
