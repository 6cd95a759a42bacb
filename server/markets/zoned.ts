// Civil (wall-clock) dates and times and their conversion to and from instants in an IANA time
// zone, using the zone data built into Node's Intl. The one place that knows about UTC offsets.

/** A calendar date with no zone, 'YYYY-MM-DD'. */
export type TLocalDate = string;

/** A wall-clock time of day, 'HH:MM' or 'HH:MM:SS' (24-hour; '24:00' is the end of the day). */
export type TLocalTime = string;

/** A span of wall-clock time within one local date: a trading session's bells. */
export interface TLocalHours {
  opens: TLocalTime;
  closes: TLocalTime;
}

export interface TLocalDateTime {
  date: TLocalDate;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const MS_PER_DAY = 86_400_000;

/**
 * Milliseconds since the epoch of a wall-clock reading taken as if it were UTC. `Date.UTC` maps
 * years 0–99 to 1900–1999, so the year is set separately; out-of-range fields roll over.
 */
const wallClockMs = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number => {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
};

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

const formatDate = (year: number, month: number, day: number): TLocalDate => `${pad(year, 4)}-${pad(month)}-${pad(day)}`;

/** The civil date of a wall-clock reading made by `wallClockMs`. */
const dateOfWallClock = (ms: number): TLocalDate => {
  const date = new Date(ms);
  return formatDate(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
};

const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Splits a local date, refusing anything that is not a real 'YYYY-MM-DD' day (2025-02-29). */
export const parseLocalDate = (date: TLocalDate): { year: number; month: number; day: number } => {
  const match = LOCAL_DATE.exec(date);
  if (match) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (dateOfWallClock(wallClockMs(year, month, day)) === date) return { year, month, day };
  }
  throw new RangeError(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
};

const LOCAL_TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;

const parseLocalTime = (time: TLocalTime): { hour: number; minute: number; second: number } => {
  const match = LOCAL_TIME.exec(time);
  if (match) {
    const [hour, minute, second] = [Number(match[1]), Number(match[2]), Number(match[3] ?? '0')];
    const endOfDay = hour === 24 && minute === 0 && second === 0;
    if (endOfDay || (hour < 24 && minute < 60 && second < 60)) return { hour, minute, second };
  }
  throw new RangeError(`not a time of day (HH:MM[:SS]): ${JSON.stringify(time)}`);
};

/** The local date of a year, month (1–12) and day, refused when no such day exists. */
export const localDate = (year: number, month: number, day: number): TLocalDate => {
  const date = formatDate(year, month, day);
  parseLocalDate(date);
  return date;
};

export const addDays = (date: TLocalDate, days: number): TLocalDate => {
  const { year, month, day } = parseLocalDate(date);
  return dateOfWallClock(wallClockMs(year, month, day + days));
};

/** 0 = Sunday … 6 = Saturday, as `Date#getUTCDay`. */
export const weekdayOf = (date: TLocalDate): number => {
  const { year, month, day } = parseLocalDate(date);
  return new Date(wallClockMs(year, month, day)).getUTCDay();
};

export const isWeekend = (date: TLocalDate): boolean => {
  const weekday = weekdayOf(date);
  return weekday === 0 || weekday === 6;
};

// Building a DateTimeFormat is far slower than using one, and the order gates ask on every order.
const formatters = new Map<string, Intl.DateTimeFormat>();

const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
};

/** The zone's offset from UTC at an instant, in milliseconds (New York in winter: −5 h). */
export const utcOffsetMs = (at: Date, timeZone: string): number => {
  // Crypto's calendar runs in UTC, on every order: no formatter needed.
  if (timeZone === 'UTC') return 0;
  const fields: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {};
  let beforeChrist = false;
  for (const part of formatterFor(timeZone).formatToParts(at)) {
    // Intl counts years before 1 CE up from 1 BC, with the era beside them.
    if (part.type === 'era') beforeChrist = part.value.startsWith('B');
    else if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const { year = NaN, month = NaN, day = NaN, hour = NaN, minute = NaN, second = NaN } = fields;
  const wallClock = wallClockMs(beforeChrist ? 1 - year : year, month, day, hour, minute, second);
  // Intl reads whole seconds; the offset is the difference between the two second-aligned clocks.
  const atSecond = Math.floor(at.getTime() / 1000) * 1000;
  return wallClock - atSecond;
};

/** What a clock in `timeZone` shows at the instant `at`. */
export const localDateTimeOf = (at: Date, timeZone: string): TLocalDateTime => {
  const wallClock = new Date(at.getTime() + utcOffsetMs(at, timeZone));
  return {
    date: formatDate(wallClock.getUTCFullYear(), wallClock.getUTCMonth() + 1, wallClock.getUTCDate()),
    hour: wallClock.getUTCHours(),
    minute: wallClock.getUTCMinutes(),
    second: wallClock.getUTCSeconds(),
    millisecond: wallClock.getUTCMilliseconds(),
  };
};

/**
 * The instant a clock in `timeZone` shows `time` on `date`. A reading that happens twice (the hour
 * repeated when DST ends) is its first occurrence; one that never happens (the hour skipped when
 * DST starts) is moved forward by the length of the gap, 02:30 → 03:30: Temporal's "compatible"
 * disambiguation, so no wall-clock reading is refused.
 */
export const instantAt = (reading: { date: TLocalDate; time: TLocalTime; timeZone: string }): Date => {
  // A pure function of its reading, asked for the same few session bounds on every order.
  const key = `${reading.timeZone} ${reading.date} ${reading.time}`;
  let instant = instants.get(key);
  if (instant === undefined) {
    if (instants.size >= INSTANTS_CACHED) instants.clear();
    instant = computeInstantAt(reading).getTime();
    instants.set(key, instant);
  }
  return new Date(instant);
};

const INSTANTS_CACHED = 4096;
const instants = new Map<string, number>();

const computeInstantAt = ({ date, time, timeZone }: { date: TLocalDate; time: TLocalTime; timeZone: string }): Date => {
  const { year, month, day } = parseLocalDate(date);
  const { hour, minute, second } = parseLocalTime(time);
  const wallClock = wallClockMs(year, month, day, hour, minute, second);
  // Zones change offset at most once in any two days, so the offsets a day either side are the
  // only ones that can apply.
  const offsetBefore = utcOffsetMs(new Date(wallClock - MS_PER_DAY), timeZone);
  const offsetAfter = utcOffsetMs(new Date(wallClock + MS_PER_DAY), timeZone);
  const candidates = [offsetBefore, offsetAfter]
    .map((offset) => wallClock - offset)
    .filter((instant) => utcOffsetMs(new Date(instant), timeZone) === wallClock - instant);
  if (candidates.length === 0) return new Date(wallClock - offsetBefore);
  return new Date(Math.min(...candidates));
};
