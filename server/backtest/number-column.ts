// A column of numbers sent as one comma-separated text (marketdata/queries.ts readBarColumns),
// read into a typed array in one pass, without making a string per value.

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
