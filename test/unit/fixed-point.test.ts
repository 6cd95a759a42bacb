// The ledger's fixed-point amounts (server/portfolio/fixed-point.ts) against decimal.js: exact
// parsing and sums, products and shares rounded half-even at the 18th decimal.
import { describe, expect, it } from 'vitest';
import { ExactDecimal } from '../../server/decimal.ts';
import { fixedPointOf, numberOf, share, textOf, times } from '../../server/portfolio/fixed-point.ts';

describe('fixed-point amounts', () => {
  it('parse and print decimal text exactly, signs and trailing zeros included', () => {
    for (const [text, printed] of [['0', '0'], ['12.5', '12.5'], ['-0.001', '-0.001'], ['100000.000', '100000'], ['0.000000000000000001', '0.000000000000000001'], ['+3', '3'], ['.5', '0.5']] as const) {
      expect(textOf(fixedPointOf(text))).toBe(printed);
    }
    expect(fixedPointOf('0.1') + fixedPointOf('0.2')).toBe(fixedPointOf('0.3'));
    expect(numberOf(fixedPointOf('-2.25'))).toBe(-2.25);
  });

  it('round a 19th decimal half-even, and refuse what is not a decimal', () => {
    expect(textOf(fixedPointOf('0.0000000000000000015'))).toBe('0.000000000000000002');
    expect(textOf(fixedPointOf('0.0000000000000000025'))).toBe('0.000000000000000002');
    expect(textOf(fixedPointOf('0.00000000000000000250001'))).toBe('0.000000000000000003');
    expect(textOf(fixedPointOf('-0.0000000000000000015'))).toBe('-0.000000000000000002');
    for (const bad of ['1e-7', '1.2.3', 'abc', '1,5']) expect(() => fixedPointOf(bad)).toThrow();
  });

  it('multiply and share as decimal.js does, to the 18th decimal', () => {
    const cases = [
      ['0.0001', '91550.25', '3'],
      ['2.5', '-3.3333', '7'],
      ['333.333', '1', '3'],
      ['0.017', '70000', '0.003'],
    ] as const;
    for (const [a, b, c] of cases) {
      expect(textOf(times(fixedPointOf(a), fixedPointOf(b)))).toBe(new ExactDecimal(a).times(b).toDecimalPlaces(18).toFixed());
      expect(textOf(share(fixedPointOf(a), fixedPointOf(b), fixedPointOf(c)))).toBe(new ExactDecimal(a).times(b).dividedBy(c).toDecimalPlaces(18).toFixed());
    }
  });
});
