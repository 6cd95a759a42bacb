// readNumberColumn reads a comma-separated column as Number reads each value, whether by its fast
// path (plain decimals of up to 15 digits) or by Number itself (everything else); readDayColumn
// reads days since 1970-01-01 as the dates toISOString gives.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../server/brokers/simulator/prices.ts';
import { isoDateOfDay, readDayColumn, readNumberColumn } from '../../server/backtest/bar-columns.ts';

const asNumber = (texts: string[]) => Float64Array.from(texts, (text) => Number(text));

describe('readNumberColumn', () => {
  it('gives Number’s double for every plain decimal, on both sides of the 15-digit fast path', () => {
    const random = seededRandom(7);
    const texts: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      const digits = 1 + Math.floor(random() * 18);
      let text = '';
      for (let d = 0; d < digits; d++) text += String(Math.floor(random() * 10));
      const dot = Math.floor(random() * (digits + 2)) - 1;
      texts.push(dot < 0 ? text : `${text.slice(0, dot)}.${text.slice(dot)}`);
    }
    // Prices and volumes as numeric columns print them, and decimals a binary double cannot hold.
    texts.push('150.23', '0.1', '0.30000000000000004', '2.179012', '45.549999', '58034142.0', '999999999999999', '9007199254740993', '0.000000000000001', '123456789.012345');
    expect(Array.from(readNumberColumn(texts.join(','), texts.length))).toEqual(Array.from(asNumber(texts)));
  });

  it('hands what is not a plain decimal to Number: signs, exponents, NaN, empty values, stray characters', () => {
    const texts = ['-1.5', '+2', '1e5', '2.5E-3', 'NaN', 'Infinity', '', '.', '5.', '.5', '1.2.3', ' 7', '0x10', '00012.50'];
    const read = readNumberColumn(texts.join(','), texts.length);
    expect(Array.from(read)).toEqual(Array.from(asNumber(texts)));
    expect(read[0]).toBe(-1.5);
    expect(read[4]).toBeNaN();
    expect(read[6]).toBe(0);
  });

  it('refuses a column holding another number of values than the dates', () => {
    expect(() => readNumberColumn('1,2,3', 2)).toThrow(/holds more/);
    expect(() => readNumberColumn('1,2', 3)).toThrow(/holds 2/);
  });
});

describe('readDayColumn', () => {
  it('gives toISOString’s date for every day from 1900 to 2100, and every 7th from 0000-01-01 to 9999-12-31', () => {
    const viaDate = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10);
    const wrong: number[] = [];
    for (let day = -25_567; day <= 47_482; day++) if (isoDateOfDay(day) !== viaDate(day)) wrong.push(day);
    for (let day = -719_528; day <= 2_932_896; day += 7) if (isoDateOfDay(day) !== viaDate(day)) wrong.push(day);
    expect(wrong).toEqual([]);
    expect(readDayColumn('0,-1,11016,19722', 4)).toEqual(['1970-01-01', '1969-12-31', '2000-02-29', '2023-12-31']);
  });
});
