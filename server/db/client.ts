// The database: PostgreSQL through postgres.js when DATABASE_URL is set, else embedded PGlite
// under DATA_DIR. Both drivers sit behind DatabaseHandle; nothing outside this module knows
// which one runs.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { ConstructorOptions as JobQueueOptions } from 'pg-boss';
import type { Sql as PostgresSql } from 'postgres';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
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

export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `DATA_DIR ${dir} is in use by process ${pid} (embedded database). Stop it first, ` +
        'use its HTTP routes, or point DATABASE_URL at PostgreSQL to run several processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
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
    const client = await PGlite.create(path.join(dataDir, 'pgdata'));
    const db = drizzle({ client, schema });
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

/**
 * The client with every statement prepared. drizzle asks postgres.js for unnamed statements
 * unless a query is given a name, and postgres.js sends an unnamed statement with parameters in
 * two round trips (Parse and Describe, then Bind and Execute once the parameter types are back),
 * which Postgres parses and plans each time. Prepared, a statement is parsed once per connection
 * and each later run is one round trip. Connections are recycled (postgres.js's max_lifetime),
 * which bounds how many statements each one keeps.
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
  const db = drizzle({ client: preparing(client), schema });
  let closed: Promise<void> | undefined;
  return {
    db,
    kind: 'postgres',
    migrate: async () => {
      // A single dedicated connection holds the session-level advisory lock for the whole run.
      const lockClient = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
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

/** Queues a NOTIFY; inside a transaction it is delivered only if the transaction commits. */
export const notify = async (db: Queryable, channel: string, payload: string): Promise<void> => {
  await db.execute(sql`select pg_notify(${channel}, ${payload})`);
};

/**
 * Runs a statement written in SQL and returns its rows, whichever driver answers (postgres.js
 * resolves to the rows, PGlite to a result that holds them).
 */
export const rowsOf = async <T>(db: Queryable, query: SQL): Promise<T[]> => {
  const result: unknown = await db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
};
