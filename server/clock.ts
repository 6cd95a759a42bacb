// Time as domain code sees it. Nothing under server/ reads the wall clock directly, so a test can
// stand at any instant (a DST switch, 23:59 UTC before a daily reset, a token's last second).
export interface Clock {
  now(): Date;
  /**
   * Calls `wake` once the clock reads `at` or later; the answer cancels it. A clock that moves by
   * itself needs none: wakeAt() serves it with the event loop's timers. A test's clock has its own,
   * so moving it across an instant rings what waits for it.
   */
  wakeAt?(at: Date, wake: () => void): () => void;
}

export const systemClock = (): Clock => ({ now: () => new Date() });

/** setTimeout's longest delay (about 24.8 days); a later instant is reached in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A wake-up on the event loop's timers, checked against the clock when the timer fires (a timer
 * may fire early, and the clock is the judge of the time): not yet, it waits again for the rest.
 */
const timerWake = (clock: Clock, at: Date, wake: () => void): (() => void) => {
  let timer: NodeJS.Timeout | undefined;
  const waitRest = () => {
    const left = at.getTime() - clock.now().getTime();
    // A wake-up is never a reason to keep the process running.
    timer = setTimeout(check, Math.min(Math.max(0, left), MAX_TIMER_MS)).unref();
  };
  const check = () => {
    if (clock.now() >= at) wake();
    else waitRest();
  };
  waitRest();
  return () => clearTimeout(timer);
};

/** Calls `wake` once `clock` reads `at` or later (never inside this call); the answer cancels it. */
export const wakeAt = (clock: Clock, at: Date, wake: () => void): (() => void) => (clock.wakeAt ? clock.wakeAt(at, wake) : timerWake(clock, at, wake));

/** A clock that stands still until moved: for tests. */
export interface ManualClock extends Clock {
  set(at: Date | string): void;
  advance(ms: number): void;
  wakeAt(at: Date, wake: () => void): () => void;
}

export const manualClock = (start: Date | string = new Date()): ManualClock => {
  let current = new Date(start).getTime();
  const waiting = new Set<{ at: number; wake: () => void }>();
  // What moving the clock reached rings at once, oldest instant first, inside the move.
  const ringDue = () => {
    const due = [...waiting].filter((entry) => entry.at <= current).sort((a, b) => a.at - b.at);
    for (const entry of due) {
      waiting.delete(entry);
      entry.wake();
    }
  };
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at).getTime();
      ringDue();
    },
    advance: (ms) => {
      current += ms;
      ringDue();
    },
    wakeAt: (at, wake) => {
      const entry = { at: at.getTime(), wake };
      waiting.add(entry);
      // Already due: rung after the caller's turn, as a timer of no delay would be.
      if (entry.at <= current) queueMicrotask(ringDue);
      return () => {
        waiting.delete(entry);
      };
    },
  };
};
