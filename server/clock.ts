// Time as domain code sees it. Nothing under server/ reads the wall clock directly, so a test can
// stand at any instant (a DST switch, 23:59 UTC before a daily reset, a token's last second).
export interface Clock {
  now(): Date;
}

export const systemClock = (): Clock => ({ now: () => new Date() });

/** A clock that stands still until moved: for tests. */
export interface ManualClock extends Clock {
  set(at: Date | string): void;
  advance(ms: number): void;
}

export const manualClock = (start: Date | string = new Date()): ManualClock => {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at).getTime();
    },
    advance: (ms) => {
      current += ms;
    },
  };
};
