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
  metadata: z.record(z.string(), z.unknown()),
});
export type TAccountResponse = z.infer<typeof ZAccountResponse>;
