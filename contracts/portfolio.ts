// Wire shapes of an account's past (DESIGN §6 "Portfolio, performance and the ledger"): the
// portfolio history, a point per UTC day built from the day-start snapshots and the flows beside
// them.
import { z } from 'zod';
import { ZCalendarDate } from './backtest.ts';
import { ZTradingMode } from './brokers.ts';
import { ZAssetClass } from './common.ts';

/** The most days one history answers (ten years): a longer range is refused, not cut. */
export const MAX_HISTORY_DAYS = 3_660;
/** The range when `from` is left out: the year up to `to`. */
export const DEFAULT_HISTORY_DAYS = 365;

const DAY_MS = 86_400_000;
/** Days from `from` to `to`, both 'YYYY-MM-DD' (0 for the same day). */
export const daysBetween = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

export const ZPortfolioHistoryQuery = z
  .object({
    asset_class: ZAssetClass,
    mode: ZTradingMode.default('paper'),
    /** The first UTC day (default: a year before `to`). */
    from: ZCalendarDate.optional(),
    /** The last UTC day (default and at most: today). */
    to: ZCalendarDate.optional(),
  })
  .refine(({ from, to }) => from === undefined || to === undefined || from <= to, { message: 'from must not be after to', path: ['from'] })
  .refine(({ from, to }) => from === undefined || to === undefined || daysBetween(from, to) < MAX_HISTORY_DAYS, { message: `a range of at most ${MAX_HISTORY_DAYS} days`, path: ['from'] });
export type TPortfolioHistoryQuery = z.infer<typeof ZPortfolioHistoryQuery>;

export const ZPortfolioPoint = z.object({
  /** The UTC day. */
  date: z.string(),
  /** Equity at the day's end: the next day's start snapshot (today's point: the account now). */
  equity: z.number(),
  /** Cash at the day's end; null where the snapshot did not record it. */
  cash: z.number().nullable(),
  /** The day's flows (a paper reset's change of equity). */
  flows: z.number(),
  /** equity − the previous point's equity − flows. */
  pnl: z.number(),
  /** pnl / the previous point's equity, a fraction; null when that equity is zero or less. */
  pnl_pct: z.number().nullable(),
});
export type TPortfolioPoint = z.infer<typeof ZPortfolioPoint>;

export const ZPortfolioHistory = z.object({
  asset_class: ZAssetClass,
  mode: ZTradingMode,
  currency: z.string(),
  /** The equity before the first point (the start snapshot of its day); null without points. */
  base_value: z.number().nullable(),
  points: z.array(ZPortfolioPoint),
});
export type TPortfolioHistory = z.infer<typeof ZPortfolioHistory>;
