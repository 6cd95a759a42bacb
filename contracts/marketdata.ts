// Wire shapes of daily OHLCV bars: GET /api/market-data/ohlcv and the operator's import.
import { z } from 'zod';
import { requestText, ZAssetClass } from './common.ts';
import { ZSymbolInput } from './symbols.ts';

export const ZDate = requestText().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');

export const ZOhlcvQuery = z.object({
  asset_class: ZAssetClass,
  symbol: ZSymbolInput,
  from: ZDate.optional(),
  to: ZDate.optional(),
});
export type TOhlcvQuery = z.infer<typeof ZOhlcvQuery>;

export const ZOhlcvBar = z.object({
  date: z.string(),
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  adj_close: z.number().nullable(),
  volume: z.number(),
  /** `synthetic` (demo data) or `import`. */
  source: z.string(),
});

export const ZOhlcvResponse = z.object({
  asset_class: ZAssetClass,
  symbol: z.string(),
  currency: z.string(),
  bars: z.array(ZOhlcvBar),
});
export type TOhlcvResponse = z.infer<typeof ZOhlcvResponse>;

/** A bar in a JSON import: numbers, or numeric strings (kept exact). */
const decimalInput = z.union([z.number().finite(), requestText().trim().min(1).max(40)]).transform(String);

export const ZOhlcvBarInput = z.object({
  date: requestText().max(32),
  open: decimalInput,
  high: decimalInput,
  low: decimalInput,
  close: decimalInput,
  adj_close: decimalInput.optional(),
  volume: decimalInput,
});

/** Bars of one file or request: ten years of daily bars fit many times over. */
export const MAX_IMPORT_BARS = 100_000;

/**
 * An import: JSON `bars`, or the text of a CSV file in `csv` (a `text/csv` body on REST fills it,
 * with asset_class and symbol in the query string).
 */
export const ZOhlcvImport = z
  .object({
    asset_class: ZAssetClass,
    symbol: ZSymbolInput,
    bars: z.array(ZOhlcvBarInput).min(1).max(MAX_IMPORT_BARS).optional(),
    csv: requestText().min(1).optional(),
  })
  .refine((input) => (input.bars === undefined) !== (input.csv === undefined), { message: 'send either bars (JSON) or a CSV body', path: ['bars'] });
export type TOhlcvImport = z.infer<typeof ZOhlcvImport>;

export const ZOhlcvImportResult = z.object({
  asset_class: ZAssetClass,
  symbol: z.string(),
  /** Bars written (inserted or replaced). */
  imported: z.number().int(),
  /** Synthetic bars of the symbol removed: real bars replace demo data. */
  replaced_synthetic: z.number().int(),
  first_date: z.string(),
  last_date: z.string(),
});
export type TOhlcvImportResult = z.infer<typeof ZOhlcvImportResult>;
