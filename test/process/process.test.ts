// The real entry points as child processes: `node server/main.ts` and `node server/cli.ts`.
// Start-up refusals, the PGlite DATA_DIR lock, graceful shutdown, the first admin, and a restart
// that keeps users and tokens (docs/architecture.md). These always exercise embedded PGlite: the children
// get an explicit environment without DATABASE_URL, whatever the suite runs on, so they run in
// the suite's PGlite run only (ON_PGLITE); the Postgres run has its own two-process case below.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dataDirFromTemplate } from '../support/server.ts';
import { ON_PGLITE } from '../support/suite-pass.ts';
import { CHILD_NODE_FLAGS } from '../support/child-node.ts';
import { connect, type TestSocket } from '../support/ws.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
// The entry points are TypeScript run by Node's own type stripping (Node >= 24, package.json
// engines). Under `npm test` the running Node is that one; otherwise use the repo's pinned Node.
const NODE = Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : path.join(REPO, 'node_modules', 'node', 'bin', 'node');
/**
 * How long any one wait on a child may take before the test fails (a deadline, not a sleep).
 * Roomy: a fresh DATA_DIR's initdb and migrations took over 60 s at a load of 10 (two CPU hogs
 * and a browser beside the suite's three files at a time); the cases' own bound is TIMEOUT.
 */
const DEADLINE_MS = 120_000;
// A fresh PGlite DATA_DIR takes ~10 s to initialise on a busy machine; each later open ~3 s.
const TIMEOUT = { timeout: 150_000 };

interface LogLine {
  msg?: string;
  level?: string;
  port?: number;
  [key: string]: unknown;
}

interface Child {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly name: string;
  stdout: string;
  stderr: string;
  /** Set once the process has exited and its output is fully read. */
  result?: { code: number | null; signal: NodeJS.Signals | null };
  /** Resolves with the exit code (null when ended by a signal) after all output is read. */
  readonly closed: Promise<number | null>;
}

const running = new Set<Child>();
const dirs: string[] = [];

const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-process-'));
  dirs.push(dir);
  return dir;
};

/** A DATA_DIR whose database is already migrated (a copy of the suite's template), for the cases that are not about migrating. */
const migratedDir = () => {
  const dir = dataDirFromTemplate();
  dirs.push(dir);
  return dir;
};

afterAll(async () => {
  const children = [...running];
  for (const child of children) {
    if (child.proc.pid !== undefined && !child.result) process.kill(child.proc.pid, 'SIGKILL');
  }
  await Promise.all(children.map((child) => child.closed));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A minimal, explicit environment: nothing of the test process leaks in (no DATABASE_URL). */
const envFor = (dataDir: string, extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
  HOME: process.env.HOME ?? tmpdir(),
  DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'info',
  ...extra,
});

const within = async <T>(promise: Promise<T>, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
};

const spawnNode = (args: string[], env: Record<string, string>, stdin = '', command = NODE): Child => {
  const proc = spawn(command, command === NODE ? [...CHILD_NODE_FLAGS, ...args] : args, { cwd: REPO, env, stdio: 'pipe' });
  const child: Child = {
    proc,
    name: `${command === NODE ? 'node' : command} ${args.join(' ')}`,
    stdout: '',
    stderr: '',
    closed: new Promise<number | null>((resolve) => {
      proc.once('close', (code, signal) => {
        child.result = { code, signal };
        running.delete(child);
        resolve(code);
      });
    }),
  };
  running.add(child);
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    child.stdout += chunk;
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    child.stderr += chunk;
  });
  proc.on('error', (error) => {
    child.stderr += `spawn failed: ${error.message}\n`;
  });
  proc.stdin.on('error', () => undefined); // a child that exits before reading its input
  proc.stdin.end(stdin);
  return child;
};

/** Runs a command to completion. */
const run = async (args: string[], env: Record<string, string>, stdin?: string) => {
  const child = spawnNode(args, env, stdin);
  const code = await within(child.closed, child.name);
  return { code, stdout: child.stdout, stderr: child.stderr };
};

const logLines = (text: string): LogLine[] =>
  text.split('\n').flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as LogLine | null;
      return parsed !== null && typeof parsed === 'object' ? [parsed] : [];
    } catch {
      return [];
    }
  });

/** Resolves with the first log line carrying msg; rejects if the process ends first. */
const waitForLog = (child: Child, msg: string): Promise<LogLine> =>
  within(
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const line = logLines(child.stdout).find((entry) => entry.msg === msg);
        if (line) {
          child.proc.stdout.off('data', check);
          resolve(line);
        }
      };
      child.proc.stdout.on('data', check);
      void child.closed.then((code) => {
        child.proc.stdout.off('data', check);
        check();
        reject(new Error(`${child.name} exited (${code}) before logging '${msg}'\nstderr: ${child.stderr}\nstdout: ${child.stdout}`));
      });
      check();
    }),
    `${child.name}: waiting for '${msg}'`,
  );

interface Server {
  child: Child;
  url: string;
}

const startServer = async (env: Record<string, string>): Promise<Server> => {
  const child = spawnNode(['server/main.ts'], env);
  const listening = await waitForLog(child, 'listening');
  expect(listening.port).toEqual(expect.any(Number));
  return { child, url: `http://127.0.0.1:${listening.port}` };
};

/** SIGTERM, then the exit code. */
const stopServer = async (server: Server): Promise<number | null> => {
  if (server.child.result) return server.child.result.code;
  process.kill(server.child.proc.pid!, 'SIGTERM');
  return within(server.child.closed, `${server.child.name}: stopping`);
};

const call = async (server: Server, method: string, urlPath: string, opts: { body?: unknown; token?: string } = {}) => {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${urlPath}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, text };
};

const login = async (server: Server, username: string, password: string) => {
  const res = await call(server, 'POST', '/api/auth/login', { body: { username, password } });
  expect(res.status, res.text).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
};

const register = async (server: Server, username: string, password: string) => {
  const res = await call(server, 'POST', '/api/auth/register', { body: { username, email: `${username}@example.com`, password } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; username: string };
};

describe.skipIf(!ON_PGLITE)('a bad configuration stops start-up with a non-zero exit naming the setting', TIMEOUT, () => {
  it.each([
    ['AUTH_SECRET_KEY=change-me', { AUTH_SECRET_KEY: 'change-me' }, 'AUTH_SECRET_KEY'],
    ['ENCRYPTION_SALT=secret', { ENCRYPTION_SALT: 'secret' }, 'ENCRYPTION_SALT'],
    ['LIVE_CONFIRM_SECRET=Please-Change-Me', { LIVE_CONFIRM_SECRET: 'Please-Change-Me' }, 'LIVE_CONFIRM_SECRET'],
    ['NODE_ENV=production without AUTH_SECRET_KEY', { NODE_ENV: 'production', ENCRYPTION_SALT: 'a-production-encryption-salt-value' }, 'AUTH_SECRET_KEY'],
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
  ])('server: %s', async (_name, extra, setting) => {
    const dataDir = tempDir();
    const result = await run(['server/main.ts'], envFor(dataDir, extra));
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain(setting);
    expect(logLines(result.stdout).some((line) => line.msg === 'listening')).toBe(false);
    // Refused before any secret was generated or the database opened.
    expect(existsSync(path.join(dataDir, 'pgdata'))).toBe(false);
  });

  it('the CLI refuses a placeholder secret the same way', async () => {
    const result = await run(['server/cli.ts', 'db', 'migrate'], envFor(tempDir(), { AUTH_SECRET_KEY: 'CHANGEME' }));
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain('AUTH_SECRET_KEY');
  });
});

describe.skipIf(!ON_PGLITE)('CLI usage', TIMEOUT, () => {
  it.each([[['frobnicate']], [['db']], [[]]])('%j exits non-zero with the usage', async (args) => {
    const result = await run(['server/cli.ts', ...args], envFor(tempDir()));
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain('usage');
    expect(result.stderr).toContain('db migrate');
    expect(result.stderr).toContain('users create-admin');
  });
});

// One DATA_DIR through its life, with no secrets in the environment: generated once into
// DATA_DIR/secrets.json and kept. The steps run in order and build on one another.
describe.skipIf(!ON_PGLITE)('one DATA_DIR: CLI, server, lock, shutdown, restart', TIMEOUT, () => {
  let dataDir: string;
  let server: Server | undefined;
  const envAdmin = { username: 'env_admin', password: 'env-admin-password' };
  const boss = { username: 'boss_user', password: 'boss-user-password' };
  const stdinAdmin = { username: 'stdin_admin', password: 'stdin-admin-password' };
  const regular = { username: 'regular_user', password: 'regular-user-password' };
  const promoted = { username: 'promoted_user', password: 'promoted-user-password' };
  let regularTokens: { access_token: string; refresh_token: string };
  let regularId: number;

  const env = (extra: Record<string, string> = {}) => envFor(dataDir, extra);
  const serverEnv = () => env({ ADMIN_USERNAME: envAdmin.username, ADMIN_PASSWORD: envAdmin.password });

  beforeAll(() => {
    dataDir = tempDir();
  });
  afterAll(async () => {
    if (server) await stopServer(server);
  });

  it('db migrate applies the migrations while no server runs, and keeps generated secrets in DATA_DIR (0600)', async () => {
    const result = await run(['server/cli.ts', 'db', 'migrate'], env());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('migrations applied (pglite)');
    const secrets = path.join(dataDir, 'secrets.json');
    expect(statSync(secrets).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(secrets, 'utf8'))).sort()).toEqual(['AUTH_SECRET_KEY', 'ENCRYPTION_SALT']);
    // The CLI let go of the database.
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  });

  it('users create-admin creates an admin with ADMIN_PASSWORD from the environment', async () => {
    const result = await run(['server/cli.ts', 'users', 'create-admin', '--username', boss.username, '--email', 'boss@example.com'], env({ ADMIN_PASSWORD: boss.password }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`created admin ${boss.username}`);
    expect(result.stdout).not.toContain(boss.password);
  });

  it('the server starts, creates the start-up admin from ADMIN_USERNAME / ADMIN_PASSWORD, and never logs a secret', async () => {
    server = await startServer(serverEnv());
    const logs = logLines(server.child.stdout);
    const listening = logs.find((line) => line.msg === 'listening');
    expect(listening).toMatchObject({ host: '127.0.0.1', db: 'pglite' });
    // Where to go next, said once in words.
    const base = `http://127.0.0.1:${String(listening?.port)}`;
    await waitForLog(server.child, `the web console is at ${base}/app/ and the API's documentation at ${base}/docs`);
    expect(logLines(server.child.stdout).filter((line) => String(line.msg).includes('/app/'))).toHaveLength(1);
    expect(logs.some((line) => line.msg === 'admin user created' && line.username === envAdmin.username)).toBe(true);
    const warning = logs.find((line) => line.level === 'warn' && String(line.msg).includes('secrets.json'));
    expect(warning?.msg).toContain('AUTH_SECRET_KEY');
    const kept = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
    for (const value of Object.values(kept)) expect(server.child.stdout + server.child.stderr).not.toContain(value);
    expect(server.child.stdout).not.toContain(envAdmin.password);

    const health = await call(server, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', db: 'ok' });

    const tokens = await login(server, envAdmin.username, envAdmin.password);
    const me = await call(server, 'GET', '/api/auth/me', { token: tokens.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: envAdmin.username, role: 'admin', email: 'env_admin@admin.invalid' });
  });

  it('the admin created by the CLI logs in with role admin and reaches the operator routes', async () => {
    const tokens = await login(server!, boss.username, boss.password);
    const me = await call(server!, 'GET', '/api/auth/me', { token: tokens.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ username: boss.username, email: 'boss@example.com', role: 'admin', is_active: true });
    const users = await call(server!, 'GET', '/api/admin/users', { token: tokens.access_token });
    expect(users.status, users.text).toBe(200);
    expect(users.body.items.map((user: { username: string }) => user.username)).toEqual(expect.arrayContaining([boss.username, envAdmin.username]));
  });

  it('regular users register and log in', async () => {
    regularId = (await register(server!, regular.username, regular.password)).id;
    regularTokens = await login(server!, regular.username, regular.password);
    await register(server!, promoted.username, promoted.password);
    const me = await call(server!, 'GET', '/api/auth/me', { token: regularTokens.access_token });
    expect(me.body).toMatchObject({ id: regularId, role: 'user' });
    const forbidden = await call(server!, 'GET', '/api/admin/users', { token: regularTokens.access_token });
    expect(forbidden.status).toBe(403);
  });

  it('while the server holds the DATA_DIR, db migrate refuses it with a clear message', async () => {
    const result = await run(['server/cli.ts', 'db', 'migrate'], env());
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain(`DATA_DIR ${dataDir} is in use by process ${server!.child.proc.pid}`);
  });

  it('while the server holds the DATA_DIR, a second server refuses it with the same message', async () => {
    const result = await run(['server/main.ts'], serverEnv());
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain(`DATA_DIR ${dataDir} is in use by process ${server!.child.proc.pid}`);
    expect(logLines(result.stdout).some((line) => line.msg === 'listening')).toBe(false);
    // The refusals left the running server and its lock alone.
    expect(readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')).toBe(String(server!.child.proc.pid));
    expect((await call(server!, 'GET', '/health')).body).toMatchObject({ status: 'ok', db: 'ok' });
    expect((await call(server!, 'GET', '/api/auth/me', { token: regularTokens.access_token })).status).toBe(200);
  });

  it('SIGTERM stops the idle server with exit code 0, logs stopped, and releases the DATA_DIR', async () => {
    const code = await stopServer(server!);
    const logs = logLines(server!.child.stdout);
    server = undefined;
    expect(code).toBe(0);
    expect(logs).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }), expect.objectContaining({ msg: 'stopped' })]));
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  });

  it('users create-admin promotes an existing regular user', async () => {
    const result = await run(['server/cli.ts', 'users', 'create-admin', '--username', promoted.username], env({ ADMIN_PASSWORD: 'some-other-password' }));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`promoted admin ${promoted.username}`);
  });

  it('users create-admin reads the password from standard input when ADMIN_PASSWORD is unset', async () => {
    const result = await run(['server/cli.ts', 'users', 'create-admin', '--username', stdinAdmin.username, '--email', 'stdin@example.com'], env(), `${stdinAdmin.password}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`created admin ${stdinAdmin.username}`);
  });

  it('a restart on the same DATA_DIR works and finds the start-up admin in place', async () => {
    server = await startServer(serverEnv());
    expect(logLines(server.child.stdout).some((line) => line.msg === 'admin user exists' && line.username === envAdmin.username)).toBe(true);
    const tokens = await login(server, envAdmin.username, envAdmin.password);
    expect((await call(server, 'GET', '/api/auth/me', { token: tokens.access_token })).body).toMatchObject({ role: 'admin' });
  });

  it('after the restart the old access token still works and the old refresh token still rotates', async () => {
    const me = await call(server!, 'GET', '/api/auth/me', { token: regularTokens.access_token });
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ id: regularId, username: regular.username, role: 'user' });

    const rotated = await call(server!, 'POST', '/api/auth/refresh', { body: { refresh_token: regularTokens.refresh_token } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(regularTokens.refresh_token);
    expect((await call(server!, 'GET', '/api/auth/me', { token: rotated.body.access_token })).status).toBe(200);
    // Still single-use after the restart.
    expect((await call(server!, 'POST', '/api/auth/refresh', { body: { refresh_token: regularTokens.refresh_token } })).status).toBe(401);
  });

  it('the promoted user keeps its password and is an admin; the stdin password logs in', async () => {
    const promotedTokens = await login(server!, promoted.username, promoted.password);
    expect((await call(server!, 'GET', '/api/auth/me', { token: promotedTokens.access_token })).body).toMatchObject({ role: 'admin' });
    expect((await call(server!, 'GET', '/api/admin/users', { token: promotedTokens.access_token })).status).toBe(200);

    const stdinTokens = await login(server!, stdinAdmin.username, stdinAdmin.password);
    expect((await call(server!, 'GET', '/api/auth/me', { token: stdinTokens.access_token })).body).toMatchObject({
      username: stdinAdmin.username,
      email: 'stdin@example.com',
      role: 'admin',
    });
  });

  it('SIGTERM stops the restarted server with exit code 0', async () => {
    const code = await stopServer(server!);
    const logs = logLines(server!.child.stdout);
    server = undefined;
    expect(code).toBe(0);
    expect(logs.some((line) => line.msg === 'stopped')).toBe(true);
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  });
});

// Process managers signal the process they started: for `npm start` that is npm, not node.
describe.skipIf(!ON_PGLITE)('npm start', TIMEOUT, () => {
  it('stops the server gracefully when npm itself gets SIGTERM, leaving no process and no lock behind', async () => {
    const dataDir = migratedDir();
    // Not about demo bars: seeding ten years of them for every instrument would cost the start seconds of CPU.
    const npm = spawnNode(['start'], envFor(dataDir, { DEMO_DATA: 'false' }), '', 'npm');
    await waitForLog(npm, 'listening');
    const serverPid = Number(readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8'));
    expect(serverPid).not.toBe(npm.proc.pid);
    process.kill(npm.proc.pid!, 'SIGTERM');
    await within(npm.closed, 'npm start after SIGTERM');
    expect(logLines(npm.stdout).map((line) => line.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
    expect(() => process.kill(serverPid, 0)).toThrow(/ESRCH/);
  });
});

describe.skipIf(!ON_PGLITE)('ohlcv import (CLI)', TIMEOUT, () => {
  const fixture = path.join(REPO, 'test/fixtures/ohlcv/orcl-adj-close.csv');

  it('imports a CSV file for a registered instrument, and refuses a bad file naming its rows, writing nothing', async () => {
    const dataDir = migratedDir();
    const rows = readFileSync(fixture, 'utf8').trim().split('\n').length - 1;
    const ok = await run(['server/cli.ts', 'ohlcv', 'import', fixture, '--symbol', 'orcl', '--asset-class', 'us_equity'], envFor(dataDir));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`imported ${rows} bars of us_equity ORCL`);

    // A bad file and a bad option are refused before the data directory is opened: here one held
    // by a live process (this one), which any opening would report instead.
    const held = tempDir();
    writeFileSync(path.join(held, 'pglite.lock'), String(process.pid));
    const bad = path.join(dataDir, 'bad.csv');
    writeFileSync(bad, 'date,open,high,low,close,volume\n2020-01-02,10,11,9,10.5,100\n2020-01-03,10,9,8,10.5,100\n');
    const refused = await run(['server/cli.ts', 'ohlcv', 'import', bad, '--symbol', 'ORCL', '--asset-class', 'us_equity'], envFor(held));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('row 2');
    expect(refused.stderr).not.toContain('at ');

    const unknown = await run(['server/cli.ts', 'ohlcv', 'import', fixture, '--symbol', 'NOPEX', '--asset-class', 'us_equity'], envFor(dataDir));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not a registered us_equity instrument');
    const usage = await run(['server/cli.ts', 'ohlcv', 'import', fixture, '--symbol', 'ORCL', '--asset-class', 'bonds'], envFor(held));
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('--asset-class');
    expect(readFileSync(path.join(held, 'pglite.lock'), 'utf8')).toBe(String(process.pid));
    // The refused runs released the data directory.
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  });
});

// Crash safety: orders in flight when the process is killed without warning are neither lost nor
// placed twice, and every position equals the fills of its orders after the restart.
describe.skipIf(!ON_PGLITE)('SIGKILL while orders are in flight', TIMEOUT, () => {
  it('loses and doubles nothing: after a restart every order is answered once, and positions equal their fills', async () => {
    const dataDir = migratedDir();
    const env = envFor(dataDir, { ADMIN_USERNAME: 'crash_admin', ADMIN_PASSWORD: 'crash-admin-password', SIM_TICK_INTERVAL_MS: '0', RATE_LIMIT_ORDERS_PER_MIN: '1000', DEMO_DATA: 'false' });
    let server = await startServer(env);
    const admin = await login(server, 'crash_admin', 'crash-admin-password');
    expect((await call(server, 'POST', '/api/admin/sim/prices', { token: admin.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } })).status).toBe(200);
    await register(server, 'crash_trader', 'crash-trader-password');
    const trader = await login(server, 'crash_trader', 'crash-trader-password');
    expect((await call(server, 'POST', '/api/exchange-keys', { token: trader.access_token, body: { exchange: 'crypto_exchange', api_key: 'crash-key-1234', api_secret: 's' } })).status).toBe(201);

    const ids = Array.from({ length: 30 }, (_, i) => `crash-${i}`);
    const order = (id: string) => ({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', client_order_id: id });
    // Send them all, and kill the server as soon as the first answer is back: the rest are in flight.
    const sent = ids.map((id) => call(server, 'POST', '/api/equity/orders', { token: trader.access_token, body: order(id) }).catch(() => undefined));
    await Promise.race(sent);
    process.kill(server.child.proc.pid!, 'SIGKILL');
    await within(server.child.closed, 'the killed server');
    await Promise.all(sent);

    server = await startServer(env);
    try {
      // Every client retries with the same id after the restart: each gets one answer, and a
      // placed order keeps its broker order id.
      const replies = await Promise.all(ids.map((id) => call(server, 'POST', '/api/equity/orders', { token: trader.access_token, body: order(id) })));
      for (const reply of replies) expect([201, 422, 502], reply.text).toContain(reply.status);
      const list = await call(server, 'GET', '/api/equity/orders?asset_class=crypto&size=100', { token: trader.access_token });
      expect(list.status).toBe(200);
      const byId = new Map<string, { broker_order_id: string; status: string; filled_qty: number }>(list.body.items.map((item: { client_order_id: string }) => [item.client_order_id, item]));
      // No client id is listed twice, and a 201 reply names the listed order.
      expect(list.body.items).toHaveLength(byId.size);
      replies.forEach((reply, index) => {
        if (reply.status === 201) expect(reply.body.broker_order_id).toBe(byId.get(ids[index]!)?.broker_order_id);
      });
      // The broker's position is exactly what the filled orders add up to.
      const positions = await call(server, 'GET', '/api/equity/positions?asset_class=crypto', { token: trader.access_token });
      const held = positions.body.items.find((item: { symbol: string }) => item.symbol === 'BTC/USDT')?.qty ?? 0;
      const filled = [...byId.values()].reduce((sum, item) => sum + Math.round(item.filled_qty * 1000), 0) / 1000;
      expect(held).toBeCloseTo(filled, 9);
      expect(filled).toBeGreaterThan(0);
    } finally {
      await stopServer(server);
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('two API processes on one PostgreSQL', TIMEOUT, () => {
  it("a client on one process receives the events of an order placed on the other, and another user's client only its own", async () => {
    const database = await createTestDatabase();
    const shared = {
      DATABASE_URL: database.url,
      AUTH_SECRET_KEY: 'two-processes-secret-key-0123456789abcdef',
      ENCRYPTION_SALT: 'two-processes-salt-0123456789',
      ADMIN_USERNAME: 'two_admin',
      ADMIN_PASSWORD: 'two-admin-password',
      SIM_TICK_INTERVAL_MS: '0',
      DEMO_DATA: 'false',
    };
    const dirs = [tempDir(), tempDir()];
    const a = await startServer(envFor(dirs[0]!, shared));
    const b = await startServer(envFor(dirs[1]!, { ...shared, WORKERS_IN_PROCESS: 'false' }));
    const sockets: TestSocket[] = [];
    try {
      const admin = await login(a, 'two_admin', 'two-admin-password');
      expect((await call(a, 'POST', '/api/admin/sim/prices', { token: admin.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } })).status).toBe(200);
      const trader = async (name: string) => {
        await register(a, name, `${name}-password`);
        const tokens = await login(a, name, `${name}-password`);
        expect((await call(a, 'POST', '/api/exchange-keys', { token: tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `${name}-key-1234`, api_secret: 's' } })).status).toBe(201);
        return tokens;
      };
      const alice = await trader('two_alice');
      const bob = await trader('two_bob');
      const onB = (token: string) => {
        const socket = connect(`${b.url.replace(/^http/, 'ws')}/ws/equity/orders?token=${token}`);
        sockets.push(socket);
        return socket;
      };
      const aliceOnB = onB(alice.access_token);
      const bobOnB = onB(bob.access_token);
      expect((await aliceOnB.next()).type).toBe('hello');
      expect((await bobOnB.next()).type).toBe('hello');
      const order = (id: string) => ({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', client_order_id: id });
      expect((await call(a, 'POST', '/api/equity/orders', { token: alice.access_token, body: order('two-alice-1') })).status).toBe(201);
      expect((await call(a, 'POST', '/api/equity/orders', { token: bob.access_token, body: order('two-bob-1') })).status).toBe(201);
      await aliceOnB.next((frame) => frame.event_type === 'fill');
      await bobOnB.next((frame) => frame.event_type === 'fill');
      expect(aliceOnB.frames.slice(1).map((frame) => `${frame.client_order_id}:${frame.event_type}`)).toEqual(['two-alice-1:placed', 'two-alice-1:accepted', 'two-alice-1:fill']);
      expect(bobOnB.frames.slice(1).map((frame) => `${frame.client_order_id}:${frame.event_type}`)).toEqual(['two-bob-1:placed', 'two-bob-1:accepted', 'two-bob-1:fill']);
    } finally {
      for (const socket of sockets) socket.ws.terminate();
      await stopServer(b);
      await stopServer(a);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      await database.drop();
    }
  });
});
