// A backtest worker thread: runs the tasks the pool sends, one at a time, and answers each with
// its outcome (the curve's buffer moved, not copied) or its error.
import { parentPort } from 'node:worker_threads';
import { runTask, type BacktestTask } from './task.ts';

if (!parentPort) throw new Error('server/backtest/worker.ts runs as a worker thread');
const port = parentPort;

port.on('message', ({ id, task }: { id: number; task: BacktestTask }) => {
  try {
    const outcome = runTask(task);
    // The curve is a fresh Float64Array over its own ArrayBuffer (never shared): moved, not copied.
    port.postMessage({ id, outcome }, [outcome.equity.buffer as ArrayBuffer]);
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
