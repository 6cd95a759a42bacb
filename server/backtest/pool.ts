// The backtest worker pool: long runs go to worker threads, so no backtest holds the event loop
// other requests need. Workers start on first use; each runs one job at a time; jobs wait in
// one queue; a worker that dies is replaced and its job fails with the error.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../observability/logger.ts';
import type { BacktestJob, MetricsSpan, RunSummary, TaskAnswer, TaskOutcome, TaskRequest } from './task.ts';

const WORKER_SCRIPT = new URL('./worker.ts', import.meta.url);

interface Job {
  id: number;
  request: TaskRequest;
  resolve: (answer: TaskAnswer) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export interface BacktestPool {
  /** Runs the job in a worker thread: its outcomes, in the order of its runs. */
  run(job: BacktestJob): Promise<TaskOutcome[]>;
  /** Runs the job in a worker thread: its runs' summaries over the span, in the order of its runs. */
  summarize(job: BacktestJob, span: MetricsSpan): Promise<RunSummary[]>;
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
      slot.worker.postMessage({ id: job.id, request: job.request });
    }
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(WORKER_SCRIPT), job: undefined };
    slot.worker.on('message', (message: { id: number; answer?: TaskAnswer; error?: string }) => {
      const job = slot.job;
      slot.job = undefined;
      if (job && job.id === message.id) {
        if (message.answer) job.resolve(message.answer);
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

  const submit = (request: TaskRequest) =>
    new Promise<TaskAnswer>((resolve, reject) => {
      if (closed) {
        reject(new Error('the backtest pool is closed'));
        return;
      }
      queue.push({ id: nextId++, request, resolve, reject });
      if (slots.length < size && slots.every((slot) => slot.job)) slots.push(spawn());
      dispatch();
    });

  return {
    // The worker answers each kind of request with that kind's answer (worker.ts).
    run: (job) => submit({ kind: 'outcomes', job }) as Promise<TaskOutcome[]>,
    summarize: (job, span) => submit({ kind: 'summaries', job, span }) as Promise<RunSummary[]>,
    close: async () => {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the backtest pool is closed'));
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
};
