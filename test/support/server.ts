// Starts the real service on an ephemeral port with a database of its own: embedded PGlite in
// a temporary DATA_DIR, or, when DATABASE_URL is set, a fresh PostgreSQL database per server.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import postgres from 'postgres';
import type { TTokenResponse, TUserResponse } from '../../contracts/auth.ts';
import { databaseTemplate, dataDirFromTemplate, tempDir } from './template.ts';
import { testDatabasePrefix } from './test-databases.ts';
import { startApp, type AppOptions, type RunningApp } from '../../server/app.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import { openDatabase, type DatabaseHandle } from '../../server/db/client.ts';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer extends RunningApp {
  config: Config;
  dataDir: string;
  databaseUrl: string;
  http<T = any>(method: string, path: string, opts?: { body?: unknown; rawBody?: string; token?: string; headers?: Record<string, string> }): Promise<HttpResult<T>>;
  stop(): Promise<void>;
}

/**
 * How a test database copies the template. PostgreSQL 15 and later copy it by default through the
 * WAL, block by block (5 MB of WAL and about 200 ms of a backend's CPU for our template, some 140
 * times a run); a file copy with a checkpoint writes 18 KB of WAL. The Postgres pass took 192 s
 * against 226 s with it, its database's CPU 123 s against 154 s. Older servers know only the copy.
 */
let copyStrategy: Promise<string> | undefined;
const copyStrategyOf = (admin: postgres.Sql): Promise<string> =>
  (copyStrategy ??= admin`show server_version_num`.then(([row]) => (Number(row?.server_version_num) >= 150_000 ? ' strategy file_copy' : '')));

/** A fresh database on the Postgres named by DATABASE_URL (a copy of the migrated template); '' on PGlite. */
export const createTestDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) return { url: '', drop: () => Promise.resolve() };
  const source = databaseTemplate();
  const fromTemplate = source?.kind === 'postgres' ? source.name : undefined;
  const name = `${fromTemplate ? testDatabasePrefix(fromTemplate) : 'ts_test_'}${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  await admin.unsafe(fromTemplate ? `create database ${name} template ${fromTemplate}${await copyStrategyOf(admin)}` : `create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // A copy of the run's template is dropped with the others when the run ends (testDatabasePrefix).
    drop: async () => {
      if (fromTemplate) return;
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      await dropper.unsafe(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  };
};

export { dataDirFromTemplate, tempDir };

/**
 * A migrated database of its own, without a server: a copy of the PGlite template, or a fresh
 * database on the Postgres named by DATABASE_URL. `close` closes and removes it.
 */
export const openTestDatabase = async (): Promise<{ database: DatabaseHandle; close: () => Promise<void> }> => {
  const dataDir = process.env.DATABASE_URL ? tempDir() : dataDirFromTemplate();
  const created = await createTestDatabase();
  const database = await openDatabase({ databaseUrl: created.url, dataDir, poolSize: 4 });
  // Without a template (outside vitest) the copy is empty: migrating is then needed, and harmless otherwise.
  await database.migrate();
  return {
    database,
    close: async () => {
      try {
        await database.close();
      } finally {
        await created.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
};

export const startTestServer = async (
  env: Record<string, string> = {},
  reuse?: { dataDir: string; databaseUrl: string },
  options: AppOptions = {},
): Promise<TestServer> => {
  const dataDir = reuse?.dataDir ?? (process.env.DATABASE_URL ? tempDir() : dataDirFromTemplate());
  const database = reuse ? { url: reuse.databaseUrl, drop: () => Promise.resolve() } : await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    // Every test registers from 127.0.0.1; tests of the registration throttle set their own.
    REGISTER_MAX_PER_HOUR: '1000000',
    ...env,
  });
  const app = await startApp(config, options);
  const http: TestServer['http'] = async (method, urlPath, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${app.url}${urlPath}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as any, text };
  };
  return {
    ...app,
    config,
    dataDir,
    databaseUrl: database.url,
    http,
    // A reused DATA_DIR and database belong to the caller; our own are removed even if close fails.
    stop: async () => {
      try {
        await app.close();
      } finally {
        if (!reuse) {
          await database.drop();
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    },
  };
};

let counter = 0;
/** A unique, valid username for this test process. */
export const uniqueName = (prefix = 'user') => `${prefix}_${process.pid}_${++counter}`;

export interface TestUser {
  user: TUserResponse;
  tokens: TTokenResponse;
  password: string;
  username: string;
}

export const registerAndLogin = async (server: TestServer, prefix = 'user'): Promise<TestUser> => {
  const username = uniqueName(prefix);
  const password = `pw-${username}-secret`;
  const registered = await server.http<TUserResponse>('POST', '/api/auth/register', {
    body: { username, email: `${username}@example.com`, password },
  });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
  const login = await server.http<TTokenResponse>('POST', '/api/auth/login', { body: { username, password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  return { user: registered.body, tokens: login.body, password, username };
};

/** Logs in the admin created at start-up from ADMIN_USERNAME / ADMIN_PASSWORD. */
export const ADMIN = { username: 'ops_admin', password: 'ops-admin-password' };
export const adminEnv = { ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password };
export const loginAdmin = async (server: TestServer): Promise<TTokenResponse> => {
  const login = await server.http<TTokenResponse>('POST', '/api/auth/login', { body: ADMIN });
  if (login.status !== 200) throw new Error(`admin login failed: ${login.status} ${login.text}`);
  return login.body;
};
