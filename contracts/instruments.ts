// Wire shapes of the instrument registry: GET /api/instruments and POST /api/admin/instruments.
import { z } from 'zod';
import { bodyBoolean, pageOf, requestText, ZAssetClass, ZPageQuery, ZTimestamp } from './common.ts';
import { ZSymbolInput } from './symbols.ts';

/** A decimal as JSON carries it (a number, as the interface says); the server keeps it exact. */
export const ZDecimalNumber = z.number().finite();
const positiveDecimal = () => z.number().finite().positive().max(1e15);

export const ZInstrument = z.object({
  symbol: z.string(),
  asset_class: ZAssetClass,
  exchange: z.string(),
  currency: z.string(),
  name: z.string(),
  reference_price: ZDecimalNumber,
  /** `krx_bands`: the tick follows the KRX price-band table; tick_size is the tick at the reference price. */
  tick_rule: z.enum(['fixed', 'krx_bands']),
  tick_size: ZDecimalNumber,
  lot_size: ZDecimalNumber,
  fractional: z.boolean(),
  updated_at: ZTimestamp,
});
export type TInstrument = z.infer<typeof ZInstrument>;

export const ZInstrumentListQuery = ZPageQuery.extend({
  asset_class: ZAssetClass.optional(),
  /** Part of the symbol or the name, any case. */
  q: requestText().trim().min(1).max(64).optional(),
});
export type TInstrumentListQuery = z.infer<typeof ZInstrumentListQuery>;
export const ZInstrumentList = pageOf(ZInstrument);
export type TInstrumentList = z.infer<typeof ZInstrumentList>;

export const ZInstrumentUpsert = z.object({
  asset_class: ZAssetClass,
  symbol: ZSymbolInput,
  exchange: requestText().trim().min(1).max(32),
  currency: requestText().regex(/^[A-Z]{3,5}$/, 'an upper-case currency code of 3-5 letters'),
  name: requestText().trim().min(1).max(128),
  reference_price: positiveDecimal(),
  /** Required for crypto and US instruments; KRX stocks follow the price-band table. */
  tick_size: positiveDecimal().optional(),
  lot_size: positiveDecimal(),
  fractional: bodyBoolean(),
});
export type TInstrumentUpsert = z.infer<typeof ZInstrumentUpsert>;
