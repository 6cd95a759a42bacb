// Background work. Runs inside the API process (WORKERS_IN_PROCESS=true, the default) or alone
// (`npm run worker`). Today it holds the periodic auth sweep; the job queue (pg-boss) joins here.
import type { Services } from '../services.ts';
import { sweepExpiredAuthRows } from './auth-sweep.ts';

const SWEEP_INTERVAL_MS = 60 * 60_000;

export interface Workers {
  stop(): Promise<void>;
}

export const startWorkers = (services: Services): Workers => {
  const { db, config, logger, clock } = services;
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = sweepExpiredAuthRows({ db, loginWindowMin: config.LOGIN_WINDOW_MIN, now: clock.now() })
      .then((removed) => logger.info({ job: 'auth-sweep', ...removed }, 'job done'))
      .catch((error: unknown) => logger.error({ err: error, job: 'auth-sweep' }, 'job failed'));
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  logger.info({ jobs: ['auth-sweep'] }, 'workers started');
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
