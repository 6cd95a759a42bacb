// Runs once before the integration files: migrates one template database, so that each test
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

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: a migrated DATA_DIR to copy. Postgres: the name of a migrated template database. */
    databaseTemplate: { kind: 'pglite'; dataDir: string } | { kind: 'postgres'; name: string };
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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-template-'));
    await migrated({ databaseUrl: '', dataDir });
    // The lock file went with close(); what stays is the data directory alone.
    project.provide('databaseTemplate', { kind: 'pglite', dataDir });
    return () => {
      rmSync(dataDir, { recursive: true, force: true });
      return Promise.resolve();
    };
  }
  const name = `ts_template_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await migrated({ databaseUrl: url.toString(), dataDir: '' });
  project.provide('databaseTemplate', { kind: 'postgres', name });
  return async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
}
