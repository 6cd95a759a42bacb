// What the service benchmarks share: the service started as production runs it (a fresh
// database, its log in a file of the run's temp dir, fresh secrets) with every part registered
// for clean-up, and a trading user made as a client makes one.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApp, type RunningApp } from '../../server/app.ts';
import type { Clock } from '../../server/clock.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import { createTestDatabase } from '../support/server.ts';
import type { CleanupStep } from './common.ts';
import { fileLogger } from './log-file.ts';

export interface BenchService {
  app: RunningApp;
  config: Config;
  /** The run's temp dir (DATA_DIR and the log). */
  dir: string;
  databaseUrl: string;
  logFile: string;
  /** Flushes and closes the log file (once; it is also a clean-up step). */
  closeLog: () => Promise<void>;
}

export interface BenchServiceOptions {
  cleanups: CleanupStep[];
  /** The temp dir's name prefix. */
  prefix: string;
  /** Settings over the defaults (NODE_ENV=test, LOG_LEVEL=info, an ephemeral port on 127.0.0.1). */
  env?: Record<string, string>;
  /** Runs after the database exists, before the service starts (e.g. an observer connection). */
  beforeStart?: (databaseUrl: string) => Promise<void> | void;
  /** The service's clock (a bench that moves time itself, e.g. bar by bar). */
  clock?: Clock;
}

export const startBenchService = async ({ cleanups, prefix, env = {}, beforeStart, clock }: BenchServiceOptions): Promise<BenchService> => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cleanups.push({ what: 'temp dir', run: () => rmSync(dir, { recursive: true, force: true }) });
  const database = await createTestDatabase();
  cleanups.push({ what: 'database', run: () => database.drop() });
  await beforeStart?.(database.url);
  const { logger, logFile, close: closeLog } = fileLogger(dir);
  cleanups.push({ what: 'log file', run: closeLog });
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dir,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    AUTH_SECRET_KEY: randomBytes(48).toString('base64url'),
    ENCRYPTION_SALT: randomBytes(48).toString('base64url'),
    // The benches register their users from 127.0.0.1.
    REGISTER_MAX_PER_HOUR: '1000000',
    ...env,
  });
  const app = await startApp(config, { logger, ...(clock ? { clock } : {}) });
  cleanups.push({ what: 'service', run: () => app.close() });
  return { app, config, dir, databaseUrl: database.url, logFile, closeLog };
};

/** A JSON POST, its answer parsed when it is JSON. */
export const postJson = async (url: string, body: unknown, token?: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
};

/** A user made as a client makes one (register, log in, a crypto key), and BTC/USDT priced at 50,000. */
export const benchTrader = async (app: RunningApp, prefix: string): Promise<{ userId: number; token: string; username: string; password: string }> => {
  const username = `${prefix}_${process.pid}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const registered = await postJson(`${app.url}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
  const login = await postJson(`${app.url}/api/auth/login`, { username, password });
  const token = login.json?.access_token;
  if (login.status !== 200 || typeof token !== 'string') throw new Error(`login failed: ${login.status} ${login.text}`);
  const key = await postJson(`${app.url}/api/exchange-keys`, { exchange: 'crypto_exchange', api_key: `${prefix}-key-${randomBytes(8).toString('hex')}`, api_secret: 'bench-secret' }, token);
  if (key.status !== 201) throw new Error(`key registration failed: ${key.status} ${key.text}`);
  await app.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  return { userId: Number(registered.json?.id), token, username, password };
};
