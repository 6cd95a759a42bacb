// A stream's silence watchdog driven by a test: its clock moved a round at a time.
import type { ManualClock } from '../../server/clock.ts';
import { waitFor } from './wait.ts';

/**
 * Bounds no healthy call or stream comes near, even on a loaded machine: per REST call, and the
 * silence after which a stream is dropped (its pings go at a quarter of it). The silence watchdog
 * has tests of its own, on a clock the test moves.
 */
export const ROOMY_TIMEOUT_MS = 20_000;
export const ROOMY_SILENCE_SECONDS = 30;
/** The watchdog's rounds: a quarter of the silence apart. */
export const ROUND_MS = (ROOMY_SILENCE_SECONDS * 1_000) / 4;

/**
 * Moves the watchdog's clock a round at a time until `dropped` finds the stream's drop (once past
 * the silence with nothing heard), then leaves it still: the new connection's rounds never come.
 * Answers what `dropped` found (the drop's log line).
 */
export const advanceUntilDropped = <T>(clock: ManualClock, roundMs: number, dropped: () => T | undefined): Promise<T> =>
  waitFor(
    () => {
      const drop = dropped();
      if (drop === undefined) clock.advance(roundMs);
      return Promise.resolve(drop);
    },
    (drop) => drop !== undefined,
  ) as Promise<T>;
