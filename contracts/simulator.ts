// Wire shapes of the simulated broker's operator routes and the paper-account reset, and the
// account snapshot every broker answers with.
import { z } from 'zod';
import { bodyBoolean, ZAssetClass, ZTimestamp } from './common.ts';
import { ZSymbolInput } from './symbols.ts';

export const ZSimPriceRequest = z.object({
  asset_class: ZAssetClass,
  symbol: ZSymbolInput,
  /** The price the simulator trades at from now on; null hands the symbol back to the random walk. */
  price: z.number().finite().positive().max(1e15).nullable(),
});
export type TSimPriceRequest = z.infer<typeof ZSimPriceRequest>;

export const ZSimPriceResponse = z.object({
  asset_class: ZAssetClass,
  symbol: z.string(),
  /** The price in force after the change (the walk's, the last close or the reference when cleared). */
  price: z.number(),
  source: z.string(),
  at: ZTimestamp,
});

export const ZSimOutageRequest = z.object({ asset_class: ZAssetClass, down: bodyBoolean() });
export const ZSimOutageResponse = z.object({ crypto: z.boolean(), us_equity: z.boolean(), kr_equity: z.boolean() });

export const ZAccountResetRequest = z.object({ asset_class: ZAssetClass });

/**
 * An account's day so far, in the metadata of GET /api/equity/account. Money as decimal strings
 * (exact, as stored); every `_pct` a fraction, like the interface's other `_pct` fields (−0.04 is
 * −4 %). The day is the current UTC day; its start is the snapshot that the daily loss bound and
 * the kill switch share, taken at the account's first evaluation of the day.
 */
export const ZAccountDayPnl = z.object({
  /** The day-start equity snapshot; null until the day's first evaluation takes it. */
  day_start_equity: z.string().nullable(),
  /** Today's flows: the equity the account's paper resets added (or, negative, removed); "0" without any. */
  day_flows: z.string(),
  /** equity − day_start_equity − day_flows; null without a snapshot. */
  day_pnl: z.string().nullable(),
  /** day_pnl / day_start_equity, a fraction; null without a snapshot or when it is zero or less. */
  day_pnl_pct: z.number().nullable(),
  /** The kill switch's critical alert line, a fraction: −0.04. */
  day_pnl_alert_pct: z.number(),
  /** The kill switch's lock line, a fraction: −0.05. */
  day_pnl_lock_pct: z.number(),
});
export type TAccountDayPnl = z.infer<typeof ZAccountDayPnl>;

/** AccountResponse of the interface: one per asset class. */
export const ZAccountResponse = z.object({
  asset_class: ZAssetClass,
  broker: z.string(),
  paper: z.boolean(),
  equity: z.number(),
  buying_power: z.number(),
  cash: z.number(),
  currency: z.string(),
  as_of: ZTimestamp,
  /** GET /api/equity/account: the day so far (ZAccountDayPnl); the paper reset: canceled_orders. */
  metadata: ZAccountDayPnl.partial().catchall(z.unknown()),
});
export type TAccountResponse = z.infer<typeof ZAccountResponse>;
