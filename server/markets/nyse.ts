// The NYSE calendar: regular hours 09:30–16:00 America/New_York, the holidays and 13:00 early
// closes computed from the exchange's published rules for any year, and its one-off closures.
import { addDays, isWeekend, localDate, parseLocalDate, weekdayOf, type TLocalDate, type TLocalHours } from './zoned.ts';

export const NYSE_TIME_ZONE = 'America/New_York';

const REGULAR_HOURS: TLocalHours = { opens: '09:30', closes: '16:00' };
const EARLY_CLOSE_HOURS: TLocalHours = { opens: '09:30', closes: '13:00' };

/**
 * Closures outside the rules, as announced by the NYSE: national days of mourning for former
 * presidents and emergencies. Add a day here when the exchange announces one.
 */
export const NYSE_ONE_OFF_CLOSURES: Readonly<Record<TLocalDate, string>> = {
  '2001-09-11': 'September 11 attacks',
  '2001-09-12': 'September 11 attacks',
  '2001-09-13': 'September 11 attacks',
  '2001-09-14': 'September 11 attacks',
  '2004-06-11': 'National day of mourning for President Reagan',
  '2007-01-02': 'National day of mourning for President Ford',
  '2012-10-29': 'Hurricane Sandy',
  '2012-10-30': 'Hurricane Sandy',
  '2018-12-05': 'National day of mourning for President George H. W. Bush',
  '2025-01-09': 'National day of mourning for President Carter',
};

const SUNDAY = 0;
const MONDAY = 1;
const THURSDAY = 4;
const SATURDAY = 6;

/** The `nth` (1-based) `weekday` of a month; a negative `nth` counts from the month's end. */
const nthWeekdayOfMonth = (year: number, month: number, weekday: number, nth: number): TLocalDate => {
  if (nth > 0) {
    const first = localDate(year, month, 1);
    return addDays(first, ((weekday - weekdayOf(first) + 7) % 7) + (nth - 1) * 7);
  }
  const last = addDays(month === 12 ? localDate(year + 1, 1, 1) : localDate(year, month + 1, 1), -1);
  return addDays(last, -((weekdayOf(last) - weekday + 7) % 7) + (nth + 1) * 7);
};

/** Easter Sunday in the Gregorian calendar (the anonymous computus of Meeus, Jones and Butcher). */
export const easterSunday = (year: number): TLocalDate => {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return localDate(year, month, day);
};

/** NYSE Rule 7.2: a Saturday holiday is observed the Friday before, a Sunday one the Monday after. */
const observed = (date: TLocalDate): TLocalDate => {
  const weekday = weekdayOf(date);
  if (weekday === SATURDAY) return addDays(date, -1);
  if (weekday === SUNDAY) return addDays(date, 1);
  return date;
};

/**
 * The holidays the NYSE observes in a year, by date. MLK Day has been observed since 1998 and
 * Juneteenth since 2022; earlier years are computed with today's other rules and the exchange's
 * historical one-offs (beyond the table above) are not modelled.
 */
const computeHolidays = (year: number): Map<TLocalDate, string> => {
  const holidays = new Map<TLocalDate, string>();
  const newYear = localDate(year, 1, 1);
  // Rule 7.2's exception for "the ending of a yearly accounting period": when January 1 is a
  // Saturday the exchange stays open on Friday, December 31 (as in 2022), so nothing is observed.
  if (weekdayOf(newYear) !== SATURDAY) holidays.set(observed(newYear), "New Year's Day");
  if (year >= 1998) holidays.set(nthWeekdayOfMonth(year, 1, MONDAY, 3), 'Martin Luther King, Jr. Day');
  holidays.set(nthWeekdayOfMonth(year, 2, MONDAY, 3), "Washington's Birthday");
  holidays.set(addDays(easterSunday(year), -2), 'Good Friday');
  holidays.set(nthWeekdayOfMonth(year, 5, MONDAY, -1), 'Memorial Day');
  if (year >= 2022) holidays.set(observed(localDate(year, 6, 19)), 'Juneteenth National Independence Day');
  holidays.set(observed(localDate(year, 7, 4)), 'Independence Day');
  holidays.set(nthWeekdayOfMonth(year, 9, MONDAY, 1), 'Labor Day');
  holidays.set(nthWeekdayOfMonth(year, 11, THURSDAY, 4), 'Thanksgiving Day');
  holidays.set(observed(localDate(year, 12, 25)), 'Christmas Day');
  return holidays;
};

/**
 * The 13:00 early closes in a year. July 3 and December 24 close early only from Monday to
 * Thursday: on a Friday they are themselves the observed holiday, and the NYSE does not move the
 * early close to the Thursday before (2015, 2020, 2026 have no July early close).
 */
const computeEarlyCloses = (year: number): Map<TLocalDate, string> => {
  const earlyCloses = new Map<TLocalDate, string>();
  const isMondayToThursday = (date: TLocalDate) => weekdayOf(date) >= MONDAY && weekdayOf(date) <= THURSDAY;
  const july3 = localDate(year, 7, 3);
  if (isMondayToThursday(july3)) earlyCloses.set(july3, 'Day before Independence Day');
  earlyCloses.set(addDays(nthWeekdayOfMonth(year, 11, THURSDAY, 4), 1), 'Day after Thanksgiving');
  const christmasEve = localDate(year, 12, 24);
  if (isMondayToThursday(christmasEve)) earlyCloses.set(christmasEve, 'Christmas Eve');
  return earlyCloses;
};

const holidaysByYear = new Map<number, ReadonlyMap<TLocalDate, string>>();
const earlyClosesByYear = new Map<number, ReadonlyMap<TLocalDate, string>>();

/** The observed NYSE holidays of a year (one-off closures not included), date → name. */
export const nyseHolidays = (year: number): ReadonlyMap<TLocalDate, string> => {
  let holidays = holidaysByYear.get(year);
  if (!holidays) {
    holidays = computeHolidays(year);
    holidaysByYear.set(year, holidays);
  }
  return holidays;
};

/** The NYSE's 13:00 early closes of a year, date → reason. */
export const nyseEarlyCloses = (year: number): ReadonlyMap<TLocalDate, string> => {
  let earlyCloses = earlyClosesByYear.get(year);
  if (!earlyCloses) {
    earlyCloses = computeEarlyCloses(year);
    earlyClosesByYear.set(year, earlyCloses);
  }
  return earlyCloses;
};

/** The NYSE's regular-session hours on a New York date, or null when it does not trade. */
export const nyseHoursOn = (date: TLocalDate): TLocalHours | null => {
  const { year } = parseLocalDate(date);
  if (isWeekend(date) || nyseHolidays(year).has(date) || Object.hasOwn(NYSE_ONE_OFF_CLOSURES, date)) return null;
  return nyseEarlyCloses(year).has(date) ? EARLY_CLOSE_HOURS : REGULAR_HOURS;
};
