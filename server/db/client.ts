// The database: PostgreSQL through postgres.js when DATABASE_URL is set, else embedded PGlite
// under DATA_DIR. Both drivers sit behind DatabaseHandle; nothing outside this module knows
// which one runs.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { ConstructorOptions as JobQueueOptions } from 'pg-boss';
import type { Sql as PostgresSql } from 'postgres';
import type { PGliteOptions } from '@electric-sql/pglite';
import type { Logger } from '../observability/logger.ts';
import { DatabaseNotReachedError, DatabaseUnavailableError, DataDirLockedError, isDatabaseUnavailable } from './errors.ts';
import * as schema from './schema/index.ts';

export { DatabaseNotReachedError, DataDirLockedError };

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/**
 * A transaction, without drizzle's relational queries (`tx.query`): transactions are built with
 * none (see `withLeanTransactions`), and the type says so.
 */
export type Tx = Omit<Parameters<Parameters<Db['transaction']>[0]>[0], 'query'>;
/** What a query module runs on: the database, or the caller's transaction. */
export type Queryable = Db | Tx;

export interface DatabaseHandle {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  /** Applies pending migrations; on Postgres under an advisory lock so N instances apply them once. */
  migrate(): Promise<void>;
  /** True when a trivial query answers. */
  ping(): Promise<boolean>;
  /**
   * Calls onMessage for every NOTIFY on the channel, and onConnect each time the listening
   * connection is (re)established (notifications sent while it was down are lost, so callers
   * reload what they cache). Resolves to an unsubscribe function.
   */
  listen(channel: string, onMessage: (payload: string) => void, onConnect?: () => void): Promise<() => Promise<void>>;
  /** How pg-boss reaches this database: PGlite's own client, or a small pool of its own on Postgres. */
  jobQueueOptions(): Promise<Pick<JobQueueOptions, 'db' | 'backend' | 'connectionString' | 'max'>>;
  /** Closes the database; calling it again returns the same promise. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string;
  dataDir: string;
  poolSize: number;
}

const MIGRATIONS_FOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Arbitrary constant shared by every instance: the key of the migration advisory lock. */
const MIGRATION_LOCK_KEY = 7_326_501_901;

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * PGlite's buffer cache, in place of initdb's 128MB. The pages it misses are read through Node's
 * fs from the OS page cache, which already holds them, so a large cache of its own mostly keeps a
 * second copy; and each open pays for the whole of it in the wasm memory it sets up: 128MB made
 * an open take about 0.75 s of CPU, 32MB about 0.3 s (this machine, a migrated database).
 */
const PGLITE_SHARED_BUFFERS = '32MB';

/** A compiled WebAssembly module, as PGlite's options take it. */
type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;
/**
 * The runtime's WebAssembly.compile: Node has it, but this project's type libraries (ES2024 and
 * Node's, no DOM) declare no WebAssembly value, only PGlite's types name the module.
 */
const wasmRuntime = (globalThis as unknown as { WebAssembly: { compile: (bytes: Uint8Array) => Promise<WasmModule> } }).WebAssembly;

/** PGlite's WebAssembly, compiled once per process (compiledPgliteWasm). */
const pgliteWasm = new Map<'pglite' | 'initdb', Promise<WasmModule>>();

/**
 * One of PGlite's two WebAssembly modules (the database, and initdb for a new data directory),
 * compiled once in this process and shared by every database it opens: each open otherwise
 * compiles it again from its bytes, and the optimised code V8 makes while one instance runs
 * serves the next. A service opens one database; the suite's workers open one per test server
 * (about a sixth less CPU per open, measured on four opens in a row).
 */
const compiledPgliteWasm = (name: 'pglite' | 'initdb'): Promise<WasmModule> => {
  let compiled = pgliteWasm.get(name);
  if (!compiled) {
    // Beside the package's entry (createRequire: vitest's module runner has no import.meta.resolve).
    const file = path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), `${name}.wasm`);
    compiled = readFile(file).then((bytes) => wasmRuntime.compile(bytes));
    // A failed compile is not kept: the next open tries again.
    compiled.catch(() => pgliteWasm.delete(name));
    pgliteWasm.set(name, compiled);
  }
  return compiled;
};

/** PGlite is one process's database: hold DATA_DIR with a pid lock file, taking over stale ones. */
const lockDataDir = (dir: string): (() => void) => {
  const lockFile = path.join(dir, 'pglite.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new DataDirLockedError(dir, holder);
      }
      rmSync(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
};

const openPglite = async (dataDir: string): Promise<DatabaseHandle> => {
  mkdirSync(dataDir, { recursive: true });
  const unlock = lockDataDir(dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const pgdata = path.join(dataDir, 'pgdata');
    // initdb's module only for a data directory that has no cluster yet (PGlite runs initdb then).
    const initdbWasmModule = existsSync(path.join(pgdata, 'PG_VERSION')) ? undefined : await compiledPgliteWasm('initdb');
    const client = await PGlite.create(pgdata, {
      pgliteWasmModule: await compiledPgliteWasm('pglite'),
      ...(initdbWasmModule ? { initdbWasmModule } : {}),
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    });
    const db = withLeanTransactions(drizzle({ client, schema }));
    let closed: Promise<void> | undefined;
    return {
      db,
      kind: 'pglite',
      migrate: () => migrate(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      ping: async () => {
        try {
          await client.query('select 1');
          return true;
        } catch {
          return false;
        }
      },
      listen: async (channel, onMessage, onConnect) => {
        // In-process: the one connection never drops.
        const unlisten = await client.listen(channel, onMessage);
        onConnect?.();
        return () => unlisten();
      },
      jobQueueOptions: async () => {
        const { fromPglite } = await import('pg-boss');
        return { db: fromPglite(client), backend: 'pglite' };
      },
      close: () =>
        (closed ??= (async () => {
          try {
            await client.close();
          } finally {
            unlock();
          }
        })()),
    };
  } catch (error) {
    unlock();
    throw error;
  }
};

/** Thrown when COMMIT answers ROLLBACK: a statement the body did not wait for had failed. */
export class TransactionRolledBack extends Error {
  override readonly name = 'TransactionRolledBack';
  constructor() {
    super('the transaction was rolled back: one of its statements failed');
  }
}

/**
 * Resolves once every statement begun so far has reached its connection. Statements get there
 * through promise jobs alone, and a tick callback runs only after every pending promise job: a
 * transaction body that returns with statements still unanswered awaits this first, so that its
 * COMMIT cannot overtake them (on either driver). That drizzle and the drivers take a statement
 * that far in promise jobs alone is their internal (contract test in
 * test/integration/db-internals.test.ts).
 */
export const statementsSent = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

/** The writes deferred on each transaction (`defer`) and not yet settled. */
const deferredWrites = new WeakMap<Tx, Promise<unknown>[]>();

/**
 * Sends a write of the transaction without waiting for its answer: the transaction's connection
 * runs its statements in the order they were sent, so whatever the body sends next goes out in
 * the same round trip. Its failure is thrown by `settled(tx)`; unsettled, it still rolls the
 * transaction back (on PostgreSQL, COMMIT answers ROLLBACK: see beginPipelined). A body that
 * returns before its deferred writes are answered awaits statementsSent() first.
 */
export const defer = (tx: Tx, write: Promise<unknown>): void => {
  // Marked handled here, so a body that ends early by another error leaves no unhandled rejection.
  write.catch(() => undefined);
  const writes = deferredWrites.get(tx);
  if (writes) writes.push(write);
  else deferredWrites.set(tx, [write]);
};

/** Every write deferred on the transaction since the last settling answered; the first failure thrown. */
export const settled = async (tx: Tx): Promise<void> => {
  const writes = deferredWrites.get(tx);
  if (!writes) return;
  deferredWrites.delete(tx);
  await Promise.all(writes);
};

/**
 * The driver's own failure of a transaction's connection (no connection to reserve, BEGIN or
 * COMMIT lost with it), marked as the database's: drizzle wraps only the body's statements.
 */
const asDatabaseError = (error: unknown): never => {
  throw isDatabaseUnavailable(error, { fromDatabase: true }) ? new DatabaseUnavailableError(error) : error;
};

/**
 * A transaction whose BEGIN travels with its first statement, and whose COMMIT travels with its
 * last. postgres.js's own `begin` waits for BEGIN's answer before it runs the body, and the
 * body usually waits for its last statement before COMMIT goes out: two round trips that carry
 * nothing, and on a row lock every other transaction waiting for that row waits for them too.
 *
 * Here BEGIN is sent on a reserved connection and the body's statements follow it in the same
 * pipeline (BEGIN fails only with the connection, and then every statement after it fails too,
 * so none can run outside the transaction). A body may return while statements it sent are
 * still unanswered: COMMIT goes out behind them, once every statement begun before the body
 * returned has reached the connection (they get there through promise jobs alone, all run
 * before the next tick), and if one of them failed COMMIT answers ROLLBACK and this throws
 * TransactionRolledBack. A statement begun after that is refused rather than run outside.
 */
const beginPipelined = async <T>(pool: PostgresSql, body: (tx: PostgresSql) => T | Promise<T>): Promise<T> => {
  const connection = await pool.reserve().catch(asDatabaseError);
  let ended = false;
  const refuseAfterEnd = () => {
    if (ended) throw new Error('a statement was sent after its transaction ended');
  };
  // drizzle reads `unsafe` from its transaction's client at every statement, its internal (contract
  // test in test/integration/db-internals.test.ts): the refusal sits on that read.
  const guarded = new Proxy(connection, {
    apply(target, thisArg, args: unknown[]) {
      refuseAfterEnd();
      return Reflect.apply(target, thisArg, args) as unknown;
    },
    get(target, property, receiver) {
      if (property === 'unsafe') refuseAfterEnd();
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  const begun = connection`begin`;
  // Attaching a handler sends the query (postgres.js queries are lazy; contract test in
  // test/integration/db-internals.test.ts); its failure is awaited below.
  begun.catch(() => undefined);
  let reusable = true;
  try {
    const result = await body(guarded);
    await statementsSent();
    ended = true;
    await begun.catch(asDatabaseError);
    const committed = await connection`commit`.catch(asDatabaseError);
    // postgres.js gives the command tag, ROLLBACK for a failed transaction's COMMIT (contract test in
    // test/integration/db-internals.test.ts).
    if (committed.command !== 'COMMIT') throw new TransactionRolledBack();
    return result;
  } catch (error) {
    ended = true;
    // A connection that cannot even roll back is gone: postgres.js has already taken it back.
    await connection`rollback`.catch(() => {
      reusable = false;
    });
    throw error;
  } finally {
    if (reusable) connection.release();
  }
};

/**
 * The client with every statement prepared. drizzle asks postgres.js for unnamed statements
 * unless a query is given a name, and postgres.js sends an unnamed statement with parameters in
 * two round trips (Parse and Describe, then Bind and Execute once the parameter types are back),
 * which Postgres parses and plans each time. Prepared, a statement is parsed once per connection
 * and each later run is one round trip. Connections are recycled (postgres.js's max_lifetime),
 * which bounds how many statements each one keeps. It relies on drizzle's internals: every
 * statement goes out as client.unsafe(text, params, options) and every transaction as
 * client.begin(body) (contract test in test/integration/db-internals.test.ts).
 */
const preparing = (sql: PostgresSql): PostgresSql =>
  new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        const unsafe: PostgresSql['unsafe'] = (query, parameters, options) => target.unsafe(query, parameters, { ...options, prepare: true });
        return unsafe;
      }
      if (property === 'begin') {
        // A transaction's statements run on its own client, which gets the same treatment.
        return (...args: unknown[]) => {
          const body = args.at(-1) as (tx: PostgresSql) => unknown;
          if (args.length === 1) return beginPipelined(target, (tx) => body(preparing(tx)));
          return (target.begin as (...parts: unknown[]) => unknown)(...args.slice(0, -1), (tx: PostgresSql) => body(preparing(tx)));
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });

const openPostgres = async ({ databaseUrl, poolSize }: DatabaseOptions): Promise<DatabaseHandle> => {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const client = postgres(databaseUrl, { max: poolSize, onnotice: () => undefined });
  const db = withLeanTransactions(drizzle({ client: preparing(client), schema }));
  let closed: Promise<void> | undefined;
  return {
    db,
    kind: 'postgres',
    migrate: async () => {
      // A single dedicated connection holds the session-level advisory lock for the whole run. Its
      // connect is bounded (start-up tries again while DB_CONNECT_TIMEOUT_SEC lasts).
      const lockClient = postgres(databaseUrl, { max: 1, onnotice: () => undefined, connect_timeout: 10 });
      try {
        await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        await migrate(drizzle({ client: lockClient }), { migrationsFolder: MIGRATIONS_FOLDER });
        await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
      } finally {
        await lockClient.end({ timeout: 5 });
      }
    },
    ping: async () => {
      try {
        await client`select 1`;
        return true;
      } catch {
        return false;
      }
    },
    listen: async (channel, onMessage, onConnect) => {
      const subscription = await client.listen(channel, onMessage, onConnect);
      return () => subscription.unlisten();
    },
    // pg-boss brings its own pg pool: a quarter of DB_POOL_SIZE (at least 2) beside postgres.js's.
    jobQueueOptions: () => Promise.resolve({ connectionString: databaseUrl, max: Math.max(2, Math.ceil(poolSize / 4)) }),
    close: () => (closed ??= client.end({ timeout: 5 })),
  };
};

export const openDatabase = (options: DatabaseOptions): Promise<DatabaseHandle> =>
  options.databaseUrl ? openPostgres(options) : openPglite(options.dataDir);

export interface ReachOptions {
  /** DB_CONNECT_TIMEOUT_SEC: how long to keep trying; 0 tries once. */
  timeoutSec: number;
  logger: Pick<Logger, 'warn'>;
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds of a monotonic clock. */
  now?: () => number;
}

/** The first wait, doubled after every failure up to the longest. */
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5000;

/**
 * Why the database cannot be reached, for a log line and an operator: the innermost error's code
 * and message. Driver messages name the host and port only; a URL's credentials, should one ever
 * appear, are cut out.
 */
const reasonOf = (error: unknown): string => {
  let inner: unknown = error;
  for (;;) {
    const next: unknown = inner instanceof AggregateError ? inner.errors[0] : inner instanceof Error ? inner.cause : undefined;
    if (!(next instanceof Error)) break;
    inner = next;
  }
  const { code, message } = inner instanceof Error ? (inner as Error & { code?: unknown }) : { code: undefined, message: String(inner) };
  const text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  return text.replace(/\/\/[^/@\s]*@/g, '//');
};

/**
 * Runs `attempt` (the first connect and migrate) until the database answers: a failure that says
 * the database cannot be reached (refused, not resolvable, starting up, too many clients) is
 * logged with its reason and tried again after a wait that doubles up to 5 s, for at most
 * `timeoutSec`; then DatabaseNotReachedError. Any other failure (a wrong password, a missing
 * database) is thrown at once: waiting would not change it.
 */
export const untilReachable = async <T>(attempt: () => Promise<T>, { timeoutSec, logger, sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), now = () => performance.now() }: ReachOptions): Promise<T> => {
  const deadline = now() + timeoutSec * 1000;
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isDatabaseUnavailable(error, { fromDatabase: true })) throw error;
      const reason = reasonOf(error);
      const left = deadline - now();
      if (left <= 0) throw new DatabaseNotReachedError(timeoutSec, reason);
      const retryInMs = Math.ceil(Math.min(FIRST_WAIT_MS * 2 ** Math.min(attempts - 1, 10), LONGEST_WAIT_MS, left));
      logger.warn({ attempt: attempts, retryInMs, reason, giveUpInSec: Math.ceil(left / 1000) }, 'the database cannot be reached yet; start-up waits for it');
      await sleep(retryInMs);
    }
  }
};

/**
 * Makes the database's transactions lean: drizzle builds each transaction as a database of its
 * own, with a relational query builder for every table of the schema, which cost the order path
 * more CPU than its transaction's statements. The session reads its schema only to build
 * transactions, so without one they are built bare; `db.query` itself, built already, stays.
 * The session and its schema are drizzle's internals (contract test in
 * test/integration/db-internals.test.ts).
 */
const withLeanTransactions = <D extends Db>(db: D): D => {
  const { session } = db as unknown as { session: { schema: unknown } };
  session.schema = undefined;
  return db;
};

/** Queues a NOTIFY; inside a transaction it is delivered only if the transaction commits. */
export const notify = async (db: Queryable, channel: string, payload: string): Promise<void> => {
  await db.execute(sql`select pg_notify(${channel}, ${payload})`);
};

/**
 * Runs a statement written in SQL and returns its rows, whichever driver answers (postgres.js
 * resolves to the rows, PGlite to a result that holds them: drizzle hands on the driver's own
 * answer, contract test in test/integration/db-internals.test.ts).
 */
export const rowsOf = async <T>(db: Queryable, query: SQL): Promise<T[]> => {
  const result: unknown = await db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
};
