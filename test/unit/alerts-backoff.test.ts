// The retry schedule of alert deliveries: doubling, capped, jittered within bounds, bounded in count.
import { describe, expect, it } from 'vitest';
import { backoffSchedule, checkRetryPolicy, retryDelayMs } from '../../server/alerts/backoff.ts';

const policy = { attempts: 6, baseMs: 100, maxMs: 1_000 };

describe('retryDelayMs', () => {
  it('doubles from the base: half of each wait is fixed, half is jitter', () => {
    expect([1, 2, 3].map((retry) => retryDelayMs(retry, policy, 0))).toEqual([50, 100, 200]);
    expect([1, 2, 3].map((retry) => retryDelayMs(retry, policy, 0.999_999))).toEqual([100, 200, 400]);
    expect(retryDelayMs(2, policy, 0.5)).toBe(150);
  });

  it('never waits longer than the cap, however many retries', () => {
    expect(retryDelayMs(5, policy, 0.999_999)).toBe(1_000);
    expect(retryDelayMs(5, policy, 0)).toBe(500);
    expect(retryDelayMs(5_000, policy, 0.5)).toBe(750);
  });

  it('waits nothing with a zero base, and keeps an out-of-range random inside the bounds', () => {
    expect(retryDelayMs(3, { baseMs: 0, maxMs: 0 }, 0.7)).toBe(0);
    expect(retryDelayMs(1, policy, -1)).toBe(50);
    expect(retryDelayMs(1, policy, 7)).toBe(100);
  });
});

describe('backoffSchedule', () => {
  it('has one wait per retry, none after the last attempt', () => {
    expect(backoffSchedule(policy, () => 0)).toEqual([50, 100, 200, 400, 500]);
    expect(backoffSchedule({ ...policy, attempts: 1 }, () => 0)).toEqual([]);
  });

  it('spreads with the jitter source and stays inside [ceiling / 2, ceiling]', () => {
    const ceilings = [100, 200, 400, 800, 1_000];
    for (let run = 0; run < 50; run += 1) {
      backoffSchedule(policy).forEach((wait, index) => {
        expect(wait).toBeGreaterThanOrEqual(ceilings[index]! / 2);
        expect(wait).toBeLessThanOrEqual(ceilings[index]!);
      });
    }
  });
});

describe('checkRetryPolicy', () => {
  it('refuses a policy that never tries or waits backwards', () => {
    expect(() => checkRetryPolicy({ attempts: 0, baseMs: 1, maxMs: 2 })).toThrow(RangeError);
    expect(() => checkRetryPolicy({ attempts: 1.5, baseMs: 1, maxMs: 2 })).toThrow(RangeError);
    expect(() => checkRetryPolicy({ attempts: 3, baseMs: 10, maxMs: 2 })).toThrow(RangeError);
    expect(() => checkRetryPolicy({ attempts: 3, baseMs: Number.NaN, maxMs: 2 })).toThrow(RangeError);
    expect(checkRetryPolicy(policy)).toBe(policy);
  });
});
