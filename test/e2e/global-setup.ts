// Starts the real service for the e2e run, as `npm start` does (node server/main.ts): PGlite in
// a temporary DATA_DIR, an ephemeral port, an admin from the environment, a BTC/USDT price set
// through the admin API. The tests find it at E2E_BASE_URL; the returned function stops it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const E2E_ADMIN = { username: 'e2e_admin', password: 'e2e-admin-password' };
export const BTC_PRICE = 50_000;
const START_TIMEOUT_MS = 60_000;
const KEPT_LOG_LINES = 200;

const root = path.resolve(import.meta.dirname, '../..');

const waitForPort = (lines: AsyncIterable<string>, log: string[]) =>
  new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within ${START_TIMEOUT_MS} ms:\n${log.join('\n')}`)), START_TIMEOUT_MS);
    void (async () => {
      // Read to the end, so the service never blocks on a full stdout pipe; keep the last lines.
      for await (const line of lines) {
        log.push(line);
        if (log.length > KEPT_LOG_LINES) log.shift();
        try {
          const entry = JSON.parse(line) as { msg?: string; port?: number };
          if (entry.msg === 'listening' && typeof entry.port === 'number') {
            clearTimeout(timer);
            resolve(entry.port);
          }
        } catch {
          // not a log line of ours
        }
      }
      clearTimeout(timer);
      reject(new Error(`the service exited before listening:\n${log.join('\n')}`));
    })();
  });

const call = async (baseUrl: string, method: string, urlPath: string, body: unknown, token?: string) => {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
};

export default async function globalSetup(): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-e2e-'));
  const child = spawn(process.execPath, ['server/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      LOG_LEVEL: 'info',
      ADMIN_USERNAME: E2E_ADMIN.username,
      ADMIN_PASSWORD: E2E_ADMIN.password,
      // Prices move only when a test sets them; orders are not rate-limited in a test run.
      SIM_TICK_INTERVAL_MS: '0',
      RATE_LIMIT_ORDERS_PER_MIN: '1000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await waitForPort(createInterface({ input: child.stdout }), log);
    const baseUrl = `http://127.0.0.1:${port}`;
    const admin = await call(baseUrl, 'POST', '/api/auth/login', E2E_ADMIN);
    await call(baseUrl, 'POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'BTC/USDT', price: BTC_PRICE }, String(admin.access_token));
    // Playwright hands the environment of global setup to the test workers.
    process.env.E2E_BASE_URL = baseUrl;
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}
