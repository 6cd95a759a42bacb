// Wire shapes of the operator routes under /api/admin.
import { z } from 'zod';
import { bodyBoolean, intParam, pageOf, ZPageQuery, ZTimestamp } from './common.ts';
import { ZUserResponse } from './auth.ts';

export const ZUserListQuery = ZPageQuery;
export const ZUserList = pageOf(ZUserResponse);
export type TUserList = z.infer<typeof ZUserList>;

export const ZUserIdPath = z.object({
  id: intParam({ min: 1, max: 2_147_483_647 }),
});

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
