// How many backtests one user may have running at once in this instance. Every user's runs share
// one worker pool and one queue in front of it, so without a bound one user's loop of requests
// (a sweep is up to BACKTEST_SWEEP_MAX_POINTS runs) would fill the queue and everyone else's run
// would wait behind it. A run past the bound is refused at once rather than queued.
import { AppError } from '../errors.ts';

export interface RunAdmission {
  /** Runs `work` as one of the user's running backtests, or throws 429 when the user has the most already. */
  hold<T>(userId: number, work: () => Promise<T>): Promise<T>;
}

export const createRunAdmission = (maxPerUser: number): RunAdmission => {
  const running = new Map<number, number>();
  return {
    hold: async (userId, work) => {
      // Counted before anything is awaited, so requests that arrive together cannot all pass.
      const now = running.get(userId) ?? 0;
      if (now >= maxPerUser) {
        throw new AppError('RATE_LIMIT_EXCEEDED', `${now} of your backtests are running (at most ${maxPerUser} at once); try again when one has finished`, { retryAfterSec: 1 });
      }
      running.set(userId, now + 1);
      try {
        return await work();
      } finally {
        const left = (running.get(userId) ?? 1) - 1;
        if (left === 0) running.delete(userId);
        else running.set(userId, left);
      }
    },
  };
};
