// Start-up: what ADMIN_USERNAME does to existing users (nothing behind the operator's back), and
// a failed start (the port taken) that leaves nothing running or held.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { findUserByUsername } from '../../server/users/queries.ts';
import { newUser } from '../support/factories.ts';
import { capturedLogger } from '../support/logs.ts';
import { createTestDatabase, dataDirFromTemplate, startTestServer, type TestServer } from '../support/server.ts';

describe('ADMIN_USERNAME at start-up', () => {
  const dataDir = dataDirFromTemplate();
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const reuse = () => ({ dataDir, databaseUrl: database.url });
  let registered: string;
  let deactivatedAdmin: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const first = await startTestServer({}, reuse());
    registered = (await newUser(first, { prefix: 'taken_name' })).username;
    deactivatedAdmin = (await newUser(first, { role: 'admin', active: false, prefix: 'old_admin' })).username;
    await first.stop();
  });
  afterAll(async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const restartAs = async (username: string) => {
    const { logger, lines } = capturedLogger();
    const server: TestServer = await startTestServer({ ADMIN_USERNAME: username, ADMIN_PASSWORD: 'startup-admin-password' }, reuse(), { logger });
    const row = await findUserByUsername(server.services.db, username);
    const login = await server.http('POST', '/api/auth/login', { body: { username, password: 'startup-admin-password' } });
    await server.stop();
    return { row, lines, login };
  };

  it('leaves a publicly registered user of that name a regular user, says so, and its password unchanged', async () => {
    const { row, lines, login } = await restartAs(registered);
    expect(row).toMatchObject({ role: 'user', isActive: true });
    expect(lines.find((line) => line.level === 'warn' && line.reason === 'not_admin')).toMatchObject({ username: registered });
    expect(login.status).toBe(401);
  });

  it('leaves a deactivated admin deactivated, and says so', async () => {
    const { row, lines } = await restartAs(deactivatedAdmin);
    expect(row).toMatchObject({ role: 'admin', isActive: false });
    expect(lines.find((line) => line.level === 'warn' && line.reason === 'deactivated')).toMatchObject({ username: deactivatedAdmin });
  });

  it('creates the admin when no such user exists, with an e-mail of its own', async () => {
    const { row, lines, login } = await restartAs('brand_new_admin');
    expect(row).toMatchObject({ role: 'admin', isActive: true, email: 'brand_new_admin@admin.invalid' });
    expect(lines.some((line) => line.msg === 'admin user created')).toBe(true);
    expect(login.status).toBe(200);
  });
});

describe('a start that fails at listen', () => {
  let running: TestServer;
  beforeAll(async () => {
    running = await startTestServer();
  });
  afterAll(() => running.stop());

  it('rejects, and releases the database and everything it started', async () => {
    const dataDir = dataDirFromTemplate();
    const database = await createTestDatabase();
    try {
      const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: String(running.port), DATA_DIR: dataDir, DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
      await expect(startApp(config)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
      // The same data can be opened again at once: nothing holds it.
      const again = await startApp({ ...config, PORT: 0 });
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
      await again.close();
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
