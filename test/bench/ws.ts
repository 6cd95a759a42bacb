// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/ws.ts`: the order
// events WebSocket channel (/ws/equity/orders) beside a bare `ws` server measured in the same run.
//
// What is measured (the issue's figures):
// - Latency, with 1, 100 and 1,000 users connected (one connection each): a sampler user places
//   orders one after another (POST /api/equity/orders, crypto market buys of BTC/USDT); per order,
//   the time from the moment its 201 answer has been read in full to the moment that order's
//   `order_event` with event_type `accepted` has been read off the sampler's socket. `accepted` is
//   the event the answer itself reports (status accepted): it is written to the outbox in the
//   transaction that records the acceptance, which commits before the answer is sent, so the frame
//   may even arrive first; such an order counts 0 ms (the client waited for nothing), and how
//   often that happened is shown. The first fill's frame (which follows the answer: the simulator
//   fills after acceptance) is shown beside it, from the same instant. The reference: a bare `ws`
//   server (WebSocketServer on node:http, nothing else) with the same N connections, whose POST
//   handler answers 201 and, in the same tick, sends one frame to the sampler's socket; the same
//   "answer read -> frame read" time is measured the same way.
// - Memory: resident set size per idle connection at 10,000 connections (1,000 users x 10 each on
//   ours; the hello frame has arrived on every one before the count is taken), for ours and for
//   the bare server: RSS (and the V8 heap) after full garbage collections that also give back
//   the pages V8 pools (FULL_COLLECTION, below), the median of several readings, before and after
//   opening them, divided by the count.
//
// Fairness:
// - Clients are never in a server's process: one child (test/bench/ws-clients.ts) holds the idle
//   connections and runs the sampler (its POSTs and its socket), so "answer read" and "frame read"
//   are read with one clock, in a process whose event loop the servers do not share. The child
//   reports its timings over IPC after each slice, never during one.
// - Latency: both servers live in this process (same Node, flags, heap, machine state), only one
//   of them with connections and load at a time; each N is measured in BENCH_WS_ROUNDS alternating
//   slices (bare, ours, ours, bare, ...), each slice opening its N - 1 idle connections afresh and
//   closing them after. Each target gets BENCH_WS_WARMUP orders first, not counted. Ours waits for
//   each order's fill frame before the next order, so no fill of ours is still being applied when
//   the next sample (or the bare's slice) starts; the service's in-process work is drained between
//   slices as well.
// - Memory: measured first, before any latency slice, on ours (this process, where the service
//   was just started and its users made), then on a fresh bare server in a child process of its
//   own (this file with --bare-server, run with --expose-gc). Not one after the other in this
//   process: whichever went second would reuse the heap pages and malloc arenas the first one's
//   connections had grown and freed (neither V8 nor glibc hands all of them back), and would look
//   cheaper than it is. In its own process the bare server starts from nothing and grows what it
//   needs; ours grows what it needs from its own post-start-up baseline. Both are read the same
//   way (process.memoryUsage() after gc(FULL_COLLECTION); this process turns gc on at run time
//   when not started with --expose-gc). Kernel socket buffers are not part of either RSS.
// - Ours runs as configured for production apart from what the bench needs: NODE_ENV=test,
//   LOG_LEVEL=info to a file (an async pino destination, as production writes it; ours logs a line
//   per request, the bare server nothing), RATE_LIMIT_ORDERS_PER_MIN=1000000
//   (the setting's maximum), SIM_TICK_INTERVAL_MS=0, WS_MAX_CONNECTIONS_PER_USER=1000 (the
//   setting's maximum), the default pool (DB_POOL_SIZE) and heartbeat (WS_HEARTBEAT_INTERVAL_SEC).
//   The bare server sends a hello frame on connect too (the client counts a connection open when
//   its first frame arrives) and keeps its sockets in a Set; it does not ping.
// - Users are made without HTTP (insertUser + issueSession, as test/support/factories.ts does),
//   except the sampler, which registers, logs in and registers a crypto key over HTTP.
//
// Settings: BENCH_WS_SAMPLES (orders per target and N, default 200: p99, nearest rank, is then the 3rd slowest),
// BENCH_WS_WARMUP (default 30), BENCH_WS_ROUNDS (slices per target and N, default 2),
// BENCH_WS_USERS (the Ns, comma-separated, default 1,100,1000), BENCH_WS_IDLE_CONNECTIONS (the
// memory phase, default 10000; at most 19,000: the client child, like every process here, may hold
// at most 20,000 descriptors), BENCH_WS_CONNECTIONS_PER_USER (the memory phase, default 10),
// BENCH_WS_BATCH (connections opened at a time, default 200), BENCH_WS_SLICE_SECONDS (a bound on
// each slice, default 20). DATABASE_URL is required (an admin URL: a fresh database is created and
// dropped); without it the bench says so and exits 0. Everything listens on and connects to
// 127.0.0.1. The exit code is 0 whatever the figures (a report, not a test); non-zero on a crash.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer, type WebSocket } from 'ws';
import { createCleanups, fixed, percentile, positiveInt, postgresAdminUrl, runBench, sleep } from './common.ts';
import type { ClientCommand, CloseResult, OpenResult, SampleResult, SampleTarget } from './ws-clients.ts';

const GOAL_P99_MS = 20;
const GOAL_USERS = 1000;
const GOAL_KB_PER_CONNECTION = 10;
const GOAL_IDLE_CONNECTIONS = 10_000;
/** The client child holds the idle connections, the sampler's and its HTTP socket: below the 20,000 descriptors a process may hold. */
const MAX_IDLE_CONNECTIONS = 19_000;
/** WS_MAX_CONNECTIONS_PER_USER's ceiling (server/config.ts). */
const MAX_PER_USER = 1000;
const RATE_LIMIT_PER_MIN = 1_000_000;
/** A bound on one connection's hello, one order's answer and one order's frames. */
const FRAME_TIMEOUT_MS = 5_000;
/** Readings per memory figure (the median is taken). */
const MEMORY_READINGS = 5;
/** Time given to a server after its connections opened before memory is read. */
const SETTLE_MS = 1_000;
const ORDER = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.0001, order_type: 'market' } as const;
const BARE_WS_PATH = '/ws';
const BARE_POST_PATH = '/orders';

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

// ---------------------------------------------------------------------------------------------
// Memory readings, the same in this process and in the bare server's.

/**
 * A full collection that also gives back what V8 holds for later (`last-resort`: the pages it
 * pools, a young generation shrunk to its least). A regular one leaves those as they happen to
 * be, and they are tens of MB: ours' young generation alone is up to 2 x 32 MB (npm start's
 * --max-semi-space-size), which one reading found grown and the next pooled or given back,
 * depending on the GC's threads (--single-threaded-gc pools it), so that a per-connection figure
 * carried it.
 */
const FULL_COLLECTION: NodeJS.GCOptions = { type: 'major', execution: 'sync', flavor: 'last-resort' };

let gcFunction: NodeJS.GCFunction | undefined;
const collectGarbage = () => {
  if (!gcFunction) {
    if (typeof globalThis.gc === 'function') {
      gcFunction = globalThis.gc;
    } else {
      // Not started with --expose-gc: the flag can still be set now; new contexts then get gc().
      setFlagsFromString('--expose-gc');
      gcFunction = runInNewContext('gc') as NodeJS.GCFunction;
    }
  }
  gcFunction(FULL_COLLECTION);
};

interface MemoryReading {
  rss: number;
  heapUsed: number;
}

/** The median of MEMORY_READINGS readings, each after a full collection (FULL_COLLECTION) and a pause. */
const settledMemory = async (): Promise<MemoryReading> => {
  const readings: MemoryReading[] = [];
  for (let i = 0; i < MEMORY_READINGS; i++) {
    collectGarbage();
    await sleep(150);
    const usage = process.memoryUsage();
    readings.push({ rss: usage.rss, heapUsed: usage.heapUsed });
  }
  return { rss: median(readings.map((r) => r.rss)), heapUsed: median(readings.map((r) => r.heapUsed)) };
};

// ---------------------------------------------------------------------------------------------
// The bare reference: a WebSocketServer on node:http, nothing else.

interface BareWs {
  url: string;
  wsUrl: string;
  count(): number;
  close(): Promise<void>;
}

/** Ours' hello for a user without keys is this size give or take the id: the bare sends the same. */
const BARE_HELLO = JSON.stringify({ type: 'hello', asset_classes: [], user_id: 0 });

const startBareWs = async (): Promise<BareWs> => {
  const clients = new Set<WebSocket>();
  let sampler: WebSocket | undefined;
  let eventId = 0;
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    if (req.method !== 'POST' || req.url !== BARE_POST_PATH) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let clientOrderId: unknown;
      try {
        clientOrderId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { client_order_id?: unknown }).client_order_id;
      } catch {
        clientOrderId = undefined;
      }
      if (typeof clientOrderId !== 'string') {
        res.writeHead(400).end();
        return;
      }
      const body = JSON.stringify({ client_order_id: clientOrderId, status: 'accepted' });
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
      // The frame leaves right after the answer, in the same tick: all a WebSocket server must do.
      sampler?.send(JSON.stringify({ type: 'order_event', event_type: 'accepted', client_order_id: clientOrderId, event_id: String(++eventId) }));
    });
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4_096, perMessageDeflate: false });
  server.on('upgrade', (req: http.IncomingMessage, socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== BARE_WS_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      clients.add(ws);
      if (url.searchParams.has('sampler')) sampler = ws;
      ws.on('message', () => undefined);
      ws.on('error', () => undefined);
      ws.once('close', () => {
        clients.delete(ws);
        if (sampler === ws) sampler = undefined;
      });
      ws.send(BARE_HELLO);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${BARE_WS_PATH}`,
    count: () => clients.size,
    close: () =>
      (closing ??= (async () => {
        for (const ws of clients) ws.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
};

// ---------------------------------------------------------------------------------------------
// Child processes: one request, one answer, each bounded in time.

type Reply<T> = { ok: true; result: T } | { ok: false; error: string };

type BareCommand = { op: 'start' } | { op: 'memory' } | { op: 'count' };
interface BareStarted {
  url: string;
  wsUrl: string;
  pid: number;
}
interface BareMemory {
  reading: MemoryReading;
  count: number;
}

/** The bare server in a process of its own (the memory phase). */
const runBareChild = () => {
  let bare: BareWs | undefined;
  const handle = async (command: BareCommand): Promise<BareStarted | BareMemory | number> => {
    if (command.op === 'start') {
      bare ??= await startBareWs();
      return { url: bare.url, wsUrl: bare.wsUrl, pid: process.pid };
    }
    if (!bare) throw new Error('not started');
    if (command.op === 'count') return bare.count();
    return { reading: await settledMemory(), count: bare.count() };
  };
  process.on('message', (command: BareCommand) => {
    handle(command).then(
      (result) => process.send?.({ ok: true, result }),
      (error: unknown) => process.send?.({ ok: false, error: String(error) }),
    );
  });
  process.once('disconnect', () => {
    void (bare?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  });
};

const THIS_FILE = fileURLToPath(import.meta.url);
const CLIENTS_FILE = fileURLToPath(new URL('./ws-clients.ts', import.meta.url));

/** Every child started here, so each is ended (by its PID) whatever happens. */
const children = new Set<ChildProcess>();

interface Child<C> {
  pid: number;
  ask<T>(command: C, timeoutMs: number): Promise<T>;
  stop(): Promise<void>;
}

const startChild = <C>(what: string, args: string[]): Child<C> => {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (child.pid === undefined) throw new Error(`${what} did not start`);
  const pid = child.pid;
  children.add(child);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    children.delete(child);
  });
  const ask = <T>(command: C, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      if (exited) {
        reject(new Error(`${what} is gone`));
        return;
      }
      const limit = setTimeout(() => {
        cleanup();
        process.kill(pid, 'SIGTERM');
        reject(new Error(`${what} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: Reply<T>) => {
        cleanup();
        if (message.ok) resolve(message.result);
        else reject(new Error(`${what} failed: ${message.error}`));
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`${what} exited with ${signal ?? code}`));
      };
      const cleanup = () => {
        clearTimeout(limit);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send(command as object);
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (exited) {
        resolve();
        return;
      }
      const force = setTimeout(() => process.kill(pid, 'SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      if (child.connected) child.disconnect();
      else process.kill(pid, 'SIGTERM');
    });
  return { pid, ask, stop };
};

// ---------------------------------------------------------------------------------------------
// The bench.

// Everything started here is undone here, last first, once, also on Ctrl-C.
const { cleanups, cleanUp } = createCleanups();

const killChildren = () => {
  for (const child of children) if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGTERM');
};

/** Polls `check` until it holds or `ms` pass; says whether it held. */
const waitUntil = async (check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> => {
  const bound = performance.now() + ms;
  while (performance.now() < bound) {
    if (await check()) return true;
    await sleep(20);
  }
  return check();
};

const usersSetting = (): number[] => {
  const raw = process.env.BENCH_WS_USERS;
  if (raw === undefined || raw.trim() === '') return [1, 100, 1000];
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_IDLE_CONNECTIONS)) throw new Error(`BENCH_WS_USERS must be positive integers up to ${MAX_IDLE_CONNECTIONS}, comma-separated, got ${JSON.stringify(raw)}`);
  return [...new Set(values)].sort((a, b) => a - b);
};

interface Merged {
  target: 'bare' | 'ours';
  users: number;
  samples: number;
  /** The frame's wait after the answer, 0 when it came first; sorted. */
  waitMs: number[];
  /** Samples whose frame came before the answer. */
  frameFirst: number;
  fillMs: number[];
  postMs: number[];
  missingAccepted: number;
  missingFill: number;
  statusCodes: Record<string, number>;
  errors: number;
  samplerClosed: boolean;
  /** The server's event loop, busy share per slice. */
  elu: number[];
  /** Idle connections the server counted during the slices (should be users - 1). */
  idleCounted: number[];
}

const merge = (target: 'bare' | 'ours', users: number, slices: SampleResult[], elu: number[], idleCounted: number[]): Merged => {
  const statusCodes: Record<string, number> = {};
  for (const slice of slices) for (const [code, n] of Object.entries(slice.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const accepted = slices.flatMap((s) => s.acceptedMs);
  return {
    target,
    users,
    samples: slices.reduce((sum, s) => sum + s.samples, 0),
    waitMs: accepted.map((ms) => Math.max(0, ms)).sort((a, b) => a - b),
    frameFirst: accepted.filter((ms) => ms < 0).length,
    fillMs: slices.flatMap((s) => s.fillMs).sort((a, b) => a - b),
    postMs: slices.flatMap((s) => s.postMs).sort((a, b) => a - b),
    missingAccepted: slices.reduce((sum, s) => sum + s.missingAccepted, 0),
    missingFill: slices.reduce((sum, s) => sum + s.missingFill, 0),
    statusCodes,
    errors: slices.reduce((sum, s) => sum + s.errors, 0),
    samplerClosed: slices.some((s) => s.samplerClosed),
    elu,
    idleCounted,
  };
};

interface MemoryFigure {
  target: string;
  opened: number;
  failed: number;
  errors: string[];
  openSec: number;
  before: MemoryReading;
  after: MemoryReading;
  /** Connections the server counted once they were open. */
  serverCount: number;
  closedEarly: number;
}

const main = async () => {
  if (!postgresAdminUrl('WebSocket', 'order events travel through its outbox and LISTEN/NOTIFY')) return;
  const settings = {
    samples: positiveInt('BENCH_WS_SAMPLES', 200),
    warmup: positiveInt('BENCH_WS_WARMUP', 30),
    rounds: positiveInt('BENCH_WS_ROUNDS', 2),
    users: usersSetting(),
    idleConnections: positiveInt('BENCH_WS_IDLE_CONNECTIONS', GOAL_IDLE_CONNECTIONS),
    perUser: positiveInt('BENCH_WS_CONNECTIONS_PER_USER', 10),
    batch: positiveInt('BENCH_WS_BATCH', 200),
    sliceSeconds: positiveInt('BENCH_WS_SLICE_SECONDS', 20),
  };
  if (settings.idleConnections > MAX_IDLE_CONNECTIONS) throw new Error(`BENCH_WS_IDLE_CONNECTIONS is at most ${MAX_IDLE_CONNECTIONS}: the client process may hold at most 20,000 descriptors`);
  if (settings.perUser > MAX_PER_USER) throw new Error(`BENCH_WS_CONNECTIONS_PER_USER is at most ${MAX_PER_USER} (WS_MAX_CONNECTIONS_PER_USER's ceiling)`);
  const maxUsers = settings.users.at(-1)!;
  // Idle users: N - 1 for the largest N (the sampler is the Nth), and enough for the memory phase.
  const idleUserCount = Math.max(maxUsers - 1, Math.ceil(settings.idleConnections / settings.perUser), 1);

  // The service and its helpers are loaded here, not at the top: the bare server's child needs none of them.
  const [{ startBenchService, benchTrader }, { insertUser }, { toAuthUser }, { hashPassword }, { WS_PATHS }] = await Promise.all([
    import('./service.ts'),
    import('../../server/users/queries.ts'),
    import('../../server/users/users.ts'),
    import('../../server/auth/passwords.ts'),
    import('../../contracts/events.ts'),
  ]);

  const loadBefore = loadavg();
  const { app, config, logFile, closeLog } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-ws-',
    env: {
      RATE_LIMIT_ORDERS_PER_MIN: String(RATE_LIMIT_PER_MIN),
      SIM_TICK_INTERVAL_MS: '0',
      SIM_INITIAL_CASH_USDT: '1000000000',
      WS_MAX_CONNECTIONS_PER_USER: String(MAX_PER_USER),
    },
  });
  const wsBase = app.url.replace(/^http/, 'ws');
  console.log(`service up on ${app.url} (Postgres, fresh database, pool ${config.DB_POOL_SIZE}, heartbeat ${config.WS_HEARTBEAT_INTERVAL_SEC} s)`);

  // The sampler, as a client makes it: register, log in, register a crypto key; a price for BTC/USDT.
  const { token: samplerToken } = await benchTrader(app, 'bench_ws');

  // The idle users, straight into the database (one password hash for all), each with a session.
  const madeStarted = performance.now();
  const passwordHash = await hashPassword(`bench-ws-${randomBytes(8).toString('hex')}`);
  const idleTokens: string[] = [];
  for (let from = 0; from < idleUserCount; from += 50) {
    const made = await Promise.all(
      Array.from({ length: Math.min(50, idleUserCount - from) }, async (_, k) => {
        const name = `bench_ws_${process.pid}_${from + k}`;
        const row = await insertUser(app.services.db, { username: name, email: `${name}@example.com`, passwordHash, role: 'user', at: app.services.clock.now() });
        return (await app.services.auth.issueSession({ user: toAuthUser(row) })).access_token;
      }),
    );
    idleTokens.push(...made);
  }
  console.log(`${idleUserCount} idle users made in ${fixed((performance.now() - madeStarted) / 1000, 1)} s (insertUser + issueSession); the sampler registered over HTTP with a crypto key`);

  const clients = startChild<ClientCommand>('client process', [CLIENTS_FILE]);
  cleanups.push({ what: 'client process', run: () => clients.stop() });
  const openTimeout = (count: number) => (Math.ceil(count / settings.batch) * FRAME_TIMEOUT_MS) + 30_000;

  // --- Memory: idle connections, ours first, then a fresh bare server in its own process. ------
  const memoryOf = async (target: string, url: string, tokens: string[] | null, read: () => Promise<MemoryReading>, serverCount: () => Promise<number>): Promise<MemoryFigure> => {
    const before = await read();
    const group = `memory-${target}`;
    const opened = await clients.ask<OpenResult>({ op: 'open', group, url, tokens, count: settings.idleConnections, batch: settings.batch, timeoutMs: FRAME_TIMEOUT_MS }, openTimeout(settings.idleConnections));
    await sleep(SETTLE_MS);
    const counted = await serverCount();
    const after = await read();
    const closed = await clients.ask<CloseResult>({ op: 'close', group, timeoutMs: 30_000 }, 60_000);
    if (!(await waitUntil(async () => (await serverCount()) === 0, 15_000))) console.log(`WARN  ${target}: ${await serverCount()} connections still counted by the server 15 s after the clients closed them`);
    return { target, opened: opened.opened, failed: opened.failed, errors: opened.errors, openSec: opened.ms / 1000, before, after, serverCount: counted, closedEarly: closed.closedEarly };
  };

  console.log(`memory: ${settings.idleConnections} idle connections to ours (${idleUserCount} users, up to ${Math.ceil(settings.idleConnections / idleUserCount)} each), ${settings.batch} at a time ...`);
  const memoryOurs = await memoryOf('ours', `${wsBase}${WS_PATHS.orders}`, idleTokens, settledMemory, () => Promise.resolve(app.channels.count()));

  console.log(`memory: ${settings.idleConnections} idle connections to a bare ws server in a fresh process ...`);
  const bareChild = startChild<BareCommand>('bare server process', ['--expose-gc', THIS_FILE, '--bare-server']);
  cleanups.push({ what: 'bare server process', run: () => bareChild.stop() });
  const bareStarted = await bareChild.ask<BareStarted>({ op: 'start' }, 30_000);
  const memoryBare = await memoryOf(
    'bare',
    bareStarted.wsUrl,
    null,
    async () => (await bareChild.ask<BareMemory>({ op: 'memory' }, 30_000)).reading,
    () => bareChild.ask<number>({ op: 'count' }, 30_000),
  );
  await bareChild.stop();

  // --- Latency: N connected users, alternating slices, both servers in this process. ----------
  const bare = await startBareWs();
  cleanups.push({ what: 'bare server', run: () => bare.close() });
  const tag = randomBytes(3).toString('hex');
  const targetOf = (name: 'bare' | 'ours', label: string): SampleTarget =>
    name === 'ours'
      ? { name, wsUrl: `${wsBase}${WS_PATHS.orders}?token=${encodeURIComponent(samplerToken)}`, postUrl: `${app.url}/api/equity/orders`, headers: { authorization: `Bearer ${samplerToken}` }, order: ORDER, idPrefix: `ws${tag}-${label}`, waitFill: true }
      : { name, wsUrl: `${bare.wsUrl}?sampler=1`, postUrl: `${bare.url}${BARE_POST_PATH}`, headers: { authorization: `Bearer ${samplerToken}` }, order: ORDER, idPrefix: `ws${tag}-${label}`, waitFill: false };
  const serverCount = (name: 'bare' | 'ours') => (name === 'ours' ? app.channels.count() : bare.count());
  /** Ours' deferred in-process work (fills, broker events) done, so it never lands on the next slice. */
  const drainOurs = async () => {
    await app.services.simulator.idle();
    await app.services.orders.idle();
  };
  const sampleTimeout = (samples: number) => settings.sliceSeconds * 1000 + 3 * FRAME_TIMEOUT_MS + samples * 10 + 30_000;

  let slices = 0;
  const slice = async (name: 'bare' | 'ours', users: number, samples: number, label: string) => {
    const group = `idle-${label}`;
    if (users > 1) {
      const opened = await clients.ask<OpenResult>(
        { op: 'open', group, url: name === 'ours' ? `${wsBase}${WS_PATHS.orders}` : bare.wsUrl, tokens: name === 'ours' ? idleTokens.slice(0, users - 1) : null, count: users - 1, batch: settings.batch, timeoutMs: FRAME_TIMEOUT_MS },
        openTimeout(users - 1),
      );
      if (opened.failed > 0) throw new Error(`${name}: ${opened.failed} of ${users - 1} idle connections failed to open: ${opened.errors.join('; ')}`);
    }
    const idleCounted = serverCount(name);
    await sleep(200);
    const eluBefore = performance.eventLoopUtilization();
    const result = await clients.ask<SampleResult>({ op: 'sample', target: targetOf(name, label), samples, maxSeconds: settings.sliceSeconds, frameTimeoutMs: FRAME_TIMEOUT_MS }, sampleTimeout(samples));
    const elu = performance.eventLoopUtilization(eluBefore).utilization;
    if (users > 1) await clients.ask<CloseResult>({ op: 'close', group, timeoutMs: 30_000 }, 60_000);
    if (!(await waitUntil(() => serverCount(name) === 0, 15_000))) console.log(`WARN  ${name}: ${serverCount(name)} connections still counted 15 s after the clients closed them`);
    if (name === 'ours') await drainOurs();
    slices++;
    return { result, elu, idleCounted };
  };

  console.log(`warm-up: ${settings.warmup} orders per target, not counted ...`);
  for (const name of ['bare', 'ours'] as const) await slice(name, 1, settings.warmup, `warm-${name}`);

  const perSlice = Math.max(1, Math.ceil(settings.samples / settings.rounds));
  const latency: Merged[] = [];
  for (const users of settings.users) {
    console.log(`latency: ${users} connected user${users === 1 ? '' : 's'}, ${perSlice * settings.rounds} orders per target in ${settings.rounds} alternating slices ...`);
    const results: Record<'bare' | 'ours', { slices: SampleResult[]; elu: number[]; idle: number[] }> = { bare: { slices: [], elu: [], idle: [] }, ours: { slices: [], elu: [], idle: [] } };
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? (['bare', 'ours'] as const) : (['ours', 'bare'] as const);
      for (const name of order) {
        const { result, elu, idleCounted } = await slice(name, users, perSlice, `${name}-${users}-${round}`);
        results[name].slices.push(result);
        results[name].elu.push(elu);
        results[name].idle.push(idleCounted);
      }
    }
    latency.push(merge('bare', users, results.bare.slices, results.bare.elu, results.bare.idle), merge('ours', users, results.ours.slices, results.ours.elu, results.ours.idle));
  }
  const loadAfter = loadavg();

  await clients.stop();
  await bare.close();
  await app.close();
  await closeLog();
  const logText = readFileSync(logFile, 'utf8');
  const errorLines = logText.split('"level":"error"').length - 1;
  const warnLines = logText.split('"level":"warn"').length - 1;

  // --- Report. --------------------------------------------------------------------------------
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const pct = (value: number) => `${fixed(value * 100)} %`;
  const mean = (values: number[]) => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);
  const non201 = (m: Merged) => Object.entries(m.statusCodes).reduce((sum, [code, n]) => (code === '201' ? sum : sum + n), 0);

  console.log('');
  console.log(`WebSocket order events (${WS_PATHS.orders}): ours (outbox + LISTEN/NOTIFY + the order feed) vs a bare ws server, same run`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; clients (idle connections and the sampler) in one child process; ${slices} slices run`);
  console.log(`  ours: NODE_ENV=test, LOG_LEVEL=info to a file, pool ${config.DB_POOL_SIZE}, WS_MAX_CONNECTIONS_PER_USER=${MAX_PER_USER}, RATE_LIMIT_ORDERS_PER_MIN=${RATE_LIMIT_PER_MIN}, SIM_TICK_INTERVAL_MS=0`);
  console.log(`  load average before/after: ${loadBefore.map((v) => v.toFixed(2)).join(' ')} / ${loadAfter.map((v) => v.toFixed(2)).join(' ')} (other work on the machine disturbs the figures)`);
  console.log('');
  console.log('Latency: from the order\'s 201 answer read in full to its `accepted` frame read, on the same client (0 when the frame came first);');
  console.log('the first fill frame from the same instant (ours only); the POST round trip. One order at a time; the sampler is one of the N users.');
  const widths = [6, 8, 8, 8, 8, 8, 11, 9, 9, 9, 9, 8, 9, 8];
  const row = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' ');
  console.log(row(['users', 'target', 'orders', 'p50 ms', 'p99 ms', 'max ms', 'frame first', 'fill p50', 'fill p99', 'POST p50', 'POST p99', 'missing', 'non-201', 'loop %']));
  for (const m of latency) {
    console.log(
      row([
        String(m.users),
        m.target === 'bare' ? 'bare ws' : 'ours',
        String(m.samples),
        fixed(percentile(m.waitMs, 50), 1),
        fixed(percentile(m.waitMs, 99), 1),
        fixed(m.waitMs.at(-1) ?? Number.NaN, 1),
        `${m.frameFirst}`,
        m.target === 'ours' ? fixed(percentile(m.fillMs, 50), 1) : '-',
        m.target === 'ours' ? fixed(percentile(m.fillMs, 99), 1) : '-',
        fixed(percentile(m.postMs, 50), 1),
        fixed(percentile(m.postMs, 99), 1),
        String(m.missingAccepted + m.missingFill),
        String(non201(m) + m.errors),
        fixed(mean(m.elu) * 100),
      ]),
    );
  }
  const counted = perSlice * settings.rounds;
  const kthSlowest = counted - Math.ceil(0.99 * counted) + 1;
  const ordinal = (k: number) => `${k}${k % 100 >= 11 && k % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][k % 10] ?? 'th')}`;
  console.log(`  p99 (nearest rank) of ${counted} orders is the ${kthSlowest === 1 ? 'slowest' : `${ordinal(kthSlowest)} slowest`}; a frame not seen within ${FRAME_TIMEOUT_MS} ms counts as that long ("missing");`);
  console.log(`  loop %: this process's event loop busy during the slices (both servers live here, and so does the service's background work, which weighs most on the bare's short slices)`);
  for (const m of latency) {
    const expectedIdle = m.users - 1;
    if (m.idleCounted.some((n) => n !== expectedIdle)) console.log(`  WARN  ${m.target} at ${m.users} users: the server counted ${m.idleCounted.join(', ')} idle connections, not ${expectedIdle}`);
    if (m.samplerClosed) console.log(`  WARN  ${m.target} at ${m.users} users: the server closed the sampler's socket during a slice`);
  }

  console.log('');
  console.log(`Memory: ${settings.idleConnections} idle connections opened ${settings.batch} at a time, each counted once its hello arrived; RSS and V8 heap after gc, median of ${MEMORY_READINGS} readings (KB = 1024 bytes)`);
  const mwidths = [34, 8, 7, 8, 11, 11, 11, 13];
  const mrow = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(mwidths[0]!) : cell.padStart(mwidths[i]!))).join(' ');
  console.log(mrow(['target', 'opened', 'failed', 'open s', 'RSS MB', 'RSS + MB', 'KB/conn', 'heap KB/conn']));
  const perConnection = (m: MemoryFigure) => (m.opened > 0 ? (m.after.rss - m.before.rss) / 1024 / m.opened : Number.NaN);
  const heapPerConnection = (m: MemoryFigure) => (m.opened > 0 ? (m.after.heapUsed - m.before.heapUsed) / 1024 / m.opened : Number.NaN);
  for (const [label, m] of [
    ['bare ws (a fresh process of its own)', memoryBare],
    ['ours (the service\'s process)', memoryOurs],
  ] as const) {
    console.log(mrow([label, String(m.opened), String(m.failed), fixed(m.openSec, 1), `${fixed(m.before.rss / 1048576)} -> ${fixed(m.after.rss / 1048576)}`, fixed((m.after.rss - m.before.rss) / 1048576, 1), fixed(perConnection(m), 2), fixed(heapPerConnection(m), 2)]));
  }
  for (const m of [memoryBare, memoryOurs]) {
    if (m.failed > 0) console.log(`  WARN  ${m.target}: ${m.failed} connections failed to open: ${m.errors.join('; ')}`);
    if (m.serverCount !== m.opened) console.log(`  WARN  ${m.target}: the server counted ${m.serverCount} connections, the client held ${m.opened}`);
    if (m.closedEarly > 0) console.log(`  WARN  ${m.target}: the server closed ${m.closedEarly} idle connections before the client did`);
  }
  console.log(`  ours' log: ${warnLines} warn lines, ${errorLines} error lines`);

  console.log('');
  const goalRow = latency.find((m) => m.target === 'ours' && m.users === GOAL_USERS) ?? latency.filter((m) => m.target === 'ours').at(-1)!;
  const bareAtGoal = latency.find((m) => m.target === 'bare' && m.users === goalRow.users)!;
  const goalNote = goalRow.users === GOAL_USERS ? '' : ` [measured at ${goalRow.users} users, the goal is stated at ${GOAL_USERS}]`;
  const p99Ours = percentile(goalRow.waitMs, 99);
  console.log(`${verdict(p99Ours <= GOAL_P99_MS)}  latency: ours p99 ${fixed(p99Ours, 1)} ms at ${goalRow.users} connected users (goal <= ${GOAL_P99_MS} ms); bare ws p99 ${fixed(percentile(bareAtGoal.waitMs, 99), 1)} ms${goalNote}`);
  const kb = perConnection(memoryOurs);
  const memNote = settings.idleConnections === GOAL_IDLE_CONNECTIONS ? '' : ` [measured at ${settings.idleConnections} connections, the goal is stated at ${GOAL_IDLE_CONNECTIONS}]`;
  console.log(`${verdict(kb <= GOAL_KB_PER_CONNECTION)}  memory: ours ${fixed(kb, 2)} KB RSS per idle connection (goal <= ${GOAL_KB_PER_CONNECTION} KB); bare ws ${fixed(perConnection(memoryBare), 2)} KB${memNote}`);
  const delivered = latency.filter((m) => m.target === 'ours').every((m) => m.missingAccepted + m.missingFill + non201(m) + m.errors === 0 && m.samples > 0) && memoryOurs.failed === 0 && memoryOurs.serverCount === memoryOurs.opened;
  console.log(
    `${verdict(delivered)}  delivery: every order of ours answered 201 with its accepted and fill frames on the sampler's socket (${latency
      .filter((m) => m.target === 'ours')
      .map((m) => `${m.users} users: ${m.samples} orders, ${m.missingAccepted + m.missingFill} frames missing, ${non201(m) + m.errors} non-201/errors`)
      .join('; ')}); ${memoryOurs.opened}/${settings.idleConnections} idle connections opened (server counted ${memoryOurs.serverCount})`,
  );
  console.log(`  server event loop busy during ours' slices: ${latency.filter((m) => m.target === 'ours').map((m) => `${m.users} users ${pct(mean(m.elu))}`).join(', ')}`);
};

if (process.argv[2] === '--bare-server') {
  runBareChild();
} else {
  await runBench(main, { cleanUp, stopChildren: killChildren });
}
