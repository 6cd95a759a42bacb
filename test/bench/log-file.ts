// The service's log in a benchmark: a file in the run's temp dir, written as production writes it
// (an async pino destination), so the request log costs what it costs in production.
import path from 'node:path';
import { createLogger, logDestination, type Logger } from '../../server/observability/logger.ts';

/** A logger at info into `dir/service.log`; close() flushes and closes the file (once). */
export const fileLogger = (dir: string): { logger: Logger; logFile: string; close: () => Promise<void> } => {
  const logFile = path.join(dir, 'service.log');
  const destination = logDestination(logFile);
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      destination.once('close', () => resolve());
      destination.end();
    }));
  return { logger: createLogger('info', destination), logFile, close };
};
