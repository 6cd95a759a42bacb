// Daily OHLCV bars: their shape, the rules every bar must keep whatever its source (CSV, JSON,
// a provider, the synthetic generator), and the zod schema of a bar in a request body.
import { Decimal } from 'decimal.js';
import { z } from 'zod';

/** A daily bar; prices and volume are decimal strings, `date` the exchange's local date. */
export const ZBar = z.object({
  date: z.string(),
  open: z.string(),
  high: z.string(),
  low: z.string(),
  close: z.string(),
  adj_close: z.string().optional(),
  volume: z.string(),
});
export type TBar = z.infer<typeof ZBar>;

/** A bar before the rules: every field as written by the source, numbers still unchecked text. */
export interface BarCandidate {
  date: string;
  open: string;
  high: string;
  low: string;
  close: string;
  adj_close?: string | undefined;
  volume: string;
  /** What the source found wrong while reading this row (a CSV row with a field too few), reported with the rules. */
  readErrors?: string[];
}

/**
 * One broken rule. `row` is the 1-based position of the bar among the data rows of its input (a
 * CSV header is not a data row; blank lines are skipped and not counted); row 0 stands for the
 * input as a whole (a missing column, an unreadable file).
 */
export interface RowError {
  row: number;
  message: string;
}

export type TBarsResult = { ok: true; bars: TBar[] } | { ok: false; errors: RowError[] };

/** More errors than this are summed up in one last entry, so a wrong file cannot flood a response. */
export const MAX_ROW_ERRORS = 100;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/**
 * A plain or scientific decimal (`1234`, `1234.0`, `.5`, `1.2e6`). Exponents stop at two digits
 * and the length at 40 characters, so no input expands into a huge string; `NaN`, `Infinity`,
 * hex and thousands separators are refused.
 */
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,2})?$/;
const MAX_NUMBER_LENGTH = 40;

/** Input echoed in a message, cut short so a message stays a line. */
const quoted = (text: string) => JSON.stringify(text.length > MAX_NUMBER_LENGTH ? `${text.slice(0, MAX_NUMBER_LENGTH)}…` : text);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `date` is YYYY-MM-DD and names a day of the calendar (no 2023-02-29, no month 13). */
export const isCalendarDate = (date: string): boolean => {
  const parts = DATE.exec(date);
  if (!parts) return false;
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0));
};

const parseDecimal = (text: string): Decimal | null => (text.length > MAX_NUMBER_LENGTH || !DECIMAL_TEXT.test(text) ? null : new Decimal(text));

/** `text` as a canonical decimal string (no exponent, no trailing zeros), or null when it is no number. */
export const decimalText = (text: string): string | null => parseDecimal(text)?.toFixed() ?? null;

const PRICE_FIELDS = ['open', 'high', 'low', 'close'] as const;

/** The bar that `row` stands for, or the rules it breaks. */
const checkBar = (row: BarCandidate): { bar: TBar } | { messages: string[] } => {
  const messages: string[] = [];
  if (!isCalendarDate(row.date)) messages.push(`date ${quoted(row.date)} is not a calendar date written YYYY-MM-DD`);

  const number = (field: string, text: string): Decimal | null => {
    if (text === '') {
      messages.push(`${field} is empty`);
      return null;
    }
    const value = parseDecimal(text);
    if (value === null) messages.push(`${field} ${quoted(text)} is not a number`);
    return value;
  };

  const [open, high, low, close] = PRICE_FIELDS.map((field) => number(field, row[field]));
  const adjClose = row.adj_close === undefined ? undefined : number('adj_close', row.adj_close);
  const volume = number('volume', row.volume);

  for (const [field, value] of [['open', open], ['high', high], ['low', low], ['close', close], ['adj_close', adjClose]] as const) {
    // isPositive and isZero read the sign and digits; greaterThan(0) would build a Decimal per call.
    if (value && (!value.isPositive() || value.isZero())) messages.push(`${field} must be > 0, got ${value.toFixed()}`);
  }
  if (volume?.isNegative() && !volume.isZero()) messages.push(`volume must be >= 0, got ${volume.toFixed()}`);
  if (open && high && low && close) {
    const top = Decimal.max(open, close);
    const bottom = Decimal.min(open, close);
    if (high.lessThan(top)) messages.push(`high ${high.toFixed()} is below max(open, close) ${top.toFixed()}`);
    if (low.greaterThan(bottom)) messages.push(`low ${low.toFixed()} is above min(open, close) ${bottom.toFixed()}`);
  }
  if (messages.length > 0 || !open || !high || !low || !close || !volume) return { messages };

  const bar: TBar = { date: row.date, open: open.toFixed(), high: high.toFixed(), low: low.toFixed(), close: close.toFixed(), volume: volume.toFixed() };
  if (adjClose) bar.adj_close = adjClose.toFixed();
  return { bar };
};

/** `errors` capped at MAX_ROW_ERRORS, the rest counted in one last entry. */
const capErrors = (errors: RowError[]): RowError[] => {
  if (errors.length <= MAX_ROW_ERRORS) return errors;
  const shown = errors.slice(0, MAX_ROW_ERRORS);
  return [...shown, { row: 0, message: `${errors.length - MAX_ROW_ERRORS} more errors not listed` }];
};

/**
 * The bars of `rows`, sorted by date (sources write newest-first as often as oldest-first), or
 * every rule broken, by row: prices > 0, volume >= 0, high at or above open and close, low at or
 * below them, a real calendar date, and no date twice in one input.
 */
export const validateBars = (rows: readonly BarCandidate[]): TBarsResult => {
  const errors: RowError[] = [];
  const bars: TBar[] = [];
  const firstRowOfDate = new Map<string, number>();
  rows.forEach((candidate, index) => {
    const row = index + 1;
    for (const message of candidate.readErrors ?? []) errors.push({ row, message });
    const checked = checkBar(candidate);
    if ('messages' in checked) {
      for (const message of checked.messages) errors.push({ row, message });
    }
    if (isCalendarDate(candidate.date)) {
      const earlier = firstRowOfDate.get(candidate.date);
      if (earlier !== undefined) errors.push({ row, message: `date ${candidate.date} appears again (first in row ${earlier})` });
      else firstRowOfDate.set(candidate.date, row);
    }
    if ('bar' in checked && !candidate.readErrors?.length) bars.push(checked.bar);
  });
  if (errors.length > 0) return { ok: false, errors: capErrors(errors) };
  // YYYY-MM-DD sorts as text in date order.
  bars.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { ok: true, bars };
};
