// SQL on daily bars: the only module that knows their columns.
import { and, asc, count, desc, eq, gte, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { dailyBars, type DailyBarRow } from '../db/schema/index.ts';
import type { TBar } from './bars.ts';

/** Bars per statement: bounds the size of one statement's array parameters. */
const CHUNK = 5_000;

type Key = { assetClass: TAssetClass; symbol: string };

export const readBars = (db: Queryable, { assetClass, symbol, from, to }: Key & { from?: string; to?: string }): Promise<DailyBarRow[]> =>
  db
    .select()
    .from(dailyBars)
    .where(
      and(
        eq(dailyBars.assetClass, assetClass),
        eq(dailyBars.symbol, symbol),
        from === undefined ? undefined : gte(dailyBars.date, from),
        to === undefined ? undefined : lte(dailyBars.date, to),
      ),
    )
    .orderBy(asc(dailyBars.date));

/** The newest `limit` bars up to `to` (every bar when absent), oldest first: what an analysis reads. */
export const readRecentBars = async (db: Queryable, { assetClass, symbol, to, limit }: Key & { to?: string; limit: number }) =>
  (
    await db
      .select({ date: dailyBars.date, open: dailyBars.open, high: dailyBars.high, low: dailyBars.low, close: dailyBars.close, volume: dailyBars.volume })
      .from(dailyBars)
      .where(and(eq(dailyBars.assetClass, assetClass), eq(dailyBars.symbol, symbol), to === undefined ? undefined : lte(dailyBars.date, to)))
      .orderBy(desc(dailyBars.date))
      .limit(limit)
  ).reverse();

/** A range's bars column by column, oldest first: each column one text, its values comma-separated. */
export interface BarColumnsText {
  /** How many bars (values in each column). */
  count: number;
  /** Each bar's date as days since 1970-01-01: an integer is cheaper to make than a formatted date, and no session setting changes it. */
  days: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

/**
 * The dates, prices and volumes of bars in a date range, oldest first: what a backtest reads,
 * nothing more, as one row of comma-separated columns (undefined when the range has no bar).
 * Ten years are 2,500 rows of six columns; one row of six texts costs a fraction of that to
 * read, which is most of a short backtest's time on PGlite. The numbers are the numeric columns'
 * own texts, as a row-by-row read gives them.
 */
export const readBarColumns = async (db: Queryable, { assetClass, symbol, from, to }: Key & { from: string; to: string }): Promise<BarColumnsText | undefined> => {
  const column = (value: SQL) => sql<string | null>`string_agg(${value}, ',' order by ${dailyBars.date})`;
  const [row] = await db
    .select({
      count: count(),
      days: column(sql`(${dailyBars.date} - date '1970-01-01')::text`),
      open: column(sql`${dailyBars.open}::text`),
      high: column(sql`${dailyBars.high}::text`),
      low: column(sql`${dailyBars.low}::text`),
      close: column(sql`${dailyBars.close}::text`),
      volume: column(sql`${dailyBars.volume}::text`),
    })
    .from(dailyBars)
    .where(and(eq(dailyBars.assetClass, assetClass), eq(dailyBars.symbol, symbol), gte(dailyBars.date, from), lte(dailyBars.date, to)));
  const { days, open, high, low, close, volume } = row ?? {};
  if (!row?.count || !days || !open || !high || !low || !close || !volume) return undefined;
  return { count: row.count, days, open, high, low, close, volume };
};

/**
 * Inserts the bars, replacing any of the same dates: one statement per chunk, the columns passed
 * as arrays and unnested by Postgres (far faster than a row of parameters per bar, which is what
 * lets a fresh database take ten years of demo bars for every instrument in seconds).
 */
export const upsertBars = async (db: Queryable, { assetClass, symbol, bars, source, at }: Key & { bars: readonly TBar[]; source: string; at: Date }): Promise<number> => {
  for (let start = 0; start < bars.length; start += CHUNK) {
    const chunk = bars.slice(start, start + CHUNK);
    const column = (pick: (bar: TBar) => string | null) => `{${chunk.map((bar) => (pick(bar) === null ? 'NULL' : pick(bar))).join(',')}}`;
    await db.execute(sql`
      insert into ${dailyBars} (asset_class, symbol, date, open, high, low, close, adj_close, volume, source, imported_at)
      select ${assetClass}, ${symbol}, d, o, h, l, c, a, v, ${source}, ${at.toISOString()}::timestamptz
      from unnest(${column((bar) => bar.date)}::date[], ${column((bar) => bar.open)}::numeric[], ${column((bar) => bar.high)}::numeric[],
                  ${column((bar) => bar.low)}::numeric[], ${column((bar) => bar.close)}::numeric[], ${column((bar) => bar.adj_close ?? null)}::numeric[],
                  ${column((bar) => bar.volume)}::numeric[]) as t(d, o, h, l, c, a, v)
      on conflict (asset_class, symbol, date) do update set
        open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, adj_close = excluded.adj_close,
        volume = excluded.volume, source = excluded.source, imported_at = excluded.imported_at`);
  }
  return bars.length;
};

/** Removes the symbol's bars of one source; returns how many went. */
export const deleteBarsOfSource = async (db: Queryable, { assetClass, symbol, source }: Key & { source: string }): Promise<number> =>
  (
    await db
      .delete(dailyBars)
      .where(and(eq(dailyBars.assetClass, assetClass), eq(dailyBars.symbol, symbol), eq(dailyBars.source, source)))
      .returning({ date: dailyBars.date })
  ).length;

export const countBars = async (db: Queryable): Promise<number> => (await db.select({ n: count() }).from(dailyBars))[0]?.n ?? 0;

/** The newest close of a symbol, or undefined without bars. */
export const lastClose = async (db: Queryable, key: Key): Promise<string | undefined> => {
  const [row] = await db
    .select({ close: dailyBars.close })
    .from(dailyBars)
    .where(and(eq(dailyBars.assetClass, key.assetClass), eq(dailyBars.symbol, key.symbol)))
    .orderBy(desc(dailyBars.date))
    .limit(1);
  return row?.close;
};

/**
 * The close of the last session before `before` (the exchange's local date of today), or undefined
 * without such a bar: a bar of today (the bot's, an import's) is no base for today's price limit.
 */
export const previousSessionClose = async (db: Queryable, key: Key & { before: string }): Promise<string | undefined> => {
  const [row] = await db
    .select({ close: dailyBars.close })
    .from(dailyBars)
    .where(and(eq(dailyBars.assetClass, key.assetClass), eq(dailyBars.symbol, key.symbol), lt(dailyBars.date, key.before)))
    .orderBy(desc(dailyBars.date))
    .limit(1);
  return row?.close;
};
