// A bound on concurrent work: at most `concurrency` tasks run at once, the rest wait in arrival
// order, and at most `maxWaiting` wait; beyond that a task is refused at once (QueueFullError)
// rather than queued without end.

export class QueueFullError extends Error {
  constructor(maxWaiting: number) {
    super(`more than ${maxWaiting} tasks waiting`);
    this.name = 'QueueFullError';
  }
}

export interface WorkQueue {
  /** Runs the task when a slot is free (first come, first served); its outcome is the task's. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running and tasks waiting, now. */
  readonly running: number;
  readonly waiting: number;
}

export const createWorkQueue = ({ concurrency, maxWaiting }: { concurrency: number; maxWaiting: number }): WorkQueue => {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer');
  let running = 0;
  // A FIFO of wake-ups: `head` moves instead of shifting the array.
  let waiters: (() => void)[] = [];
  let head = 0;

  const acquire = (): Promise<void> | undefined => {
    if (running < concurrency && head === waiters.length) {
      running++;
      return undefined;
    }
    if (waiters.length - head >= maxWaiting) throw new QueueFullError(maxWaiting);
    // The slot is handed over by `release` (running stays counted), so no newcomer can overtake.
    return new Promise((resolve) => waiters.push(resolve));
  };

  const release = () => {
    const next = waiters[head];
    if (!next) {
      running--;
      return;
    }
    head++;
    // Drop the woken prefix once it is most of the array, so a queue never drained stays small.
    if (head === waiters.length || (head >= 1024 && head * 2 >= waiters.length)) {
      waiters = waiters.slice(head);
      head = 0;
    }
    next();
  };

  return {
    run: async (task) => {
      const waited = acquire();
      if (waited) await waited;
      try {
        return await task();
      } finally {
        release();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiters.length - head;
    },
  };
};
