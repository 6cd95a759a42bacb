// Runs once before the files that touch a database (the integration, isolated and process
// projects share it): migrates one template database, so that each test
// server starts from a copy of it instead of paying for the migrations (PGlite's first open and
// migrate take seconds; copying its data directory takes milliseconds). On Postgres the template
// is a database that `create database ... template` clones.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../server/db/client.ts';
import { testDatabasePrefix } from './test-databases.ts';

/** PGlite: a migrated DATA_DIR to copy. Postgres: the name of a migrated template database. */
type DatabaseTemplate = { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; name: string };

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: DatabaseTemplate;
  }
}

const migrated = async (options: { databaseUrl: string; dataDir: string }) => {
  const database = await openDatabase({ ...options, poolSize: 1 });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
};

interface SharedTemplate {
  template: Promise<DatabaseTemplate>;
  remove: () => Promise<void>;
  users: number;
}

/**
 * One template per run, whichever projects ask for it (each migration of a fresh PGlite costs
 * seconds of CPU). Vitest runs each project's global setup in its own process, loading this module
 * once per project: the template is kept on the process's global object instead, and the last
 * teardown removes it.
 */
const SHARED = Symbol.for('trading-service.test.databaseTemplate');
const sharing = globalThis as { [SHARED]?: SharedTemplate };

const DROPS_AT_ONCE = 8;

const makeTemplate = (): Omit<SharedTemplate, 'users'> => {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-template-'));
    // The lock file goes with close(); what stays is the data directory alone.
    const template = migrated({ databaseUrl: '', dataDir }).then((): DatabaseTemplate => ({ kind: 'pglite', dataDir }));
    return {
      template,
      remove: () => {
        rmSync(dataDir, { recursive: true, force: true });
        return Promise.resolve();
      },
    };
  }
  const name = `ts_template_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const template = admin.unsafe(`create database ${name}`).then(async (): Promise<DatabaseTemplate> => {
    await migrated({ databaseUrl: url.toString(), dataDir: '' });
    return { kind: 'postgres', name };
  });
  return {
    template,
    remove: async () => {
      // The run's test databases (test/support/server.ts names them after the template and leaves
      // them here), a few at a time: each drop makes Postgres checkpoint, and drops that wait
      // together share one.
      const copies = await admin.unsafe<{ datname: string }[]>(`select datname from pg_database where starts_with(datname, $1)`, [testDatabasePrefix(name)]);
      const names = copies.map((copy) => copy.datname);
      const dropper = postgres(adminUrl, { max: DROPS_AT_ONCE, onnotice: () => undefined });
      await Promise.all(Array.from({ length: DROPS_AT_ONCE }, async () => {
        for (let next = names.pop(); next !== undefined; next = names.pop()) await dropper.unsafe(`drop database if exists ${next} with (force)`);
      }));
      await dropper.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const mine = (sharing[SHARED] ??= { ...makeTemplate(), users: 0 });
  mine.users += 1;
  project.provide('databaseTemplate', await mine.template);
  return async () => {
    mine.users -= 1;
    if (mine.users > 0) return;
    delete sharing[SHARED];
    await mine.remove();
  };
}
