// `npm run worker` (server/worker.ts) as a process of its own, and a start-up admin whose
// e-mail belongs to someone else. Children get an explicit environment (embedded PGlite, a copy of
// the suite's migrated template), so they run in the suite's PGlite run only.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ON_PGLITE } from '../support/suite-pass.ts';
import { CHILD_NODE_FLAGS } from '../support/child-node.ts';
import { dataDirFromTemplate } from '../support/template.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
// Entry points are TypeScript run by Node's type stripping: Node 24, as under `npm test`.
const NODE = Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : path.join(REPO, 'node_modules', 'node', 'bin', 'node');
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const dataDir = () => {
  const dir = dataDirFromTemplate();
  dirs.push(dir);
  return dir;
};

/** Starts an entry point; `until` resolves once stdout holds the text (or rejects on exit). */
const start = (script: string, env: Record<string, string>, args: string[] = []) => {
  const child = spawn(NODE, [...CHILD_NODE_FLAGS, script, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const until = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (stdout.includes(text) ? resolve() : undefined);
      child.stdout.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`exited ${code} before printing ${text}: ${stderr}`)));
    });
  return { child, exited, until, out: () => stdout, err: () => stderr };
};

describe.skipIf(!ON_PGLITE)('npm run worker', () => {
  it('runs the auth sweep without the HTTP API and stops cleanly on SIGTERM', async () => {
    const worker = start('server/worker.ts', { DATA_DIR: dataDir() });
    try {
      await worker.until('"msg":"workers started"');
      await worker.until('"job":"auth-sweep"');
      expect(worker.out()).not.toContain('"msg":"listening"');
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(worker.out()).toContain('"msg":"stopped"');
    } finally {
      worker.child.kill('SIGKILL');
    }
  }, 120_000);
});

describe.skipIf(!ON_PGLITE)('start-up admin', () => {
  it('refuses, naming ADMIN_EMAIL, when that e-mail belongs to another user', async () => {
    const dir = dataDir();
    const first = start('server/cli.ts', { DATA_DIR: dir, ADMIN_PASSWORD: 'first-admin-password' }, ['users', 'create-admin', '--username', 'first_admin', '--email', 'taken@example.com']);
    expect(await first.exited, first.err()).toBe(0);

    const server = start('server/main.ts', {
      DATA_DIR: dir,
      PORT: '0',
      ADMIN_USERNAME: 'second_admin',
      ADMIN_PASSWORD: 'second-admin-password',
      ADMIN_EMAIL: 'TAKEN@example.com',
      // Not about demo bars: the start would seed ten years of them (seconds of CPU) before refusing.
      DEMO_DATA: 'false',
    });
    try {
      expect(await server.exited).not.toBe(0);
      expect(server.err()).toContain('ADMIN_EMAIL');
      expect(server.err()).not.toContain('second-admin-password');
    } finally {
      server.child.kill('SIGKILL');
    }
  }, 120_000);
});
