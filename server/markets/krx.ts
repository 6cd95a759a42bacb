// The KRX calendar: regular hours 09:00–15:30 Asia/Seoul on weekdays that are neither Korean
// public holidays (from date-holidays, corrected) nor the exchange's own closures, and the days
// the exchange announces other hours for.
import Holidays, { type HolidaysTypes } from 'date-holidays';
import { addDays, isWeekend, localDate, localDateTimeOf, parseLocalDate, type TLocalDate, type TLocalHours } from './zoned.ts';

export const KRX_TIME_ZONE = 'Asia/Seoul';

const REGULAR_HOURS: TLocalHours = { opens: '09:00', closes: '15:30' };
/** The year's first trading day opens an hour late for the opening ceremony; the close is unchanged. */
const FIRST_TRADING_DAY_HOURS: TLocalHours = { opens: '10:00', closes: '15:30' };
/** On the college entrance exam (CSAT) the whole session moves an hour later, to spare the roads. */
const CSAT_HOURS: TLocalHours = { opens: '10:00', closes: '16:30' };

/**
 * Closures outside any rule: election days (public holidays by statute but dated by each
 * election) and temporary public holidays the government designates, each of which the KRX
 * announced as a market holiday. Add a day here when one is announced.
 */
export const KRX_ONE_OFF_CLOSURES: Readonly<Record<TLocalDate, string>> = {
  '2014-06-04': 'Local elections',
  '2015-08-14': 'Temporary holiday (70th anniversary of liberation)',
  '2016-04-13': 'National Assembly election',
  '2016-05-06': 'Temporary holiday',
  '2017-05-09': 'Presidential election',
  '2017-10-02': 'Temporary holiday',
  '2018-06-13': 'Local elections',
  '2020-04-15': 'National Assembly election',
  '2020-08-17': 'Temporary holiday',
  '2022-03-09': 'Presidential election',
  '2022-06-01': 'Local elections',
  '2023-10-02': 'Temporary holiday',
  '2024-04-10': 'National Assembly election',
  '2024-10-01': 'Armed Forces Day (temporary holiday)',
  '2025-01-27': 'Temporary holiday (before Seollal)',
  '2025-06-03': 'Presidential election',
  '2026-06-03': 'Local elections',
};

/**
 * CSAT days, when the KRX trades 10:00–16:30. The exam's date is set by the Ministry of Education
 * and the KRX announces the shifted hours each year; 2017's exam, postponed by an earthquake, is
 * left out because its hours changed at a day's notice.
 */
export const KRX_CSAT_DAYS: Readonly<Record<TLocalDate, string>> = {
  '2018-11-15': 'CSAT (2019 academic year)',
  '2019-11-14': 'CSAT (2020 academic year)',
  '2020-12-03': 'CSAT (2021 academic year)',
  '2021-11-18': 'CSAT (2022 academic year)',
  '2022-11-17': 'CSAT (2023 academic year)',
  '2023-11-16': 'CSAT (2024 academic year)',
  '2024-11-14': 'CSAT (2025 academic year)',
  '2025-11-13': 'CSAT (2026 academic year)',
  '2026-11-19': 'CSAT (2027 academic year)',
};

/**
 * date-holidays (3.37) starts Seollal's three days on lunar New Year's Day itself; the holiday is
 * the day before, the day and the day after (2025: January 28–30, not 29–31). Its Seollal
 * substitute days are listed per year from the correct dates and need no change; Chuseok's rule
 * already starts on the day before.
 */
const SEOLLAL_RULE = 'korean 01-0-01 P3D';

/**
 * Types that close the exchange. KR's data has only 'public' and 'observance'; observances (such
 * as Constitution Day before it became a public holiday again in 2026) are working days.
 */
const CLOSING_TYPES: ReadonlySet<HolidaysTypes.HolidayType> = new Set(['public', 'bank']);

let koreanCalendar: Holidays | undefined;

/** Korean public holidays of a year, date → name, every day of the multi-day ones. */
const koreanPublicHolidays = (year: number): Map<TLocalDate, string> => {
  koreanCalendar ??= new Holidays('KR', { timezone: KRX_TIME_ZONE });
  const holidays = new Map<TLocalDate, string>();
  for (const holiday of koreanCalendar.getHolidays(year, 'en')) {
    if (!CLOSING_TYPES.has(holiday.type)) continue;
    let first: TLocalDate;
    let last: TLocalDate;
    if (holiday.rule === SEOLLAL_RULE && !holiday.substitute) {
      const newYearsDay = holiday.date.slice(0, 10);
      [first, last] = [addDays(newYearsDay, -1), addDays(newYearsDay, 1)];
    } else {
      first = localDateTimeOf(holiday.start, KRX_TIME_ZONE).date;
      last = localDateTimeOf(new Date(holiday.end.getTime() - 1), KRX_TIME_ZONE).date;
    }
    for (let day = first; day <= last; day = addDays(day, 1)) {
      if (!holidays.has(day)) holidays.set(day, holiday.name);
    }
  }
  return holidays;
};

interface KrxYear {
  closures: ReadonlyMap<TLocalDate, string>;
  firstTradingDay: TLocalDate;
}

const computeYear = (year: number): KrxYear => {
  const closures = koreanPublicHolidays(year);
  // Labour Day was not a public holiday before 2026, but the exchange has always closed on it.
  if (!closures.has(localDate(year, 5, 1))) closures.set(localDate(year, 5, 1), 'Labour Day');
  for (const [date, name] of Object.entries(KRX_ONE_OFF_CLOSURES)) {
    if (parseLocalDate(date).year === year && !closures.has(date)) closures.set(date, name);
  }
  const isClosed = (date: TLocalDate) => isWeekend(date) || closures.has(date);
  // The year-end closing day (연말 휴장일): the KRX's last would-be trading day of December is
  // kept for closing the books, so the year's trading ends the business day before.
  let yearEnd = localDate(year, 12, 31);
  while (isClosed(yearEnd)) yearEnd = addDays(yearEnd, -1);
  closures.set(yearEnd, 'Year-end closing day');
  let firstTradingDay = localDate(year, 1, 1);
  while (isClosed(firstTradingDay)) firstTradingDay = addDays(firstTradingDay, 1);
  return { closures, firstTradingDay };
};

const years = new Map<number, KrxYear>();

const krxYear = (year: number): KrxYear => {
  let computed = years.get(year);
  if (!computed) {
    computed = computeYear(year);
    years.set(year, computed);
  }
  return computed;
};

/** Every day of a year the KRX is closed on besides weekends (some fall on weekends), date → reason. */
export const krxClosures = (year: number): ReadonlyMap<TLocalDate, string> => krxYear(year).closures;

/** The KRX's regular-session hours on a Seoul date, or null when it does not trade. */
export const krxHoursOn = (date: TLocalDate): TLocalHours | null => {
  const { closures, firstTradingDay } = krxYear(parseLocalDate(date).year);
  if (isWeekend(date) || closures.has(date)) return null;
  if (Object.hasOwn(KRX_CSAT_DAYS, date)) return CSAT_HOURS;
  if (date === firstTradingDay) return FIRST_TRADING_DAY_HOURS;
  return REGULAR_HOURS;
};
