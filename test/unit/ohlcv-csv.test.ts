// Daily bars from CSV (the layouts of real files, date forms, each broken rule by row number,
// unreadable and empty input) and from JSON (ZOhlcvBarInput, then validateBars).
// The fixtures are the first rows of real public data files (Yahoo-sourced prices as kept by
// backtesting.py, pandas-ta, backtrader and CryptoProphet; see /work/shared/data/SOURCES.md),
// plus one written here in ccxt's layout.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZOhlcvBarInput } from '../../contracts/marketdata.ts';
import { type BarCandidate, MAX_ROW_ERRORS, validateBars } from '../../server/marketdata/bars.ts';
import { parseOhlcvCsv } from '../../server/marketdata/csv.ts';

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, '../fixtures/ohlcv', name), 'utf8');

const barsOf = (text: string) => {
  const result = parseOhlcvCsv(text);
  if (!result.ok) throw new Error(`expected bars, got errors: ${JSON.stringify(result.errors)}`);
  return result.bars;
};

const errorsOf = (text: string) => {
  const result = parseOhlcvCsv(text);
  if (result.ok) throw new Error(`expected errors, got ${result.bars.length} bars`);
  return result.errors;
};

const HEADER = 'Date,Open,High,Low,Close,Volume';
const csv = (...lines: string[]) => [HEADER, ...lines].join('\n');

describe('layouts of real files', () => {
  it('reads the date from an unnamed first column (backtesting.py GOOG)', () => {
    const bars = barsOf(fixture('goog-unnamed-date.csv'));
    expect(bars).toHaveLength(5);
    expect(bars[0]).toEqual({ date: '2004-08-19', open: '100', high: '104.06', low: '95.96', close: '100.34', volume: '22351900' });
    expect(bars[4]?.date).toBe('2004-08-25');
  });

  it('prefers a named date column over an unnamed index column, and keeps float volume as a decimal (pandas-ta SPY)', () => {
    const bars = barsOf(fixture('spy-index-and-float-volume.csv'));
    expect(bars.map((b) => b.date)).toEqual(['1999-11-01', '1999-11-02', '1999-11-03', '1999-11-04', '1999-11-05']);
    expect(bars[0]).toEqual({ date: '1999-11-01', open: '136.5', high: '137', low: '135.5625', close: '135.5625', volume: '4006500' });
  });

  it('keeps Adj Close beside Close (Yahoo ORCL via backtrader)', () => {
    const bars = barsOf(fixture('orcl-adj-close.csv'));
    expect(bars[0]).toEqual({ date: '1995-01-03', open: '2.179012', high: '2.191358', low: '2.117284', close: '2.117284', adj_close: '1.883304', volume: '36301200' });
    expect(bars[2]?.low).toBe('2.08642');
  });

  it('finds columns in any order, weekends included (Yahoo BTC-USD)', () => {
    const bars = barsOf(fixture('btc-usd-reordered.csv'));
    expect(bars).toHaveLength(7);
    expect(bars[0]).toEqual({
      date: '2017-01-01',
      open: '963.6580200195312',
      high: '1003.0800170898438',
      low: '958.698974609375',
      close: '998.3250122070312',
      adj_close: '998.3250122070312',
      volume: '147775008',
    });
    expect(bars.map((b) => b.date)).toContain('2017-01-07'); // a Saturday
  });

  it('takes a BOM, CRLF, trailing blank lines, lower-case names and millisecond timestamps (ccxt)', () => {
    const text = fixture('ccxt-ms-bom-crlf.csv');
    expect(text.charCodeAt(0)).toBe(0xfeff);
    expect(text).toContain('\r\n\r\n');
    const bars = barsOf(text);
    expect(bars.map((b) => [b.date, b.volume])).toEqual([
      ['2024-01-01', '1200'],
      ['2024-01-02', '25678.5'],
      ['2024-01-03', '1234'],
    ]);
    expect(bars[0]).toMatchObject({ open: '42475.23', high: '42899', low: '41884.64', close: '42283.58' });
  });
});

describe('column names', () => {
  it.each(['Adj Close', 'adj_close', 'adjclose', 'ADJ CLOSE', 'Adj. Close'])('reads %s as adj_close', (name) => {
    const bars = barsOf(`Date,Open,High,Low,Close,${name},Volume\n2024-01-02,10,11,9,10.5,10.25,100`);
    expect(bars[0]?.adj_close).toBe('10.25');
  });

  it.each(['date', 'DATE', 'Timestamp', 'datetime'])('reads the date from a column named %s', (name) => {
    expect(barsOf(`${name},open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100`)[0]?.date).toBe('2024-01-02');
  });

  it('ignores columns it does not know', () => {
    const bars = barsOf('Date,Open,High,Low,Close,Volume,Dividends,Stock Splits\n2024-01-02,10,11,9,10.5,100,0,0');
    expect(bars[0]).toEqual({ date: '2024-01-02', open: '10', high: '11', low: '9', close: '10.5', volume: '100' });
  });

  it('names a missing required column in one error', () => {
    expect(errorsOf('Date,Open,High,Low,Close\n2024-01-02,10,11,9,10.5')).toEqual([{ row: 0, message: 'missing required column: volume' }]);
  });

  it('names every missing column in that one error', () => {
    expect(errorsOf('Date,Close\n2024-01-02,10.5')).toEqual([{ row: 0, message: 'missing required columns: open, high, low, volume' }]);
  });

  it('needs a date column when the first header cell has a name', () => {
    expect(errorsOf('Day,Open,High,Low,Close,Volume\n2024-01-02,10,11,9,10.5,100')).toEqual([{ row: 0, message: 'missing required column: date' }]);
  });

  it('refuses a column twice and two date columns', () => {
    expect(errorsOf('Date,Open,open,High,Low,Close,Volume\n2024-01-02,10,10,11,9,10.5,100')[0]?.message).toMatch(/column open appears twice/);
    expect(errorsOf('date,timestamp,open,high,low,close,volume\n2024-01-02,1704153600,10,11,9,10.5,100')[0]?.message).toMatch(/more than one date column/);
  });
});

describe('date forms', () => {
  it.each([
    ['2024-01-02', '2024-01-02'],
    ['2024-01-02T00:00:00Z', '2024-01-02'],
    ['2024-01-02T00:00:00+09:00', '2024-01-02'], // the date as written: a Seoul midnight is not turned into Jan 1 UTC
    ['2024-01-02 16:00:00', '2024-01-02'],
    ['2024-01-02T09:30', '2024-01-02'],
    ['2024-01-02T00:00:00.000-05:00', '2024-01-02'],
    ['20240102', '2024-01-02'],
    ['2024/01/02', '2024-01-02'],
    ['2024.01.02', '2024-01-02'],
    ['1704153600', '2024-01-02'], // seconds
    ['1704153600.0', '2024-01-02'],
    ['1704153600000', '2024-01-02'], // milliseconds
    ['1704205800000', '2024-01-02'], // 14:30 UTC, a New York session open
  ])('%s is %s', (cell, date) => {
    expect(barsOf(csv(`${cell},10,11,9,10.5,100`))[0]?.date).toBe(date);
  });

  it.each(['01/02/2024', '2/1/2024', '17041536000', '2024-1-2', '2024/01-02', 'yesterday', '2023-02-29', '2024-13-01', '2024-01-02T25:00'])(
    'refuses %s',
    (cell) => {
      const errors = errorsOf(csv(`${cell},10,11,9,10.5,100`));
      expect(errors).toEqual([{ row: 1, message: expect.stringMatching(/^date .* is not a calendar date written YYYY-MM-DD$/) }]);
    },
  );

  it('accepts a leap day', () => {
    expect(barsOf(csv('2024-02-29,10,11,9,10.5,100'))[0]?.date).toBe('2024-02-29');
  });
});

describe('the rules, by data row', () => {
  it('names each broken rule with its row (the header is not a row)', () => {
    const errors = errorsOf(
      csv(
        '2024-01-02,10,11,9,10.5,100', // 1: fine
        '2024-01-03,10,10.4,9,10.5,100', // 2: high below close
        '2024-01-04,10,11,10.2,10.5,100', // 3: low above open
        '2024-01-05,0,11,9,10.5,100', // 4: open zero
        '2024-01-08,10,11,-9,10.5,100', // 5: low negative
        '2024-01-09,10,11,9,10.5,-1', // 6: volume negative
        '2024-01-10,10,11,9,null,100', // 7: Yahoo's "null"
        '2024-01-11,10,11,9,,100', // 8: empty
        '2024-01-12,10,11,9', // 9: fields missing
        '2024-01-15,10,11,9,10.5,100,7', // 10: a field too many
        '2024-01-16,10,11,9,10.5,0', // 11: fine, volume 0 is allowed
      ),
    );
    expect(errors).toEqual([
      { row: 2, message: 'high 10.4 is below max(open, close) 10.5' },
      { row: 3, message: 'low 10.2 is above min(open, close) 10' },
      { row: 4, message: 'open must be > 0, got 0' },
      { row: 4, message: 'low 9 is above min(open, close) 0' },
      { row: 5, message: 'low must be > 0, got -9' },
      { row: 6, message: 'volume must be >= 0, got -1' },
      { row: 7, message: 'close "null" is not a number' },
      { row: 8, message: 'close is empty' },
      { row: 9, message: 'has 4 fields, the header has 6' },
      { row: 9, message: 'close is empty' },
      { row: 9, message: 'volume is empty' },
      { row: 10, message: 'has 7 fields, the header has 6' },
    ]);
  });

  it('names a date given twice, with the row that had it first', () => {
    const errors = errorsOf(csv('2024-01-02,10,11,9,10.5,100', '2024-01-03,10,11,9,10.5,100', '2024-01-02,10,11,9,10.5,100'));
    expect(errors).toEqual([{ row: 3, message: 'date 2024-01-02 appears again (first in row 1)' }]);
  });

  it('finds the same date written two ways', () => {
    const errors = errorsOf(csv('2024-01-02,10,11,9,10.5,100', '1704153600000,10,11,9,10.5,100'));
    expect(errors).toEqual([{ row: 2, message: 'date 2024-01-02 appears again (first in row 1)' }]);
  });

  it('counts rows without the blank lines between them', () => {
    expect(errorsOf(csv('2024-01-02,10,11,9,10.5,100', '', '2024-01-03,10,9,9,10.5,100'))).toEqual([
      { row: 2, message: 'high 9 is below max(open, close) 10.5' },
    ]);
  });

  it.each([
    ['1.2e6', '1200000'],
    ['1234.0', '1234'],
    ['0.5', '0.5'],
    ['1E+3', '1000'],
  ])('reads volume %s as %s', (cell, volume) => {
    expect(barsOf(csv(`2024-01-02,10,11,9,10.5,${cell}`))[0]?.volume).toBe(volume);
  });

  it.each(['1,234', '0x10', 'NaN', 'Infinity', '1e999', '12abc'])('refuses the number %s', (cell) => {
    const errors = errorsOf(csv(`2024-01-02,10,11,9,10.5,"${cell}"`));
    expect(errors).toEqual([{ row: 1, message: `volume "${cell}" is not a number` }]);
  });

  it('returns the bars oldest first whatever the order of the file', () => {
    const bars = barsOf(csv('2024-01-04,10,11,9,10.5,100', '2024-01-02,10,11,9,10.5,100', '2024-01-03,10,11,9,10.5,100'));
    expect(bars.map((b) => b.date)).toEqual(['2024-01-02', '2024-01-03', '2024-01-04']);
  });

  it('lists at most MAX_ROW_ERRORS errors and counts the rest', () => {
    const rows = Array.from({ length: 150 }, (_, i) => `${new Date(Date.UTC(2020, 0, 1 + i)).toISOString().slice(0, 10)},10,11,9,10.5,-1`);
    const errors = errorsOf(csv(...rows));
    expect(errors).toHaveLength(MAX_ROW_ERRORS + 1);
    expect(errors[MAX_ROW_ERRORS - 1]?.row).toBe(MAX_ROW_ERRORS);
    expect(errors[MAX_ROW_ERRORS]).toEqual({ row: 0, message: '50 more errors not listed' });
  });
});

describe('input that is no OHLCV file', () => {
  it.each([
    ['an empty file', ''],
    ['only a BOM', '\uFEFF'],
    ['only blank lines', '\n\r\n\n'],
  ])('%s', (_, text) => {
    expect(errorsOf(text)).toEqual([{ row: 0, message: 'the file is empty' }]);
  });

  it('a header without rows', () => {
    expect(errorsOf(`${HEADER}\r\n`)).toEqual([{ row: 0, message: 'the file has a header but no data rows' }]);
  });

  it('prose', () => {
    expect(errorsOf('hello world\nthis is not a CSV file at all')).toEqual([
      { row: 0, message: 'missing required columns: date, open, high, low, close, volume' },
    ]);
  });

  it('JSON', () => {
    expect(errorsOf('[{"date": "2024-01-02", "open": 1}]')[0]?.row).toBe(0);
  });

  it('an unclosed quote, with the row it opens in', () => {
    const errors = errorsOf(csv('2024-01-02,10,11,9,10.5,100', '2024-01-03,"10,11,9,10.5,100'));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.row).toBe(2);
    expect(errors[0]?.message).toMatch(/^not readable as CSV: /);
  });

  it('semicolon-separated data (one column to the parser)', () => {
    expect(errorsOf('Date;Open;High;Low;Close;Volume\n2024-01-02;10;11;9;10.5;100')[0]?.message).toMatch(/^missing required columns: date, open/);
  });
});

describe('bars from JSON (ZOhlcvBarInput, then validateBars)', () => {
  const parseBars = (input: unknown[]) => validateBars(input.map((bar) => ZOhlcvBarInput.parse(bar)));

  it('takes numbers and numeric strings and carries them as canonical decimal strings', () => {
    const result = parseBars([{ date: '2024-01-02', open: 0.1, high: '0.30', low: 0.1, close: 0.2, adj_close: 0.2, volume: 1.2e6 }]);
    expect(result).toEqual({ ok: true, bars: [{ date: '2024-01-02', open: '0.1', high: '0.3', low: '0.1', close: '0.2', adj_close: '0.2', volume: '1200000' }] });
  });

  it('refuses a non-numeric string as a row error, and a boolean or a missing field in the schema', () => {
    expect(parseBars([{ date: '2024-01-02', open: 'ten', high: 11, low: 9, close: 10, volume: 1 }])).toMatchObject({ ok: false, errors: [{ row: 1 }] });
    expect(ZOhlcvBarInput.safeParse({ date: '2024-01-02', open: true, high: 11, low: 9, close: 10, volume: 1 }).success).toBe(false);
    expect(ZOhlcvBarInput.safeParse({ date: '2024-01-02', high: 11, low: 9, close: 10, volume: 1 }).success).toBe(false);
  });

  it('gives JSON bars the same row errors as CSV rows', () => {
    const result = parseBars([
      { date: '2024-01-02', open: 10, high: 11, low: 9, close: 10.5, volume: 100 },
      { date: '2024-01-02', open: 10, high: 10.4, low: 9, close: 10.5, volume: 100 },
    ]);
    expect(result).toEqual({
      ok: false,
      errors: [
        { row: 2, message: 'high 10.4 is below max(open, close) 10.5' },
        { row: 2, message: 'date 2024-01-02 appears again (first in row 1)' },
      ],
    });
  });

  it('passes good bars through unchanged but canonical', () => {
    const rows: BarCandidate[] = [{ date: '2024-01-02', open: '10.50', high: '11', low: '9', close: '10.5', volume: '0' }];
    expect(validateBars(rows)).toEqual({ ok: true, bars: [{ date: '2024-01-02', open: '10.5', high: '11', low: '9', close: '10.5', volume: '0' }] });
  });

  it('takes an empty list as no bars', () => {
    expect(validateBars([])).toEqual({ ok: true, bars: [] });
  });
});
