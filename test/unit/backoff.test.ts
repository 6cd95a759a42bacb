// The client's reconnect delays: 1, 2, 4 … 30 s, jittered by ±20 %.
import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../client/channels.ts';

describe('backoffMs', () => {
  it('doubles from 1 s up to 30 s', () => {
    const middle = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((attempt) => backoffMs(attempt, middle))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('spreads each delay over ±20 % with the random draw', () => {
    expect(backoffMs(0, () => 0)).toBe(800);
    expect(backoffMs(0, () => 0.999_999)).toBe(1_200);
    expect(backoffMs(9, () => 0)).toBe(24_000);
    expect(backoffMs(9, () => 0.999_999)).toBe(36_000);
  });
});
