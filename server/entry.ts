// What the three entry points (server, worker, CLI) share: how a failure ends the process, how a
// shutdown signal stops it once, and how the service's modules are loaded. This module and the
// settings (config.ts) are all an entry point loads before the settings are read: a bad setting
// or a command's usage is answered in a fraction of a second, without the drivers and the areas.
import { enableCompileCache, registerHooks, type ResolveHookContext, type ResolveFnOutput } from 'node:module';
import { ConfigError } from './config.ts';
import { DatabaseNotReachedError, DataDirLockedError } from './db/errors.ts';

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

const DRIZZLE = '/node_modules/drizzle-orm/';

/**
 * Where an import made inside drizzle-orm by a relative `.js` path leads, as an ES module (the
 * package is `"type": "module"`, with no package.json below its root); undefined for any other
 * import. Node 24.9 finds a module's format by reading its package's package.json, and for
 * drizzle-orm parses all 179 KB of it again (its exports map is read eagerly) for each of the
 * hundred files the service loads: about a third of a start's CPU.
 */
export const drizzleModuleOf = (specifier: string, parentURL: string | undefined): ResolveFnOutput | undefined => {
  if (parentURL === undefined || !parentURL.includes(DRIZZLE) || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) return undefined;
  return { url: new URL(specifier, parentURL).href, format: 'module', shortCircuit: true };
};

let hooked = false;

/**
 * Loads the service's modules (a dynamic import of the entry point's choosing) the quick way:
 * drizzle-orm's own imports resolved by `drizzleModuleOf`, and Node's on-disk compile cache on,
 * so that a restart reuses the compiled and type-stripped code of the few hundred modules instead
 * of making it again. The cache lives where NODE_COMPILE_CACHE says, else in the system's
 * temporary directory; an entry whose source changed is made again.
 */
export const loadModules = <T>(load: () => Promise<T>): Promise<T> => {
  if (!hooked) {
    hooked = true;
    registerHooks({ resolve: (specifier: string, context: ResolveHookContext, next) => drizzleModuleOf(specifier, context.parentURL) ?? next(specifier, context) });
  }
  enableCompileCache();
  return load();
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
