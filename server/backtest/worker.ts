// A backtest worker thread: runs the jobs the pool sends, one at a time, and answers each with
// its outcomes (the curves' buffers moved, not copied), its runs' summaries, or its error.
import { parentPort } from 'node:worker_threads';
import { runJob, summarizeJob, type TaskRequest } from './task.ts';

if (!parentPort) throw new Error('server/backtest/worker.ts runs as a worker thread');
const port = parentPort;

port.on('message', ({ id, request }: { id: number; request: TaskRequest }) => {
  try {
    if (request.kind === 'summaries') {
      port.postMessage({ id, answer: summarizeJob(request.job, request.span) });
      return;
    }
    const outcomes = runJob(request.job);
    // Each curve is a fresh Float64Array over its own ArrayBuffer (never shared): moved, not copied.
    port.postMessage({ id, answer: outcomes }, outcomes.map((outcome) => outcome.equity.buffer as ArrayBuffer));
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
