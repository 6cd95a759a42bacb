// Wire shapes of an account's past (DESIGN §6 "Portfolio, performance and the ledger"): the
// portfolio history, a point per UTC day built from the day-start snapshots and the flows beside
// them.
import { z } from 'zod';
import { ZCalendarDate } from './backtest.ts';
import { ZTradingMode } from './brokers.ts';
import { pageOf, ZAssetClass, ZPageQuery } from './common.ts';

/** The most days one history answers (ten years): a longer range is refused, not cut. */
export const MAX_HISTORY_DAYS = 3_660;
/** The range when `from` is left out: the year up to `to`. */
export const DEFAULT_HISTORY_DAYS = 365;

const DAY_MS = 86_400_000;
/** Days from `from` to `to`, both 'YYYY-MM-DD' (0 for the same day). */
export const daysBetween = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

const accountRange = {
  asset_class: ZAssetClass,
  mode: ZTradingMode.default('paper'),
  /** The first UTC day (default: a year before `to`). */
  from: ZCalendarDate.optional(),
  /** The last UTC day (default and at most: today). */
  to: ZCalendarDate.optional(),
};
type TRange = { from?: string | undefined; to?: string | undefined };
/** A range is a range: from not after to, and at most MAX_HISTORY_DAYS long. */
const ranged = <T extends z.ZodType<TRange>>(schema: T) =>
  schema
    .refine(({ from, to }) => from === undefined || to === undefined || from <= to, { message: 'from must not be after to', path: ['from'] })
    .refine(({ from, to }) => from === undefined || to === undefined || daysBetween(from, to) < MAX_HISTORY_DAYS, { message: `a range of at most ${MAX_HISTORY_DAYS} days`, path: ['from'] });

export const ZPortfolioHistoryQuery = ranged(z.object(accountRange));
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

export const ZPerformanceQuery = ZPortfolioHistoryQuery;
export type TPerformanceQuery = z.infer<typeof ZPerformanceQuery>;

const resultFields = {
  /** Σ of the gains of the lots closed in the range (FIFO). */
  realized_pnl: z.number(),
  /** The open lots at today's prices less their cost basis; null for a range that ends before today (no past prices are kept). */
  unrealized_pnl: z.number().nullable(),
  /** The fills' fees less their taxes, in the range. */
  fees: z.number(),
  /** The fills' transaction taxes (a KRX sell's), in the range. */
  taxes: z.number(),
  /** Lots closed in the range. */
  closed_lots: z.number().int(),
  /** The share of those lots with a gain above 0; 0 without lots. */
  win_rate: z.number(),
};

export const ZSymbolPerformance = z.object({ symbol: z.string(), ...resultFields });
export type TSymbolPerformance = z.infer<typeof ZSymbolPerformance>;

export const ZPerformance = z.object({
  asset_class: ZAssetClass,
  mode: ZTradingMode,
  currency: z.string(),
  from: z.string(),
  to: z.string(),
  /** The daily returns chained, flows removed (a reset is not a loss). */
  time_weighted_return: z.number(),
  ...resultFields,
  /** The deepest fall of the flow-free index below its running peak, a negative fraction; 0 if it never fell. */
  max_drawdown_pct: z.number(),
  /** As the backtests': mean over stdev of the daily returns, ×√365 for crypto, ×√252 over the exchange's trading days for stocks. */
  sharpe_ratio: z.number(),
  /** Gross gain over gross loss of the closed lots; null without a losing lot. */
  profit_factor: z.number().nullable(),
  by_symbol: z.array(ZSymbolPerformance),
  daily: z.array(z.object({ date: z.string(), return: z.number() })),
  weekly: z.array(z.object({ week: z.string(), return: z.number() })),
  monthly: z.array(z.object({ month: z.string(), return: z.number() })),
});
export type TPerformance = z.infer<typeof ZPerformance>;

/** `type` of GET /api/equity/activities: fills, closed FIFO lots, or flows. */
export const ZActivityType = z.enum(['fill', 'lot', 'flow']);
export type TActivityType = z.infer<typeof ZActivityType>;

export const ZActivitiesQuery = ranged(
  z.object({
    ...accountRange,
    ...ZPageQuery.shape,
    type: ZActivityType.default('fill'),
    /** csv: every row of the type in the range, no paging (REST answers text/csv; `Accept: text/csv` sets it). */
    format: z.enum(['json', 'csv']).default('json'),
  }),
);
export type TActivitiesQuery = z.infer<typeof ZActivitiesQuery>;

/** Amounts of the ledger are decimal text, exact as stored. */
export const ZActivityFill = z.object({
  type: z.literal('fill'),
  at: z.string(),
  symbol: z.string(),
  side: z.enum(['buy', 'sell']),
  client_order_id: z.string(),
  qty: z.string(),
  price: z.string(),
  /** The whole fee, its tax included. */
  fee: z.string(),
  tax: z.string(),
});
export const ZActivityLot = z.object({
  type: z.literal('lot'),
  symbol: z.string(),
  qty: z.string(),
  acquired_at: z.string(),
  sold_at: z.string(),
  cost_basis: z.string(),
  proceeds: z.string(),
  gain: z.string(),
});
export const ZActivityFlow = z.object({
  type: z.literal('flow'),
  at: z.string(),
  kind: z.enum(['reset']),
  amount: z.string(),
  equity_before: z.string(),
  equity_after: z.string(),
});
export const ZActivity = z.discriminatedUnion('type', [ZActivityFill, ZActivityLot, ZActivityFlow]);
export type TActivity = z.infer<typeof ZActivity>;
export const ZActivityList = pageOf(ZActivity);
export type TActivityList = z.infer<typeof ZActivityList>;

/** The columns of each type's CSV, in order: its JSON fields but `type`. */
export const ACTIVITY_COLUMNS: Record<TActivityType, readonly string[]> = {
  fill: ['at', 'symbol', 'side', 'client_order_id', 'qty', 'price', 'fee', 'tax'],
  lot: ['symbol', 'qty', 'acquired_at', 'sold_at', 'cost_basis', 'proceeds', 'gain'],
  flow: ['at', 'kind', 'amount', 'equity_before', 'equity_after'],
};
