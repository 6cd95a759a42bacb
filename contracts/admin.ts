// Wire shapes of the operator routes under /api/admin.
import { z } from 'zod';
import { bodyBoolean, intParam, pageOf, ZPageQuery, ZTimestamp, ZUserIdPath } from './common.ts';
import { ZUserResponse } from './auth.ts';
import { ZBotStatus } from './bot.ts';
import { ZLiveAccountStatus } from './live.ts';

export const ZUserListQuery = ZPageQuery;
export const ZUserList = pageOf(ZUserResponse);
export type TUserList = z.infer<typeof ZUserList>;

export { ZUserIdPath };

export const ZHaltRequest = z.object({ halted: bodyBoolean() });
export const ZHaltState = z.object({
  halted: z.boolean(),
  updated_at: ZTimestamp.nullable(),
});
export type THaltState = z.infer<typeof ZHaltState>;

/** POST /api/admin/live/suspend: every live order answers 503 FEATURE_DISABLED while suspended. */
export const ZLiveSuspendRequest = z.object({ suspended: bodyBoolean() });
export const ZLiveSuspendState = z.object({
  suspended: z.boolean(),
  updated_at: ZTimestamp.nullable(),
});
export type TLiveSuspendState = z.infer<typeof ZLiveSuspendState>;

const ZOverviewAssetClass = z.enum(['crypto', 'us_equity', 'kr_equity']);

/** GET /api/admin/overview: what an operator on call looks at first. */
export const ZAdminOverview = z.object({
  as_of: ZTimestamp,
  halted: z.boolean(),
  live_suspended: z.boolean(),
  live_enabled: z.array(z.object({ user_id: z.number().int(), username: z.string(), asset_class: ZOverviewAssetClass, first_live_order_at: ZTimestamp.nullable() })),
  active_locks: z.array(z.object({ user_id: z.number().int(), username: z.string(), asset_class: ZOverviewAssetClass, locked_until: ZTimestamp, reason: z.string() })),
  running_bots: z.array(z.object({ user_id: z.number().int(), asset_class: ZOverviewAssetClass, strategy_name: z.string(), live_mode: z.boolean(), started_at: ZTimestamp })),
  /** Live orders counted today (UTC) toward the daily limit, per user and asset class. */
  live_orders_today: z.array(z.object({ user_id: z.number().int(), asset_class: ZOverviewAssetClass, count: z.number().int() })),
  /** The newest critical alerts of the kill switch, newest first (at most 50). */
  critical_alerts: z.array(z.object({ id: z.number().int(), user_id: z.number().int(), asset_class: ZOverviewAssetClass, day: z.string(), kind: z.string(), title: z.string(), at: ZTimestamp })),
});
export type TAdminOverview = z.infer<typeof ZAdminOverview>;

/** An account's live state as an operator sees it: the user's view plus why a lock holds. */
export const ZAdminLiveAccount = ZLiveAccountStatus.extend({
  /** The kill switch's reason for the active lock; null when none holds. */
  lock_reason: z.string().nullable(),
});

/**
 * GET /api/admin/users/{user_id}: the user as the user list shows it, its live trading per asset class
 * (flag, first live order, lock, today's live orders against the daily limit), and its bot as
 * GET /api/bot/status shows it (null when it never started one).
 */
export const ZAdminUserDetail = ZUserResponse.extend({
  live: z.object({ crypto: ZAdminLiveAccount, us_equity: ZAdminLiveAccount, kr_equity: ZAdminLiveAccount }),
  bot: ZBotStatus.nullable(),
});
export type TAdminUserDetail = z.infer<typeof ZAdminUserDetail>;

/** The kill switch's critical alerts: the daily loss at −4 % (a warning) and at −5 % (the lock). */
export const ZCriticalAlertKind = z.enum(['daily_loss_warning', 'kill_switch_lock']);
export type TCriticalAlertKind = z.infer<typeof ZCriticalAlertKind>;

/** GET /api/admin/alerts: every user's critical alerts, or one user's, of one kind or both. */
export const ZCriticalAlertListQuery = ZPageQuery.extend({
  user_id: intParam({ min: 1, max: 2_147_483_647 }).optional(),
  kind: ZCriticalAlertKind.optional(),
});
export type TCriticalAlertListQuery = z.infer<typeof ZCriticalAlertListQuery>;

export const ZCriticalAlert = z.object({
  id: z.number().int(),
  user_id: z.number().int(),
  asset_class: ZOverviewAssetClass,
  /** The UTC day the alert counts for (one per user, asset class, day and kind). */
  day: z.string().meta({ format: 'date' }),
  kind: ZCriticalAlertKind,
  title: z.string(),
  /** What the kill switch measured: mode, pnl_pct (percent, 2 places), equity, day_start_equity, … */
  data: z.record(z.string(), z.unknown()),
  at: ZTimestamp,
});
export const ZCriticalAlertList = pageOf(ZCriticalAlert);
export type TCriticalAlertList = z.infer<typeof ZCriticalAlertList>;
