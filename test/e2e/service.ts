// The service as the e2e tests run it, the way `npm start` does (node server/main.ts, with the
// tests' V8 flags: TEST_NODE_FLAGS): PGlite in a temporary DATA_DIR, an ephemeral port on
// 127.0.0.1, an admin from the environment, prices that move only when a test sets them. Its
// whole log is kept in a file, for tests that read what it says (a live confirm token without
// SMTP). global-setup.ts starts the run's shared one; a spec that needs other settings (a short
// token lifetime) starts its own.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { TEST_NODE_FLAGS } from '../support/child-node.ts';

export const E2E_ADMIN = { username: 'e2e_admin', password: 'e2e-admin-password' };
// A bound, not a wait: a start-up on two cores shared with the rest of CI has been seen to take over a minute.
const START_TIMEOUT_MS = 180_000;
const KEPT_LOG_LINES = 200;

const root = path.resolve(import.meta.dirname, '../..');

export interface E2eService {
  baseUrl: string;
  /** The service's log, every line. */
  logFile: string;
  stop(): Promise<void>;
}

const waitForPort = (lines: AsyncIterable<string>, log: string[], onLine: (line: string) => void) =>
  new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within ${START_TIMEOUT_MS} ms:\n${log.join('\n')}`)), START_TIMEOUT_MS);
    void (async () => {
      // Read to the end, so the service never blocks on a full stdout pipe; keep the last lines.
      for await (const line of lines) {
        onLine(line);
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

/** Starts the service with `env` over the e2e defaults; resolves once it listens. */
export const startE2eService = async (env: Record<string, string> = {}): Promise<E2eService> => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-e2e-'));
  const logFile = path.join(dataDir, 'service.log');
  const child = spawn(process.execPath, [...TEST_NODE_FLAGS, 'server/main.ts'], {
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
      RATE_LIMIT_ANALYSES_PER_MIN: '1000',
      // Every spec registers its users from 127.0.0.1.
      REGISTER_MAX_PER_HOUR: '1000000',
      // Notification webhooks may point at 127.0.0.1 (the settings page's test adds one).
      NOTIFY_ALLOW_PRIVATE: '1',
      ...env,
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
    const port = await waitForPort(createInterface({ input: child.stdout }), log, (line) => appendFileSync(logFile, `${line}\n`));
    return { baseUrl: `http://127.0.0.1:${port}`, logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};
