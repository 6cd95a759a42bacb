// Wire shapes of live trading's controls: the user's live status per asset class, and the
// operator's live disable and lock clear.
import { z } from 'zod';
import { intParam, ZAssetClass, ZTimestamp } from './common.ts';

export const ZLiveAccountStatus = z.object({
  live_enabled: z.boolean(),
  first_live_order_at: ZTimestamp.nullable(),
  /** The end of an active emergency lock; null when none holds. */
  locked_until: ZTimestamp.nullable(),
  /** Live orders counted today (UTC) toward the daily limit. */
  live_orders_today: z.number().int(),
  daily_limit: z.number().int(),
});

export const ZLiveStatus = z.object({ crypto: ZLiveAccountStatus, us_equity: ZLiveAccountStatus, kr_equity: ZLiveAccountStatus });
export type TLiveStatus = z.infer<typeof ZLiveStatus>;

/** An operator's action on one user's asset class: the user in the path, the asset class in the body. */
export const ZUserAssetClassRequest = z.object({ id: intParam({ min: 1, max: 2_147_483_647 }), asset_class: ZAssetClass });

export const ZLiveDisabled = z.object({ user_id: z.number().int(), asset_class: ZAssetClass, live_enabled: z.literal(false) });
export const ZLockCleared = z.object({ user_id: z.number().int(), asset_class: ZAssetClass, locked_until: z.null(), cleared: z.boolean() });
