// The price chart's opening view (client/console/src/charts/chart-view.ts): the last six months of
// bars with room right of the last one for the markers' labels, and a price axis that never runs
// below zero.
import { describe, expect, it } from 'vitest';
import { nonNegativeAutoscale, OPEN_DAYS, openingRange, rightSpaceBars } from '../../client/console/src/charts/chart-view.ts';

/** `count` daily bars up to `last`, every day (crypto) or weekdays only (stocks). */
const days = (last: string, count: number, weekdaysOnly = false): string[] => {
  const dates: string[] = [];
  for (let at = Date.parse(`${last}T00:00:00Z`); dates.length < count; at -= 86_400_000) {
    const day = new Date(at);
    if (!weekdaysOnly || (day.getUTCDay() !== 0 && day.getUTCDay() !== 6)) dates.unshift(day.toISOString().slice(0, 10));
  }
  return dates;
};

describe('openingRange', () => {
  it('shows crypto’s last 183 daily bars of two years, and room right of the last', () => {
    const dates = days('2026-03-10', 730);
    const range = openingRange(dates);
    expect(range?.from).toBe(730 - 183);
    expect(dates[range?.from ?? 0]).toBe('2025-09-09');
    expect(range?.to).toBe(729 + rightSpaceBars(183));
  });

  it('shows about 126 trading days of a stock’s weekdays', () => {
    const dates = days('2026-03-10', 500, true);
    const range = openingRange(dates);
    const shown = dates.length - (range?.from ?? 0);
    expect(shown).toBeGreaterThanOrEqual(126);
    expect(shown).toBeLessThanOrEqual(132);
  });

  it('shows every bar of a history shorter than six months', () => {
    expect(openingRange(days('2026-03-10', 40))).toEqual({ from: 0, to: 39 + rightSpaceBars(40) });
    expect(openingRange(['2026-03-10'])).toEqual({ from: 0, to: 3 });
  });

  it('takes another number of days, and has nothing to show without bars', () => {
    expect(openingRange(days('2026-03-10', 100), 10)?.from).toBe(90);
    expect(openingRange([])).toBeUndefined();
    expect(OPEN_DAYS).toBe(183);
  });
});

describe('rightSpaceBars', () => {
  it('keeps a few bars at least, and a share of many', () => {
    expect(rightSpaceBars(1)).toBe(3);
    expect(rightSpaceBars(20)).toBe(3);
    expect(rightSpaceBars(183)).toBe(22);
  });
});

describe('nonNegativeAutoscale', () => {
  const margins = { top: 0.1, bottom: 0.1 };
  /** The price at the axis' bottom edge, for the scale margins (fractions of the height). */
  const bottomOf = (range: { minValue: number; maxValue: number }) => range.minValue - ((range.maxValue - range.minValue) * margins.bottom) / (1 - margins.top - margins.bottom);

  it('raises the lowest price of a wide range so the axis ends at zero, not below, with the bars still in view', () => {
    const info = nonNegativeAutoscale({ priceRange: { minValue: 0.5, maxValue: 10 }, margins: { above: 12, below: 12 } }, margins);
    expect(bottomOf({ minValue: 0.5, maxValue: 10 })).toBeLessThan(0);
    expect(info?.priceRange && bottomOf(info.priceRange)).toBeCloseTo(0, 12);
    expect(info?.priceRange?.minValue).toBeCloseTo((10 * 0.1) / 0.9, 12);
    expect(info?.priceRange?.maxValue).toBe(10);
    expect(info?.margins).toEqual({ above: 12, below: 0 });
  });

  it('leaves a range whose margin stays above zero as it is', () => {
    const info = { priceRange: { minValue: 90, maxValue: 110 }, margins: { above: 12, below: 12 } };
    expect(nonNegativeAutoscale(info, margins)).toBe(info);
  });

  it('passes no data through', () => {
    expect(nonNegativeAutoscale(null)).toBeNull();
    const empty = { priceRange: null };
    expect(nonNegativeAutoscale(empty)).toBe(empty);
  });
});
