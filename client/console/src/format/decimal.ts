// Exact decimal rounding of the numbers the API sends (JSON numbers): it works on a number's
// shortest decimal form (what JSON carried), never on binary floating point, so 1.005 to two
// decimals is 1.01 and no last digit drifts. Pure: the console's views and the unit tests use it.

/** A rounded value: its sign after rounding (0 when it rounds to zero) and its grouped digits without a sign. */
export interface Rounded {
  readonly sign: -1 | 0 | 1;
  readonly digits: string;
}

/** The typographic minus (U+2212) the console shows before negative numbers. */
export const MINUS = '\u2212';

/** `value` as integer digits and a scale (value = digits × 10^-scale), from its shortest decimal form. */
const partsOf = (value: number): { negative: boolean; digits: bigint; scale: number } => {
  const [mantissa = '0', exponent = '0'] = String(Math.abs(value)).split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const scale = fraction.length - Number(exponent);
  const digits = BigInt(whole + fraction);
  return scale < 0 ? { negative: value < 0, digits: digits * 10n ** BigInt(-scale), scale: 0 } : { negative: value < 0, digits, scale };
};

/** How many decimals a step (a tick or a lot size) has: 0.01 → 2, 0.5 → 1, 1 → 0, 1e-8 → 8. */
export const decimalsOf = (step: number): number => {
  const { digits, scale } = partsOf(step);
  let decimals = scale;
  for (let rest = digits; decimals > 0 && rest % 10n === 0n; rest /= 10n) decimals -= 1;
  return decimals;
};

const group = (integer: string): string => integer.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * `value` × 10^shift rounded half away from zero to `decimals` places, grouped by thousands
 * (`shift` 2 turns a fraction into a percentage without a float multiplication).
 */
export const round = (value: number, decimals: number, shift = 0): Rounded => {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  const parts = partsOf(value);
  const scale = parts.scale - shift;
  let digits = parts.digits;
  if (scale > decimals) {
    const divisor = 10n ** BigInt(scale - decimals);
    const rest = digits % divisor;
    digits = digits / divisor + (2n * rest >= divisor ? 1n : 0n);
  } else {
    digits *= 10n ** BigInt(decimals - scale);
  }
  const text = digits.toString().padStart(decimals + 1, '0');
  const integer = decimals === 0 ? text : text.slice(0, -decimals);
  const shown = decimals === 0 ? group(integer) : `${group(integer)}.${text.slice(-decimals)}`;
  return { sign: digits === 0n ? 0 : parts.negative ? -1 : 1, digits: shown };
};

/** `value` to exactly `decimals` places, grouped, with a minus only when it does not round to zero. */
export const fixed = (value: number, decimals: number): string => {
  const { sign, digits } = round(value, decimals);
  return sign < 0 ? `${MINUS}${digits}` : digits;
};

/** `value` to at most `decimals` places, trailing zeros dropped (a quantity without an instrument). */
export const upTo = (value: number, decimals: number): string => fixed(value, decimals).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
