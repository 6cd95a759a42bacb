// A backtest worker thread: runs the jobs the pool sends, one at a time, and answers each with
// its outcomes (the curves' buffers moved, not copied) or its error.
import { parentPort } from 'node:worker_threads';
import { runJob, type BacktestJob } from './task.ts';

if (!parentPort) throw new Error('server/backtest/worker.ts runs as a worker thread');
const port = parentPort;

port.on('message', ({ id, job }: { id: number; job: BacktestJob }) => {
  try {
    const outcomes = runJob(job);
    // Each curve is a fresh Float64Array over its own ArrayBuffer (never shared): moved, not copied.
    port.postMessage({ id, outcomes }, outcomes.map((outcome) => outcome.equity.buffer as ArrayBuffer));
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
