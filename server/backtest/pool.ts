// The backtest worker pool: long runs go to worker threads, so no backtest holds the event loop
// other requests need. Workers start on first use; each runs one task at a time; tasks wait in
// one queue; a worker that dies is replaced and its task fails with the error.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../observability/logger.ts';
import type { BacktestTask, TaskOutcome } from './task.ts';

const WORKER_SCRIPT = new URL('./worker.ts', import.meta.url);

interface Job {
  id: number;
  task: BacktestTask;
  resolve: (outcome: TaskOutcome) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export interface BacktestPool {
  run(task: BacktestTask): Promise<TaskOutcome>;
  close(): Promise<void>;
}

export const createBacktestPool = ({ size, logger }: { size: number; logger: Logger }): BacktestPool => {
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  const dispatch = () => {
    for (const slot of slots) {
      if (slot.job) continue;
      const job = queue.shift();
      if (!job) return;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, task: job.task });
    }
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(WORKER_SCRIPT), job: undefined };
    slot.worker.on('message', (message: { id: number; outcome?: TaskOutcome; error?: string }) => {
      const job = slot.job;
      slot.job = undefined;
      if (job && job.id === message.id) {
        if (message.outcome) job.resolve(message.outcome);
        else job.reject(new Error(message.error ?? 'the backtest failed'));
      }
      dispatch();
    });
    slot.worker.on('error', (error: unknown) => {
      logger.error({ err: error }, 'a backtest worker failed');
      slot.job?.reject(error instanceof Error ? error : new Error(String(error)));
      slot.job = undefined;
    });
    slot.worker.on('exit', () => {
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      slot.job?.reject(new Error('the backtest worker stopped'));
      slot.job = undefined;
      if (!closed && queue.length > 0) {
        slots.push(spawn());
        dispatch();
      }
    });
    return slot;
  };

  return {
    run: (task) =>
      new Promise<TaskOutcome>((resolve, reject) => {
        if (closed) {
          reject(new Error('the backtest pool is closed'));
          return;
        }
        queue.push({ id: nextId++, task, resolve, reject });
        if (slots.length < size && slots.every((slot) => slot.job)) slots.push(spawn());
        dispatch();
      }),
    close: async () => {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the backtest pool is closed'));
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
};
