// Work that one instance must do at a time (the price walk and the matching of resting orders),
// run on a timer under a lease in Postgres: the holder renews it on every round; when the holder
// dies it stops renewing and another instance takes the lease over once it has expired.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { Logger } from '../../observability/logger.ts';
import { releaseLease, takeLease } from '../../db/leases.ts';

export interface LeasedLoop {
  /** Takes or renews the lease and, when held, does one round of the work; tells whether it was held. */
  runOnce(): Promise<boolean>;
  /** Whether the last round held the lease. */
  holding(): boolean;
  start(): void;
  /** Stops the timer, waits for a round in progress, and gives the lease up if held. */
  stop(): Promise<void>;
}

export interface LeasedLoopOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  name: string;
  /** This instance's holder id. */
  holder: string;
  ttlMs: number;
  intervalMs: number;
  work: () => Promise<void>;
}

export const createLeasedLoop = ({ db, clock, logger, name, holder, ttlMs, intervalMs, work }: LeasedLoopOptions): LeasedLoop => {
  let held = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> | undefined;

  const runOnce = async () => {
    const was = held;
    held = await takeLease(db, { name, holder, now: clock.now(), ttlMs });
    if (held !== was) logger.info({ lease: name, holder }, held ? 'lease taken' : 'lease lost');
    if (held) await work();
    return held;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = runOnce()
        .catch((error: unknown) => logger.error({ err: error, lease: name }, 'leased round failed'))
        .finally(() => {
          round = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };

  return {
    runOnce,
    holding: () => held,
    start: () => {
      if (timer !== undefined || stopped) return;
      schedule();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await round;
      if (held) {
        held = false;
        // Giving the lease up only spares the next holder its expiry: a stop that cannot reach
        // the database (it is down, or already closed) still stops, and the lease runs out.
        await releaseLease(db, { name, holder }).catch((error: unknown) => logger.warn({ err: error, lease: name }, 'could not give the lease up; it expires by itself'));
      }
    },
  };
};
