// What the benchmarks share: their integer settings from the environment. Nothing is imported
// here, so a load-generator child that needs only this loads nothing of the service.

/** A positive integer setting, or its default when unset; anything else stops the bench. */
export const positiveInt = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** A figure for a table: fixed digits, or '-' when there is none. */
export const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

export interface CleanupStep {
  what: string;
  run: () => Promise<void> | void;
}

/** What a bench starts, to undo last first, once: push steps to `cleanups`; `cleanUp` runs them. */
export const createCleanups = () => {
  const cleanups: CleanupStep[] = [];
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const step of cleanups.reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`cleanup (${step.what}) failed:`, error);
        }
      }
    })());
  return { cleanups, cleanUp };
};

/**
 * Runs a bench's main: it cleans up whether main ends, crashes (exit code 1) or is interrupted
 * with Ctrl-C (exit code 130); `stopChildren` ends the child processes it started, by their PIDs.
 */
export const runBench = async (main: () => Promise<void>, { cleanUp, stopChildren = () => undefined }: { cleanUp: () => Promise<void>; stopChildren?: () => void }): Promise<void> => {
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    console.error('interrupted: cleaning up');
    stopChildren();
    void cleanUp().finally(() => process.exit(130));
  });
  try {
    await main();
  } catch (error) {
    if (!interrupted) console.error('bench crashed:', error);
    process.exitCode = 1;
  } finally {
    stopChildren();
    await cleanUp();
  }
};

/**
 * DATABASE_URL, the admin URL a PostgreSQL-only bench creates its database with; without it, says
 * how to run the bench and answers undefined (the bench then ends with nothing measured).
 */
export const postgresAdminUrl = (bench: string, why: string): string | undefined => {
  const url = process.env.DATABASE_URL;
  if (url) return url;
  console.log(`The ${bench} benchmark needs PostgreSQL (${why}): set DATABASE_URL to an admin URL, e.g.`);
  console.log(`  DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node ${process.argv[1] ? process.argv[1].replace(`${process.cwd()}/`, '') : 'test/bench/<bench>.ts'}`);
  console.log('(a fresh database is created for the run and dropped afterwards). Nothing was measured.');
  return undefined;
};
