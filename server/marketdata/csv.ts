// Reading daily OHLCV bars from the CSV layouts people actually have (Yahoo, pandas exports,
// backtrader and backtesting.py data files, ccxt dumps) into bars that keep the rules of bars.ts.
import { CsvError, parse } from 'csv-parse/sync';
import { type BarCandidate, type RowError, type TBarsResult, validateBars } from './bars.ts';

/**
 * Columns are found by name in any case and order, ignoring spaces, `_`, `-` and dots
 * (`Adj Close`, `adj_close`, `adjclose` are one column). Columns of other names are ignored
 * (yfinance's `Dividends`, a pandas row index). Volume is required; `Adj Close` is optional.
 */
const FIELD_OF_HEADER: Readonly<Record<string, keyof BarCandidate>> = {
  date: 'date',
  datetime: 'date',
  timestamp: 'date',
  open: 'open',
  high: 'high',
  low: 'low',
  close: 'close',
  adjclose: 'adj_close',
  volume: 'volume',
};
const REQUIRED: ReadonlyArray<keyof BarCandidate> = ['date', 'open', 'high', 'low', 'close', 'volume'];

const headerKey = (cell: string) => cell.toLowerCase().replace(/[^a-z0-9]/g, '');

const fileError = (message: string): TBarsResult => ({ ok: false, errors: [{ row: 0, message }] });

/** Where each field sits in a record, or what is wrong with the header. */
const columnsOf = (header: readonly string[]): { columns: Partial<Record<keyof BarCandidate, number>> } | { error: string } => {
  const columns: Partial<Record<keyof BarCandidate, number>> = {};
  const dateColumns: string[] = [];
  for (const [index, cell] of header.entries()) {
    const field = FIELD_OF_HEADER[headerKey(cell)];
    if (!field) continue;
    if (field === 'date') dateColumns.push(cell);
    else if (columns[field] !== undefined) return { error: `column ${field} appears twice in the header` };
    columns[field] = index;
  }
  if (dateColumns.length > 1) return { error: `more than one date column in the header: ${dateColumns.join(', ')}` };
  // pandas writes its index as an unnamed first column: that holds the date unless a column is named for it.
  if (columns.date === undefined && header[0] === '') columns.date = 0;
  const missing = REQUIRED.filter((field) => columns[field] === undefined);
  if (missing.length > 0) return { error: `missing required column${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` };
  return { columns };
};

const SECONDS = /^(\d{9,10})(?:\.0+)?$/;
const MILLISECONDS = /^(\d{12,13})(?:\.0+)?$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
const SLASHED_OR_DOTTED = /^(\d{4})([/.])(\d{2})\2(\d{2})$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * The bar date a CSV cell stands for, written YYYY-MM-DD; a cell of no known form comes back as it
 * was, for the date rule of validateBars to name.
 * - `2024-01-02`, `2024/01/02`, `2024.01.02` and `20240102` (KRX and KIS exports) are that day.
 * - An ISO datetime (`2024-01-02T00:00:00-05:00`, `2024-01-02 00:00:00`) is the date part as
 *   written, not converted to UTC: a source that writes local times writes the exchange's date,
 *   which is what a bar's date is (a Seoul midnight is the previous day in UTC).
 * - Unix timestamps: 9–10 digits are seconds, 12–13 digits milliseconds (both cover 1973–2286),
 *   and the bar date is the UTC date. Sources that write them (ccxt, Binance klines, Yahoo's
 *   chart API, Alpaca) stamp a daily bar at UTC midnight, at the exchange's midnight (04:00/05:00
 *   UTC for New York) or at the session open (14:30 UTC New York, 00:00 UTC Seoul), and the UTC
 *   date of each is the bar's own date. 11 digits fit neither unit and are refused.
 * - Day-first or month-first dates (`01/02/2024`) are refused: nothing in the file says which.
 */
export const csvDate = (cell: string): string => {
  const datetime = DATETIME.exec(cell);
  if (datetime?.[1]) return datetime[1];
  const compact = COMPACT.exec(cell);
  if (compact) return `${compact[1]}-${compact[2]}-${compact[3]}`;
  const separated = SLASHED_OR_DOTTED.exec(cell);
  if (separated) return `${separated[1]}-${separated[3]}-${separated[4]}`;
  const seconds = SECONDS.exec(cell);
  if (seconds) return new Date(Number(seconds[1]) * 1000).toISOString().slice(0, 10);
  const millis = MILLISECONDS.exec(cell);
  if (millis) return new Date(Number(millis[1])).toISOString().slice(0, 10);
  return cell;
};

const readRecords = (text: string): { records: string[][] } | { error: RowError } => {
  try {
    // Field counts are checked per row below, so a short row is that row's error, not the file's.
    const records = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true });
    return { records };
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // csv-parse counts records read before the failure, the header among them: that is the data row.
    const row = typeof error.records === 'number' ? error.records : 0;
    return { error: { row, message: `not readable as CSV: ${error.message}` } };
  }
};

/**
 * The bars of a CSV text, or its errors by data row (row 1 is the first line after the header;
 * row 0 the file as a whole). A BOM, CRLF line ends, blank lines and spaces around fields are
 * accepted; the delimiter is a comma.
 */
export const parseOhlcvCsv = (text: string): TBarsResult => {
  const read = readRecords(text);
  if ('error' in read) return { ok: false, errors: [read.error] };
  const [header, ...rows] = read.records;
  if (!header) return fileError('the file is empty');
  const layout = columnsOf(header);
  if ('error' in layout) return fileError(layout.error);
  if (rows.length === 0) return fileError('the file has a header but no data rows');

  const { columns } = layout;
  const cell = (record: readonly string[], field: keyof BarCandidate) => {
    const index = columns[field];
    return index === undefined ? undefined : (record[index] ?? '');
  };
  const candidates = rows.map((record): BarCandidate => {
    const candidate: BarCandidate = {
      date: csvDate(cell(record, 'date') ?? ''),
      open: cell(record, 'open') ?? '',
      high: cell(record, 'high') ?? '',
      low: cell(record, 'low') ?? '',
      close: cell(record, 'close') ?? '',
      adj_close: cell(record, 'adj_close'),
      volume: cell(record, 'volume') ?? '',
    };
    if (record.length !== header.length) candidate.readErrors = [`has ${record.length} fields, the header has ${header.length}`];
    return candidate;
  });
  return validateBars(candidates);
};
