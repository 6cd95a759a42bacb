// Bar columns sent as comma-separated texts (marketdata/queries.ts readBarColumns), read in one
// pass each: numbers into a typed array without making a string per value, days into dates.

/** 10^0 … 10^15: every one exactly a double. */
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);

/** Digits up to this many make an integer below 2^53, exactly a double. */
const MAX_FAST_DIGITS = 15;

const COMMA = 0x2c;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * The `count` comma-separated values of `text`, each as Number would read it. A plain decimal of
 * at most 15 digits (every price and volume a bar holds) is read as its digits m and its places k:
 * m / 10^k is one correctly rounded division of two exact doubles, so the double nearest the
 * decimal, which is Number's answer (Clinger's fast path). Anything else (a sign, an exponent,
 * more digits, NaN, an empty value) is read by Number from its own slice. Throws when the text
 * holds another number of values.
 */
export const readNumberColumn = (text: string, count: number): Float64Array => {
  const values = new Float64Array(count);
  let at = 0;
  let start = 0;
  const end = text.length;
  while (start <= end) {
    if (at === count) throw new Error(`a column of ${count} values holds more`);
    let digits = 0;
    let places = -1;
    let units = 0;
    let plain = true;
    let i = start;
    for (; i < end; i++) {
      const code = text.charCodeAt(i);
      if (code === COMMA) break;
      if (code >= ZERO && code <= NINE) {
        units = units * 10 + (code - ZERO);
        digits++;
        if (places >= 0) places++;
      } else if (code === DOT && places < 0) places = 0;
      else plain = false;
    }
    values[at++] = plain && digits > 0 && digits <= MAX_FAST_DIGITS ? units / POW10[Math.max(places, 0)]! : Number(text.slice(start, i));
    start = i + 1;
  }
  if (at !== count) throw new Error(`a column of ${count} values holds ${at}`);
  return values;
};

const TWO_DIGITS = Array.from({ length: 32 }, (_, n) => String(n).padStart(2, '0'));

/**
 * 'YYYY-MM-DD' of a day counted from 1970-01-01 (Hinnant's days_from_civil inverted): what
 * toISOString gives for years 0 to 9999, in a tenth of its time.
 */
export const isoDateOfDay = (day: number): string => {
  // Days from 0000-03-01, in eras of 400 years (146,097 days) that begin on March 1st.
  const fromMarch = day + 719_468;
  const era = Math.floor(fromMarch / 146_097);
  const dayOfEra = fromMarch - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const dayOfMonth = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]!}-${TWO_DIGITS[dayOfMonth]!}`;
};

/** The `count` comma-separated days since 1970-01-01 of `text`, as 'YYYY-MM-DD' dates. */
export const readDayColumn = (text: string, count: number): string[] => Array.from(readNumberColumn(text, count), isoDateOfDay);
