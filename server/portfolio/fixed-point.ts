// Exact decimal amounts of the ledger as scaled integers (BigInt, 18 decimals), for the FIFO lots
// of thousands of fills per read: about ten times cheaper than decimal.js for the few sums,
// products and shares a lot needs. Every quantity, price and fee the service stores has fewer
// than 18 decimals, so parsing and sums are exact; a product keeps 18 decimals and a share of a
// lot (cost × taken / qty) is rounded half-even at the 18th, where decimal.js would round at its
// 40th significant digit.
const DECIMALS = 18;
const SCALE = 10n ** BigInt(DECIMALS);

export type FixedPoint = bigint;

/** 10^0 … 10^18. */
const POWERS = Array.from({ length: DECIMALS + 1 }, (_, i) => 10n ** BigInt(i));

export const ZERO: FixedPoint = 0n;

/** Decimal text ('12.5', '-0.001', '3e-7' is not stored) as a scaled integer; more than 18 decimals round half-even. */
export const fixedPointOf = (text: string): FixedPoint => {
  const negative = text.startsWith('-');
  const digits = negative || text.startsWith('+') ? text.slice(1) : text;
  const dot = digits.indexOf('.');
  const whole = dot < 0 ? digits : digits.slice(0, dot);
  const fraction = dot < 0 ? '' : digits.slice(dot + 1);
  if (!/^\d*$/.test(fraction)) throw new RangeError(`not a decimal: ${text}`);
  const all = (whole || '0') + fraction;
  // Most amounts have few digits: read exactly as a number (below 2^53) and scaled, which is much
  // cheaper than a BigInt of an 18-decimal string; longer ones as that string (it throws on
  // anything but digits: an exponent, a second point).
  if (all.length <= 15 && fraction.length <= DECIMALS && /^\d+$/.test(all)) {
    const value = BigInt(Number(all)) * POWERS[DECIMALS - fraction.length]!;
    return negative ? -value : value;
  }
  let value = BigInt((whole || '0') + fraction.slice(0, DECIMALS).padEnd(DECIMALS, '0'));
  if (fraction.length > DECIMALS) value = roundHalfEven(value * 10n + BigInt(fraction[DECIMALS]!), 10n, fraction.slice(DECIMALS + 1).replaceAll('0', '') !== '');
  return negative ? -value : value;
};

/** numerator / denominator (both ≥ 0) rounded half-even; `sticky`: something below the last digit was not zero. */
const roundHalfEven = (numerator: bigint, denominator: bigint, sticky = false): bigint => {
  const quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator) return quotient + 1n;
  if (twice === denominator) return sticky || quotient % 2n === 1n ? quotient + 1n : quotient;
  return quotient;
};

const signedRound = (numerator: bigint, denominator: bigint): bigint => {
  const negative = numerator < 0n !== denominator < 0n;
  const magnitude = roundHalfEven(numerator < 0n ? -numerator : numerator, denominator < 0n ? -denominator : denominator);
  return negative ? -magnitude : magnitude;
};

export const times = (a: FixedPoint, b: FixedPoint): FixedPoint => signedRound(a * b, SCALE);

/** a × b / c, one rounding. */
export const share = (a: FixedPoint, b: FixedPoint, c: FixedPoint): FixedPoint => signedRound(a * b, c);

/** Decimal text without trailing zeros ('12.5', '-0.001', '0'). */
export const textOf = (value: FixedPoint): string => {
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const whole = magnitude / SCALE;
  const fraction = (magnitude % SCALE).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
};

/** The nearest number (through its text: one rounding). */
export const numberOf = (value: FixedPoint): number => Number(textOf(value));

/** About the value, for ratios of many (a win rate, a profit factor): two roundings, no text. */
export const approximately = (value: FixedPoint): number => Number(value) / 1e18;
