// Wake-ups on the clock's time: a test's clock rings what waits when it is moved across the
// instant (never by itself, and never inside the call that arms it); other clocks are served by
// the event loop's timers, checked against the clock when they fire.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { manualClock, wakeAt, type Clock } from '../../server/clock.ts';

describe('a manual clock', () => {
  it('rings once it is moved to the instant or past it, oldest first, and not when canceled', () => {
    const clock = manualClock('2026-11-27T14:00:00.000Z');
    const rung: string[] = [];
    wakeAt(clock, new Date('2026-11-27T14:30:00.000Z'), () => rung.push('open'));
    wakeAt(clock, new Date('2026-11-27T14:20:00.000Z'), () => rung.push('earlier'));
    const cancel = wakeAt(clock, new Date('2026-11-27T14:25:00.000Z'), () => rung.push('canceled'));
    cancel();
    clock.advance(10 * 60_000);
    expect(rung).toEqual([]);
    clock.set('2026-11-27T14:30:00.000Z');
    expect(rung).toEqual(['earlier', 'open']);
    clock.set('2026-11-28T00:00:00.000Z');
    expect(rung).toEqual(['earlier', 'open']);
  });

  it('rings an instant already past after the caller\'s turn', async () => {
    const clock = manualClock('2026-11-27T15:00:00.000Z');
    let rung = false;
    wakeAt(clock, new Date('2026-11-27T14:30:00.000Z'), () => {
      rung = true;
    });
    expect(rung).toBe(false);
    await Promise.resolve();
    expect(rung).toBe(true);
  });
});

describe('a clock without wake-ups of its own', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits on the event loop's timers, and again when a timer fires before the clock says so", () => {
    vi.useFakeTimers();
    let now = new Date('2026-11-27T14:29:00.000Z').getTime();
    const clock: Clock = { now: () => new Date(now) };
    let rung = 0;
    wakeAt(clock, new Date('2026-11-27T14:30:00.000Z'), () => {
      rung += 1;
    });
    // The timer's minute passes while this clock has moved only half of it: not yet.
    vi.advanceTimersByTime(60_000);
    now += 30_000;
    expect(rung).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(rung).toBe(0);
    now += 30_000;
    vi.advanceTimersByTime(30_000);
    expect(rung).toBe(1);
  });
});
