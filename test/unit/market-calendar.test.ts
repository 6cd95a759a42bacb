// Market calendars at fixed instants: the zoned-time helper across both DST switches, NYSE and KRX
// holidays and hours against the exchanges' published 2024–2026 calendars, crypto's UTC days.
import { describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { isTradingDay, lastOpenedSessionDate, marketSession, nextClose } from '../../server/markets/calendar.ts';
import { krxClosures, krxHoursOn } from '../../server/markets/krx.ts';
import { easterSunday, nyseEarlyCloses, nyseHolidays, nyseHoursOn } from '../../server/markets/nyse.ts';
import { addDays, instantAt, isWeekend, localDateTimeOf, parseLocalDate, utcOffsetMs, weekdayOf } from '../../server/markets/zoned.ts';

const NEW_YORK = 'America/New_York';
const SEOUL = 'Asia/Seoul';
const HOUR = 3_600_000;

const at = (iso: string) => new Date(iso);
const iso = (date: Date) => date.toISOString();
const session = (assetClass: TAssetClass, instant: string) => {
  const { open, sessionDate, opensAt, closesAt } = marketSession({ assetClass, at: at(instant) });
  return { open, sessionDate, opensAt: iso(opensAt), closesAt: iso(closesAt) };
};

/** Every date of a year the market does not trade on, weekends left out. */
const weekdayClosures = (assetClass: 'us_equity' | 'kr_equity', year: number) => {
  const closed: string[] = [];
  for (let date = `${year}-01-01`; date <= `${year}-12-31`; date = addDays(date, 1)) {
    if (!isWeekend(date) && !isTradingDay(assetClass, date)) closed.push(date);
  }
  return closed;
};

describe('zoned time', () => {
  it('reads the New York wall clock on both sides of the March switch', () => {
    expect(localDateTimeOf(at('2026-03-06T14:30:00Z'), NEW_YORK)).toEqual({ date: '2026-03-06', hour: 9, minute: 30, second: 0, millisecond: 0 });
    expect(localDateTimeOf(at('2026-03-09T13:30:00Z'), NEW_YORK)).toEqual({ date: '2026-03-09', hour: 9, minute: 30, second: 0, millisecond: 0 });
    expect(utcOffsetMs(at('2026-03-08T06:59:59Z'), NEW_YORK)).toBe(-5 * HOUR);
    expect(utcOffsetMs(at('2026-03-08T07:00:00Z'), NEW_YORK)).toBe(-4 * HOUR);
    expect(utcOffsetMs(at('2026-11-01T05:59:59Z'), NEW_YORK)).toBe(-4 * HOUR);
    expect(utcOffsetMs(at('2026-11-01T06:00:00Z'), NEW_YORK)).toBe(-5 * HOUR);
  });

  it('keeps milliseconds and reads dates across midnight', () => {
    expect(localDateTimeOf(at('2025-06-02T14:59:59.999Z'), SEOUL)).toEqual({ date: '2025-06-02', hour: 23, minute: 59, second: 59, millisecond: 999 });
    expect(localDateTimeOf(at('2025-06-02T15:00:00.000Z'), SEOUL)).toEqual({ date: '2025-06-03', hour: 0, minute: 0, second: 0, millisecond: 0 });
    expect(localDateTimeOf(at('2026-01-01T04:59:59.999Z'), NEW_YORK).date).toBe('2025-12-31');
  });

  it('turns a wall-clock reading into an instant on both sides of each switch', () => {
    const ny = (date: string, time: string) => iso(instantAt({ date, time, timeZone: NEW_YORK }));
    expect(ny('2026-03-06', '09:30')).toBe('2026-03-06T14:30:00.000Z');
    expect(ny('2026-03-09', '09:30')).toBe('2026-03-09T13:30:00.000Z');
    expect(ny('2026-03-08', '01:59:59')).toBe('2026-03-08T06:59:59.000Z');
    expect(ny('2026-03-08', '03:00')).toBe('2026-03-08T07:00:00.000Z');
    expect(ny('2026-11-01', '00:59:59')).toBe('2026-11-01T04:59:59.000Z');
    expect(ny('2026-11-01', '02:00')).toBe('2026-11-01T07:00:00.000Z');
    expect(ny('2026-11-02', '09:30')).toBe('2026-11-02T14:30:00.000Z');
  });

  it('moves a skipped reading forward and takes the first of a repeated one', () => {
    // 02:30 never happens on 2026-03-08; 01:30 happens twice on 2026-11-01 (EDT, then EST).
    expect(iso(instantAt({ date: '2026-03-08', time: '02:30', timeZone: NEW_YORK }))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(instantAt({ date: '2026-11-01', time: '01:30', timeZone: NEW_YORK }))).toBe('2026-11-01T05:30:00.000Z');
    expect(localDateTimeOf(at('2026-11-01T06:30:00Z'), NEW_YORK)).toMatchObject({ date: '2026-11-01', hour: 1, minute: 30 });
  });

  it('takes 24:00 as the start of the next day', () => {
    expect(iso(instantAt({ date: '2025-12-31', time: '24:00', timeZone: 'UTC' }))).toBe('2026-01-01T00:00:00.000Z');
  });

  it('round-trips every hour of 2026 in New York, Seoul and a half-hour zone', () => {
    for (const timeZone of [NEW_YORK, SEOUL, 'Asia/Kolkata']) {
      for (let t = Date.parse('2026-01-01T00:00:00Z'); t < Date.parse('2027-01-01T00:00:00Z'); t += HOUR) {
        const local = localDateTimeOf(new Date(t), timeZone);
        const time = `${String(local.hour).padStart(2, '0')}:${String(local.minute).padStart(2, '0')}`;
        const back = instantAt({ date: local.date, time, timeZone }).getTime();
        // Only the second pass through New York's repeated hour maps back to its first pass.
        const repeated = timeZone === NEW_YORK && t >= Date.parse('2026-11-01T06:00:00Z') && t < Date.parse('2026-11-01T07:00:00Z');
        expect(back, `${timeZone} ${new Date(t).toISOString()}`).toBe(repeated ? t - HOUR : t);
      }
    }
  });

  it('does calendar arithmetic across months, leap days and years', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2025-02-28', 1)).toBe('2025-03-01');
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    expect(weekdayOf('2026-03-09')).toBe(1);
    expect(weekdayOf('2026-03-08')).toBe(0);
  });

  it('refuses dates that do not exist or are not YYYY-MM-DD', () => {
    for (const bad of ['2025-02-29', '2025-13-01', '2025-1-01', '2025-01-01T00:00', '']) {
      expect(() => parseLocalDate(bad), bad).toThrow(RangeError);
    }
    expect(() => instantAt({ date: '2025-01-02', time: '25:00', timeZone: NEW_YORK })).toThrow(RangeError);
  });
});

describe('NYSE calendar', () => {
  it('computes Easter by the Gregorian computus', () => {
    expect([2024, 2025, 2026, 2027, 2038].map(easterSunday)).toEqual(['2024-03-31', '2025-04-20', '2026-04-05', '2027-03-28', '2038-04-25']);
  });

  it("matches the NYSE's published 2025 holidays, the mourning day for President Carter included", () => {
    expect([...nyseHolidays(2025).keys()]).toEqual([
      '2025-01-01', '2025-01-20', '2025-02-17', '2025-04-18', '2025-05-26', '2025-06-19',
      '2025-07-04', '2025-09-01', '2025-11-27', '2025-12-25',
    ]);
    expect(weekdayClosures('us_equity', 2025)).toEqual([
      '2025-01-01', '2025-01-09', '2025-01-20', '2025-02-17', '2025-04-18', '2025-05-26',
      '2025-06-19', '2025-07-04', '2025-09-01', '2025-11-27', '2025-12-25',
    ]);
  });

  it("matches the NYSE's published 2026 holidays (Independence Day observed on Friday, July 3)", () => {
    expect(weekdayClosures('us_equity', 2026)).toEqual([
      '2026-01-01', '2026-01-19', '2026-02-16', '2026-04-03', '2026-05-25', '2026-06-19',
      '2026-07-03', '2026-09-07', '2026-11-26', '2026-12-25',
    ]);
  });

  it('observes Saturday holidays on Friday and Sunday ones on Monday, except New Year on a Saturday', () => {
    // 2022: January 1 a Saturday (no holiday, Friday 2021-12-31 trades); Juneteenth and Christmas
    // on Sundays. 2027: Juneteenth and Christmas on Saturdays, July 4 on a Sunday.
    expect(weekdayClosures('us_equity', 2022)).toEqual([
      '2022-01-17', '2022-02-21', '2022-04-15', '2022-05-30', '2022-06-20', '2022-07-04',
      '2022-09-05', '2022-11-24', '2022-12-26',
    ]);
    expect([...nyseHolidays(2022).keys()]).toEqual(weekdayClosures('us_equity', 2022));
    expect(isTradingDay('us_equity', '2021-12-31')).toBe(true);
    expect(weekdayClosures('us_equity', 2027)).toEqual([
      '2027-01-01', '2027-01-18', '2027-02-15', '2027-03-26', '2027-05-31', '2027-06-18',
      '2027-07-05', '2027-09-06', '2027-11-25', '2027-12-24',
    ]);
    expect(nyseHolidays(2023).has('2023-01-02')).toBe(true);
    expect(nyseHolidays(2021).has('2021-06-18')).toBe(false);
  });

  it('closes at 13:00 on the published early-close days and only those', () => {
    expect([...nyseEarlyCloses(2023).keys()]).toEqual(['2023-07-03', '2023-11-24']);
    expect([...nyseEarlyCloses(2024).keys()]).toEqual(['2024-07-03', '2024-11-29', '2024-12-24']);
    expect([...nyseEarlyCloses(2025).keys()]).toEqual(['2025-07-03', '2025-11-28', '2025-12-24']);
    expect([...nyseEarlyCloses(2026).keys()]).toEqual(['2026-11-27', '2026-12-24']);
    expect([...nyseEarlyCloses(2027).keys()]).toEqual(['2027-11-26']);
    expect(nyseHoursOn('2025-12-24')).toEqual({ opens: '09:30', closes: '13:00' });
    expect(nyseHoursOn('2025-12-23')).toEqual({ opens: '09:30', closes: '16:00' });
  });

  it('keeps the one-off closures of its table', () => {
    expect(isTradingDay('us_equity', '2018-12-05')).toBe(false);
    expect(isTradingDay('us_equity', '2025-01-09')).toBe(false);
    expect(isTradingDay('us_equity', '2025-01-10')).toBe(true);
  });
});

describe('KRX calendar', () => {
  it("matches the KRX's published 2025 closures: Seollal on the 28th–30th, the 27th, May 1, the election, year end", () => {
    expect(weekdayClosures('kr_equity', 2025)).toEqual([
      '2025-01-01', '2025-01-27', '2025-01-28', '2025-01-29', '2025-01-30', '2025-03-03',
      '2025-05-01', '2025-05-05', '2025-05-06', '2025-06-03', '2025-06-06', '2025-08-15',
      '2025-10-03', '2025-10-06', '2025-10-07', '2025-10-08', '2025-10-09', '2025-12-25',
      '2025-12-31',
    ]);
    // date-holidays alone would close Friday the 31st, the day after Seollal.
    expect(isTradingDay('kr_equity', '2025-01-31')).toBe(true);
  });

  it("matches the KRX's published 2026 closures, with Constitution Day a holiday again", () => {
    expect(weekdayClosures('kr_equity', 2026)).toEqual([
      '2026-01-01', '2026-02-16', '2026-02-17', '2026-02-18', '2026-03-02', '2026-05-01',
      '2026-05-05', '2026-05-25', '2026-06-03', '2026-07-17', '2026-08-17', '2026-09-24',
      '2026-09-25', '2026-10-05', '2026-10-09', '2026-12-25', '2026-12-31',
    ]);
    expect(isTradingDay('kr_equity', '2026-02-19')).toBe(true);
  });

  it("matches the KRX's published 2024 closures (a Seollal substitute, two one-off closures)", () => {
    expect(weekdayClosures('kr_equity', 2024)).toEqual([
      '2024-01-01', '2024-02-09', '2024-02-12', '2024-03-01', '2024-04-10', '2024-05-01',
      '2024-05-06', '2024-05-15', '2024-06-06', '2024-08-15', '2024-09-16', '2024-09-17',
      '2024-09-18', '2024-10-01', '2024-10-03', '2024-10-09', '2024-12-25', '2024-12-31',
    ]);
  });

  it('treats observances as working days and closes the last business day of December', () => {
    expect(isTradingDay('kr_equity', '2025-07-17')).toBe(true);
    // 2023-12-30/31 fall on a weekend, so Friday the 29th is the year-end closing day.
    expect(krxClosures(2023).get('2023-12-29')).toBe('Year-end closing day');
    expect(isTradingDay('kr_equity', '2023-12-28')).toBe(true);
  });

  it('opens late on the first trading day of the year and shifts the CSAT day by an hour', () => {
    expect(krxHoursOn('2025-01-02')).toEqual({ opens: '10:00', closes: '15:30' });
    expect(krxHoursOn('2026-01-02')).toEqual({ opens: '10:00', closes: '15:30' });
    expect(krxHoursOn('2026-01-05')).toEqual({ opens: '09:00', closes: '15:30' });
    expect(krxHoursOn('2025-11-13')).toEqual({ opens: '10:00', closes: '16:30' });
    expect(krxHoursOn('2025-11-14')).toEqual({ opens: '09:00', closes: '15:30' });
  });
});

describe('marketSession: us_equity', () => {
  it('opens at 09:30 EDT on the first Monday after the March switch', () => {
    expect(session('us_equity', '2026-03-09T13:30:00.000Z')).toEqual({
      open: true, sessionDate: '2026-03-09', opensAt: '2026-03-09T13:30:00.000Z', closesAt: '2026-03-09T20:00:00.000Z',
    });
    expect(session('us_equity', '2026-03-09T13:29:59.999Z')).toMatchObject({ open: false, sessionDate: '2026-03-09' });
  });

  it('opens at 09:30 EST on the Friday before', () => {
    expect(session('us_equity', '2026-03-06T14:30:00.000Z')).toEqual({
      open: true, sessionDate: '2026-03-06', opensAt: '2026-03-06T14:30:00.000Z', closesAt: '2026-03-06T21:00:00.000Z',
    });
    expect(session('us_equity', '2026-03-06T14:29:59.999Z').open).toBe(false);
    expect(session('us_equity', '2026-03-06T20:59:59.999Z').open).toBe(true);
  });

  it('is closed from the 16:00 bell and points at the next weekday session', () => {
    expect(session('us_equity', '2026-03-06T21:00:00.000Z')).toEqual({
      open: false, sessionDate: '2026-03-09', opensAt: '2026-03-09T13:30:00.000Z', closesAt: '2026-03-09T20:00:00.000Z',
    });
    expect(session('us_equity', '2026-03-07T16:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2026-03-09' });
    expect(session('us_equity', '2026-03-08T16:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2026-03-09' });
  });

  it('opens at 09:30 EST after the November switch', () => {
    expect(session('us_equity', '2026-11-02T14:29:59.999Z').open).toBe(false);
    expect(session('us_equity', '2026-11-02T14:30:00.000Z')).toMatchObject({ open: true, closesAt: '2026-11-02T21:00:00.000Z' });
  });

  it('is closed at noon on every NYSE holiday of 2025 and 2026', () => {
    for (const year of [2025, 2026]) {
      for (const date of nyseHolidays(year).keys()) {
        const noon = instantAt({ date, time: '12:00', timeZone: NEW_YORK });
        const { open, sessionDate } = marketSession({ assetClass: 'us_equity', at: noon });
        expect(open, date).toBe(false);
        expect(sessionDate > date, date).toBe(true);
      }
    }
  });

  it('closes at 13:00 on early-close days', () => {
    expect(session('us_equity', '2025-11-28T17:59:59.999Z')).toMatchObject({ open: true, sessionDate: '2025-11-28', closesAt: '2025-11-28T18:00:00.000Z' });
    expect(session('us_equity', '2025-11-28T18:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-12-01' });
    expect(session('us_equity', '2025-12-24T17:59:59.999Z')).toMatchObject({ open: true, closesAt: '2025-12-24T18:00:00.000Z' });
    expect(session('us_equity', '2025-12-24T18:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-12-26' });
    // In summer 13:00 EDT is 17:00 UTC.
    expect(session('us_equity', '2025-07-03T17:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-07-07' });
  });

  it('is closed on the day of mourning for President Carter', () => {
    expect(session('us_equity', '2025-01-09T17:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-01-10', opensAt: '2025-01-10T14:30:00.000Z' });
  });
});

describe('marketSession: kr_equity', () => {
  it('opens at 09:00 and closes at 15:30 Seoul time', () => {
    expect(session('kr_equity', '2025-06-04T00:00:00.000Z')).toEqual({
      open: true, sessionDate: '2025-06-04', opensAt: '2025-06-04T00:00:00.000Z', closesAt: '2025-06-04T06:30:00.000Z',
    });
    expect(session('kr_equity', '2025-06-04T06:29:59.999Z').open).toBe(true);
    expect(session('kr_equity', '2025-06-04T06:30:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-06-05' });
  });

  it('reads the Seoul date, not the UTC one (Sunday 23:30 UTC is Monday 08:30 in Seoul)', () => {
    expect(session('kr_equity', '2025-06-01T23:30:00.000Z')).toEqual({
      open: false, sessionDate: '2025-06-02', opensAt: '2025-06-02T00:00:00.000Z', closesAt: '2025-06-02T06:30:00.000Z',
    });
  });

  it('is closed on the 2025 presidential election and on the year-end closing day', () => {
    expect(session('kr_equity', '2025-06-03T02:00:00.000Z')).toMatchObject({ open: false, sessionDate: '2025-06-04' });
    expect(session('kr_equity', '2025-12-30T06:30:00.000Z')).toEqual({
      open: false, sessionDate: '2026-01-02', opensAt: '2026-01-02T01:00:00.000Z', closesAt: '2026-01-02T06:30:00.000Z',
    });
  });

  it('is closed through Seollal 2026 and Chuseok 2025 with its substitute day', () => {
    for (const date of ['2026-02-16', '2026-02-17', '2026-02-18', '2025-10-06', '2025-10-07', '2025-10-08', '2025-10-09']) {
      expect(marketSession({ assetClass: 'kr_equity', at: instantAt({ date, time: '10:00', timeZone: SEOUL }) }).open, date).toBe(false);
    }
    expect(session('kr_equity', '2026-02-16T01:00:00.000Z').sessionDate).toBe('2026-02-19');
    expect(session('kr_equity', '2025-10-06T01:00:00.000Z').sessionDate).toBe('2025-10-10');
  });

  it('trades 10:00–16:30 on the CSAT day', () => {
    expect(session('kr_equity', '2025-11-13T00:30:00.000Z')).toEqual({
      open: false, sessionDate: '2025-11-13', opensAt: '2025-11-13T01:00:00.000Z', closesAt: '2025-11-13T07:30:00.000Z',
    });
    expect(session('kr_equity', '2025-11-13T07:00:00.000Z').open).toBe(true);
    expect(session('kr_equity', '2025-11-13T07:30:00.000Z').open).toBe(false);
  });
});

describe('marketSession: crypto', () => {
  it('is always open, a session being the UTC day', () => {
    expect(session('crypto', '2026-03-07T23:59:59.999Z')).toEqual({
      open: true, sessionDate: '2026-03-07', opensAt: '2026-03-07T00:00:00.000Z', closesAt: '2026-03-08T00:00:00.000Z',
    });
    expect(session('crypto', '2026-03-08T00:00:00.000Z')).toEqual({
      open: true, sessionDate: '2026-03-08', opensAt: '2026-03-08T00:00:00.000Z', closesAt: '2026-03-09T00:00:00.000Z',
    });
    expect(session('crypto', '2025-12-25T12:00:00.000Z').open).toBe(true);
    expect(isTradingDay('crypto', '2025-12-25')).toBe(true);
  });
});

describe('nextClose', () => {
  const close = (assetClass: TAssetClass, instant: string) => iso(nextClose({ assetClass, at: at(instant) }));

  it("is the session's own close while it is open, and today's close before the open", () => {
    expect(close('us_equity', '2026-03-09T15:00:00.000Z')).toBe('2026-03-09T20:00:00.000Z');
    expect(close('us_equity', '2026-03-09T12:00:00.000Z')).toBe('2026-03-09T20:00:00.000Z');
    expect(close('us_equity', '2025-11-28T15:00:00.000Z')).toBe('2025-11-28T18:00:00.000Z');
  });

  it("is Monday's close for an order placed on Friday after the close (across the March switch)", () => {
    expect(close('us_equity', '2026-03-06T22:00:00.000Z')).toBe('2026-03-09T20:00:00.000Z');
  });

  it("is Tuesday's close when Monday is a holiday", () => {
    // 2026-01-19 is Martin Luther King, Jr. Day.
    expect(close('us_equity', '2026-01-16T21:00:00.000Z')).toBe('2026-01-20T21:00:00.000Z');
    // 2026-02-16–18 is Seollal: an order of Friday the 13th after the close lives until Thursday.
    expect(close('kr_equity', '2026-02-13T07:00:00.000Z')).toBe('2026-02-19T06:30:00.000Z');
  });

  it('is the next UTC midnight for crypto', () => {
    expect(close('crypto', '2026-03-07T23:59:59.999Z')).toBe('2026-03-08T00:00:00.000Z');
    expect(close('crypto', '2026-03-08T00:00:00.000Z')).toBe('2026-03-09T00:00:00.000Z');
  });
});

describe('isTradingDay', () => {
  it('answers for an exchange-local date and refuses a malformed one', () => {
    expect(isTradingDay('us_equity', '2025-04-17')).toBe(true);
    expect(isTradingDay('us_equity', '2025-04-18')).toBe(false);
    expect(isTradingDay('us_equity', '2025-04-19')).toBe(false);
    expect(isTradingDay('kr_equity', '2025-05-01')).toBe(false);
    expect(() => isTradingDay('kr_equity', '2025-02-30')).toThrow(RangeError);
    expect(() => isTradingDay('crypto', '20250101')).toThrow(RangeError);
  });
});

describe('lastOpenedSessionDate: the last day a daily bar can exist for', () => {
  const last = (assetClass: TAssetClass, instant: string) => lastOpenedSessionDate({ assetClass, at: at(instant) });

  it('is today once the bell has rung, and the trading day before until then', () => {
    // Tuesday 2026-03-10: NYSE opens 09:30 EDT (13:30 UTC).
    expect(last('us_equity', '2026-03-10T13:29:59Z')).toBe('2026-03-09');
    expect(last('us_equity', '2026-03-10T13:30:00Z')).toBe('2026-03-10');
    expect(last('us_equity', '2026-03-10T22:00:00Z')).toBe('2026-03-10');
    // Monday morning before the open: Friday's session.
    expect(last('us_equity', '2026-03-09T12:00:00Z')).toBe('2026-03-06');
    // KRX opens 09:00 KST (00:00 UTC); before the open on 2025-01-31, the last session was the 24th (Seollal and the 27th closed).
    expect(last('kr_equity', '2025-01-30T23:59:00Z')).toBe('2025-01-24');
    expect(last('kr_equity', '2025-01-31T00:00:00Z')).toBe('2025-01-31');
    // The day after July 4 2026 (a Saturday, observed Friday the 3rd), before the open on Monday the 6th: Thursday the 2nd.
    expect(last('us_equity', '2026-07-06T13:00:00Z')).toBe('2026-07-02');
    // Crypto never closes: today, in UTC.
    expect(last('crypto', '2026-03-10T00:00:00Z')).toBe('2026-03-10');
  });
});
