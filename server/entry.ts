// What the three entry points (server, worker, CLI) share: how a failure ends the process, and
// how a shutdown signal stops it once.
import { ConfigError } from './config.ts';
import { DatabaseNotReachedError, DataDirLockedError } from './db/client.ts';

/** A command refused what it was given: its message is all the operator needs, no stack. */
export class CommandError extends Error {}

/** Prints one line to stderr and exits non-zero. */
export const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

/** The line an operator reads when start-up or a command fails. */
const describe = (error: unknown): string => {
  if (error instanceof ConfigError) return `configuration error: ${error.message}`;
  if (error instanceof DataDirLockedError || error instanceof DatabaseNotReachedError || error instanceof CommandError) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
};

/** Runs an entry point's main, ending the process with the described error when it fails. */
export const runEntry = (main: () => Promise<void>): void => {
  main().catch((error: unknown) => fail(describe(error)));
};

/** Calls stop once on the first SIGTERM or SIGINT, then exits 0 (or 1 when stopping fails). */
export const stopOnSignal = (stop: (signal: NodeJS.Signals) => Promise<void>): void => {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    stop(signal)
      .then(() => process.exit(0))
      .catch((error: unknown) => fail(`shutdown failed: ${describe(error)}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
};
