// Wire shapes of live trading's controls: the user's live status per asset class, and the
// operator's live disable and lock clear.
import { z } from 'zod';
import { requestText, ZAssetClass, ZTimestamp, ZUserIdPath } from './common.ts';

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
export const ZUserAssetClassRequest = ZUserIdPath.extend({ asset_class: ZAssetClass });

export const ZLiveDisabled = z.object({ user_id: z.number().int(), asset_class: ZAssetClass, live_enabled: z.literal(false) });
export const ZLockCleared = z.object({ user_id: z.number().int(), asset_class: ZAssetClass, locked_until: z.null(), cleared: z.boolean() });

// --- live promotion: readiness, the confirm token, enabling ---

export const ZAssetClassRequest = z.object({ asset_class: ZAssetClass });
export type TAssetClassRequest = z.infer<typeof ZAssetClassRequest>;

export const ZLiveReadiness = z.object({
  ok: z.boolean(),
  asset_class: ZAssetClass,
  /** Whole days since the user's first paper order in the asset class. */
  paper_days: z.number().int(),
  /** Filled paper orders in the asset class. */
  paper_trades: z.number().int(),
  required_days: z.number().int(),
  required_trades: z.number().int(),
  /** Why it is not ok yet (empty when ok). */
  reasons: z.array(z.string()),
});
export type TLiveReadiness = z.infer<typeof ZLiveReadiness>;

export const ZConfirmIssued = z.object({
  asset_class: ZAssetClass,
  expires_at: ZTimestamp,
  /** Where the token went: the user's e-mail (SMTP configured), or only the service log. */
  delivery: z.enum(['email', 'log']),
});
export type TConfirmIssued = z.infer<typeof ZConfirmIssued>;

export const ZLiveEnableRequest = z.object({
  confirm_token: requestText().min(1).max(512),
  /** The bot check's client token (Turnstile/hCaptcha); required when the service checks. */
  botcheck_token: requestText().min(1).max(4096).optional(),
});
export type TLiveEnableRequest = z.infer<typeof ZLiveEnableRequest>;

export const ZLiveEnabled = z.object({ asset_class: ZAssetClass, live_enabled: z.literal(true) });
export type TLiveEnabled = z.infer<typeof ZLiveEnabled>;
