// The client as a third party gets it: `npm pack` of client/ (its prepack builds it, or finds it
// built from the same inputs), the tarball installed into a fresh project from the npm cache, a
// strict consumer (test/fixtures/client-consumer)
// type-checked with moduleResolution bundler and node16 at target ES2022, compiled, and run with
// plain node, on the project's Node 24 and on the machine's Node 20, against a server started
// here: register, log in, add a paper crypto key, place a market order, receive its events on the
// orders channel, read it back. Also: the router type the package ships equals the server's.
// The child server runs on PGlite whatever DATABASE_URL says, so CI's Postgres pass skips the file.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ON_PGLITE } from '../support/suite-pass.ts';
import { CHILD_NODE_FLAGS, TEST_NODE_FLAGS } from '../support/child-node.ts';
import { dataDirFromTemplate } from '../support/template.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const NODE24 = Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : path.join(REPO, 'node_modules', 'node', 'bin', 'node');
/** Node's own dirs first, so npm and tsc run on Node 24 as under `npm test`. */
const PATH = `${path.dirname(NODE24)}:${path.join(REPO, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`;
/** Each child's bound: pack builds the package (two TypeScript programs), the rest is quicker. */
const STEP_MS = 240_000;

/** The machine's Node 20 (the package's engines floor), found beside the project's Node 24. */
const findNode20 = (): string | undefined =>
  ['/usr/bin/node', '/usr/local/bin/node', '/bin/node'].find((candidate) => {
    if (!existsSync(candidate)) return false;
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout.trim();
    return version.startsWith('v20.');
  });

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The machine's way to the registry, passed on to npm: a proxy, and the certificate authority of
 * one that re-signs TLS (npm is a Node program: without NODE_EXTRA_CA_CERTS it refuses that chain).
 */
const NETWORK = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && /^(NODE_EXTRA_CA_CERTS|(https?|no)_proxy|npm_config_(cafile|registry|proxy|https_proxy|strict_ssl))$/i.test(entry[0])),
);

/** Runs a command to its end, killed past STEP_MS. */
const run = (command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> =>
  new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: options.cwd, env: { PATH, HOME: process.env.HOME ?? tmpdir(), ...NETWORK, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });

const ok = (result: Run, what: string) => {
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return result;
};

const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

let server: { url: string; stop: () => Promise<void> } | undefined;
let consumer: string;
const timings: Record<string, number> = {};

/** `node server/main.ts` on a data dir of its own, with an operator to set the price. */
const startServer = async () => {
  const dataDir = dataDirFromTemplate();
  dirs.push(dataDir);
  const env = { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ADMIN_USERNAME: 'pkg_admin', ADMIN_PASSWORD: 'pkg-admin-password', SIM_TICK_INTERVAL_MS: '0', DEMO_DATA: 'false' };
  const child = spawn(NODE24, [...CHILD_NODE_FLAGS, 'server/main.ts'], { cwd: REPO, env: { PATH, HOME: process.env.HOME ?? tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server: no 'listening' within ${STEP_MS} ms\n${stderr}`)), STEP_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      for (const line of stdout.split('\n')) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(`server exited before listening\n${stderr}\n${stdout}`));
    });
  });
  const stop = async () => {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await closed;
    clearTimeout(killer);
  };
  return { url: `http://127.0.0.1:${port}`, stop };
};

const call = async (method: string, url: string, body?: unknown, token?: string) => {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  if (!ON_PGLITE) return;
  const packed = tempDir('ts-client-pack-');
  const started = performance.now();
  const [pack, started_] = await Promise.all([run('npm', ['pack', '--pack-destination', packed, '--silent'], { cwd: path.join(REPO, 'client') }), startServer()]);
  server = started_;
  ok(pack, 'npm pack');
  timings.pack = pack.ms;
  const tarball = readdirSync(packed).find((file) => file.endsWith('.tgz'));
  expect(tarball, pack.stdout).toBeDefined();

  consumer = tempDir('ts-client-consumer-');
  cpSync(path.join(REPO, 'test', 'fixtures', 'client-consumer'), consumer, { recursive: true });
  const typescript = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.typescript!;
  const install = ok(await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'http', '--fetch-timeout', '60000', path.join(packed, tarball!), `typescript@${typescript}`], { cwd: consumer }), 'npm install');
  timings.install = install.ms;
  timings.setup = Math.round(performance.now() - started);

  const admin = await call('POST', `${server.url}/api/auth/login`, { username: 'pkg_admin', password: 'pkg-admin-password' });
  expect(admin.status).toBe(200);
  const price = await call('POST', `${server.url}/api/admin/sim/prices`, { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 }, admin.body.access_token as string);
  expect(price.status).toBe(200);
}, 2 * STEP_MS + 60_000);

afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  console.log(`client package timings (ms): ${JSON.stringify(timings)}`);
});

describe.skipIf(!ON_PGLITE)('the packed client in a fresh project', () => {
  it('holds only the built package: no TypeScript source, no server', () => {
    const installed = path.join(consumer, 'node_modules', '@trading-service', 'client');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@trpc/client', 'superjson', 'zod']);
    expect(Object.keys(manifest.peerDependencies)).toEqual(['@trpc/server']);
    const files = readdirSync(installed, { recursive: true, encoding: 'utf8' });
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.some((file) => file.startsWith('server'))).toBe(false);
    expect(files).toContain(path.join('dist', 'client', 'router.d.ts'));
    // The router's type is written out: its declaration imports nothing of the server.
    expect(readFileSync(path.join(installed, 'dist', 'client', 'router.d.ts'), 'utf8')).not.toMatch(/from '\.\.\/\.\.\/server|server\/routers/);
  });

  it('type-checks a strict consumer with moduleResolution bundler, then node16 (which compiles it)', async () => {
    const tsc = path.join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const bundler = ok(await run(NODE24, [...TEST_NODE_FLAGS, tsc, '-p', 'tsconfig.bundler.json'], { cwd: consumer }), 'tsc bundler');
    const node16 = ok(await run(NODE24, [...TEST_NODE_FLAGS, tsc, '-p', 'tsconfig.node16.json'], { cwd: consumer }), 'tsc node16');
    timings.typecheckBundler = bundler.ms;
    timings.typecheckNode16 = node16.ms;
    expect(existsSync(path.join(consumer, 'out', 'flow.js'))).toBe(true);
  }, STEP_MS * 2);

  const node20 = findNode20();
  const runtimes: [string, string | undefined, string[]][] = [
    ['Node 24', NODE24, []],
    // Node 20 has fetch but its WebSocket only behind a flag.
    ['Node 20', node20, ['--experimental-websocket']],
  ];
  it.each(runtimes)('runs the flow on %s: register, login, paper key, market order, its events, read back', async (label, node, flags) => {
    expect(node, `${label}: no such node on this machine`).toBeDefined();
    const version = spawnSync(node!, ['--version'], { encoding: 'utf8' }).stdout.trim();
    expect(version.startsWith(label === 'Node 24' ? 'v24.' : 'v20.')).toBe(true);
    const username = `pkg_${label.replace(/\D/g, '')}_${process.pid}`;
    const result = ok(await run(node!, [...flags, path.join('out', 'flow.js')], { cwd: consumer, env: { SERVICE_URL: server!.url, CONSUMER_USER: username } }), `consumer on ${label}`);
    timings[`run${label.replace(/\W/g, '')}`] = result.ms;
    const seen = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
      user: { username: string; role: string };
      tokenType: string;
      before: string;
      key: { exchange: string; asset_class: string };
      placed: { client_order_id: string; status: string };
      events: { event_type: string; status: string; event_id: string }[];
      read: { broker_order_id: boolean; status: string; filled_qty: number };
      rest: { status: string; filled_qty: number };
      lastEventId: string | null;
    };
    expect(seen.user).toEqual({ username, role: 'user' });
    expect(seen.tokenType).toBe('bearer');
    expect(seen.before).toBe('BROKER_NOT_CONFIGURED');
    expect(seen.key).toEqual({ exchange: 'crypto_exchange', asset_class: 'crypto' });
    expect(seen.placed).toEqual({ client_order_id: `${username}-1`, status: 'accepted' });
    expect(seen.events.map((event) => event.status)).toContain('filled');
    expect(seen.events.every((event) => event.event_id.length > 0)).toBe(true);
    expect(seen.read).toEqual({ broker_order_id: true, status: 'filled', filled_qty: 0.01 });
    expect(seen.rest).toEqual({ status: 'filled', filled_qty: 0.01 });
    expect(seen.lastEventId).toBe(seen.events.at(-1)!.event_id);
  }, STEP_MS);
});
