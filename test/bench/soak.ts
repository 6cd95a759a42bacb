// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/soak.ts`: a steady load
// for minutes, to show whether the service wears down as its history grows. SOAK_USERS users
// (default 50) each trade as a person at a screen would: an order every 1-3 s (BTC/USDT market
// orders, buy and sell in turn), their order lists (all, and the open ones) and positions read
// every 5 s, a two-year backtest of AAPL and an inline quick analysis every 20 s (the heuristic
// provider, demo bars), and their /ws/equity/orders socket open all along.
//
// The goal: the p99 of every answer in the last minute within twice the second minute's (the
// first minute warms up). Printed per minute beside it: the p99 of each kind of request, a
// reference measured in the same run (a bare node:http handler in the service's process, asked
// 5 times a second by the same generator: what the machine and the process's event loop add),
// 5xx answers and failed requests, the service's RSS and open descriptors, the time Postgres
// backends spent executing, and the rows of history read (sequentially or through an index).
// At the end: every order answered 201 must have had its fill frame on its user's socket, and no
// socket may have closed.
//
// As in orders.ts, the service lives in this process and the load comes from this file run as a
// child process (`--load`), so the generator never shares the service's event loop. Users are
// written straight into the database with a session each (as the test factories do), so the
// registration throttle does not meet them; their exchange keys go through the API.
//
// Settings: SOAK_MINUTES (default 5; the issue's soak ran 10; at least 3), SOAK_USERS (default
// 50). DATABASE_URL is required (an admin URL: a fresh database is created and dropped); without
// it the bench says so and exits 0. Traffic goes to 127.0.0.1 only; the run stops by itself. The
// exit code is 0 whatever the figures (a report, not a test); non-zero on a crash.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { createCleanups, fixed, percentile, positiveInt, postgresAdminUrl, runBench, sleep } from './common.ts';

const GOAL_RATIO = 2;
const REQUEST_TIMEOUT_MS = 30_000;
/** After the schedule ends: how long answers and frames still in flight are waited for. */
const DRAIN_MS = 30_000;
const REFERENCE_PER_SEC = 5;
const KINDS = ['order', 'list', 'list open', 'positions', 'backtest', 'analysis'] as const;
type Kind = (typeof KINDS)[number];
/** Tables that grow with the load: the rows read of them per minute show a read that costs more as they grow. */
const HISTORY_TABLES = ['orders', 'audit_events', 'order_fills', 'outbox_events', 'sim_orders', 'sim_fills', 'analysis_reports', 'analysis_traces', 'backtest_results'];

interface SoakUser {
  userId: number;
  token: string;
}

interface LoadSpec {
  url: string;
  wsUrl: string;
  referenceUrl: string;
  users: SoakUser[];
  minutes: number;
  backtest: Record<string, unknown>;
}

/** One minute of the generator's figures, by the minute the requests were sent in. */
interface MinuteFigures {
  latencies: Record<Kind | 'reference', number[]>;
  statuses: Record<string, number>;
  /** Requests that got no answer (refused, reset, timed out). */
  failed: number;
}

interface LoadResult {
  minutes: MinuteFigures[];
  orders201: number;
  /** Orders answered 201 whose fill frame never came on the socket. */
  framesMissing: number;
  framesReceived: number;
  socketsOpened: number;
  /** Sockets that closed before the end, or failed to open. */
  socketsLost: number;
  socketCloses: string[];
  /** Requests still unanswered when the run ended (counted as failed, with the time they waited). */
  straggling: number;
}

// ---------------------------------------------------------------------------------------------
// The load generator (the child process side).

const runGenerator = async (spec: LoadSpec): Promise<LoadResult> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const emptyMinute = (): MinuteFigures => ({ latencies: { order: [], list: [], 'list open': [], positions: [], backtest: [], analysis: [], reference: [] }, statuses: {}, failed: 0 });
  const minutes = Array.from({ length: spec.minutes }, emptyMinute);
  const t0 = performance.now() + 2000;
  const end = t0 + spec.minutes * 60_000;
  const minuteOf = (at: number) => Math.min(spec.minutes - 1, Math.max(0, Math.floor((at - t0) / 60_000)));
  /** Requests without an answer yet: those still waiting when the run ends count as failed, with the time they waited. */
  const pending = new Set<(status: number, text: string) => void>();

  const request = (kind: Kind | 'reference', method: string, url: string, token: string | undefined, body?: unknown): Promise<{ status: number; text: string }> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      const minute = minutes[minuteOf(sentAt)]!;
      const payload = body === undefined ? undefined : JSON.stringify(body);
      let settled = false;
      const done = (status: number, text: string) => {
        if (settled) return;
        settled = true;
        pending.delete(done);
        minute.latencies[kind].push(performance.now() - sentAt);
        if (status === 0) minute.failed++;
        else minute.statuses[status] = (minute.statuses[status] ?? 0) + 1;
        resolve({ status, text });
      };
      pending.add(done);
      const target = new URL(url);
      const req = http.request(
        {
          agent,
          hostname: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('end', () => done(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
          res.once('error', () => done(0, ''));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => {
        done(0, 'timeout');
        req.destroy();
      });
      req.once('error', () => done(0, ''));
      req.end(payload);
    });

  /** Runs `step` every `everyMs` (plus jitter) from a random start until the schedule ends, whatever its answers. */
  const timers = new Set<NodeJS.Timeout>();
  const every = (firstMs: number, nextMs: () => number, step: () => void) => {
    const at = (delay: number) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (performance.now() >= end) return;
        step();
        at(nextMs());
      }, delay);
      timers.add(timer);
    };
    at(firstMs);
  };

  const result: LoadResult = { minutes, orders201: 0, framesMissing: 0, framesReceived: 0, socketsOpened: 0, socketsLost: 0, socketCloses: [], straggling: 0 };
  /** client_order_id -> its fill frame arrived; an order answered 201 is awaited here. */
  const filled = new Map<string, boolean>();
  const sockets: WebSocket[] = [];
  let ending = false;

  // Every user's socket first, as a console open all along.
  await Promise.all(
    spec.users.map(
      (user) =>
        new Promise<void>((resolve) => {
          const ws = new WebSocket(`${spec.wsUrl}/ws/equity/orders?token=${encodeURIComponent(user.token)}`);
          sockets.push(ws);
          let opened = false;
          ws.on('message', (data: Buffer) => {
            if (!opened) {
              opened = true;
              result.socketsOpened++;
              resolve();
            }
            result.framesReceived++;
            const frame = JSON.parse(data.toString('utf8')) as { type?: string; client_order_id?: string; status?: string };
            if (frame.type === 'order_event' && frame.client_order_id && frame.status === 'filled') filled.set(frame.client_order_id, true);
          });
          ws.on('error', () => undefined);
          ws.once('close', (code: number, reason: Buffer) => {
            if (!ending || !opened) {
              result.socketsLost++;
              result.socketCloses.push(`${user.userId}: ${code} ${reason.toString('utf8')}`);
            }
            resolve();
          });
        }),
    ),
  );

  await sleep(Math.max(0, t0 - performance.now()));
  process.send?.({ type: 'started' });
  for (const [index, user] of spec.users.entries()) {
    let n = 0;
    every(Math.random() * 3000, () => 1000 + Math.random() * 2000, () => {
      n++;
      const clientOrderId = `soak-${user.userId}-${n}-${randomBytes(3).toString('hex')}`;
      const order = { asset_class: 'crypto', symbol: 'BTC/USDT', side: n % 2 === 1 ? 'buy' : 'sell', qty: 0.001, order_type: 'market', client_order_id: clientOrderId };
      void request('order', 'POST', `${spec.url}/api/equity/orders`, user.token, order).then(({ status }) => {
        if (status !== 201) return;
        result.orders201++;
        if (!filled.has(clientOrderId)) filled.set(clientOrderId, false);
      });
    });
    every(Math.random() * 5000, () => 5000, () => {
      void request('list', 'GET', `${spec.url}/api/equity/orders?asset_class=crypto`, user.token);
      void request('list open', 'GET', `${spec.url}/api/equity/orders?asset_class=crypto&status=open`, user.token);
      void request('positions', 'GET', `${spec.url}/api/equity/positions?asset_class=crypto`, user.token);
    });
    // The heavy requests of users spread over the 20 s, not all at once.
    every((index / spec.users.length) * 20_000, () => 20_000, () => {
      void request('backtest', 'POST', `${spec.url}/api/equity/backtest`, user.token, spec.backtest);
      void request('analysis', 'POST', `${spec.url}/api/equity/analyze`, user.token, { symbol: 'AAPL', mode: 'quick', inline: true });
    });
  }
  every(0, () => 1000 / REFERENCE_PER_SEC, () => void request('reference', 'GET', spec.referenceUrl, undefined));

  await sleep(Math.max(0, end - performance.now()));
  const drainUntil = performance.now() + DRAIN_MS;
  while (performance.now() < drainUntil && (pending.size > 0 || [...filled.values()].some((seen) => !seen))) await sleep(100);
  result.straggling = pending.size;
  for (const done of [...pending]) done(0, 'unanswered');
  for (const timer of timers) clearTimeout(timer);
  ending = true;
  result.framesMissing = [...filled.values()].filter((seen) => !seen).length;
  for (const ws of sockets) ws.close(1000);
  agent.destroy();
  return result;
};

// ---------------------------------------------------------------------------------------------
// The bench (the parent side).

const { cleanups, cleanUp } = createCleanups();
let loadChild: ChildProcess | undefined;

interface ServiceMinute {
  rssMb: number;
  heapMb: number;
  fds: number;
  /** Time Postgres backends spent executing for this database in the minute, as average busy backends. */
  pgBusy: number;
  /** Rows of history read in the minute (sequential scans and index fetches), per table. */
  rowsRead: Map<string, number>;
  /** Rows of history at the minute's end. */
  orders: number;
  auditRecords: number;
}

const main = async () => {
  const adminUrl = postgresAdminUrl('soak', 'its fresh database is created and dropped, and its load reads Postgres statistics');
  if (!adminUrl) return;
  const settings = { minutes: positiveInt('SOAK_MINUTES', 5), users: positiveInt('SOAK_USERS', 50) };
  if (settings.minutes < 3) throw new Error('SOAK_MINUTES must be at least 3: the goal compares the last minute with the second');

  const { default: postgres } = await import('postgres');
  const { startBenchService, postJson } = await import('./service.ts');
  const { hashPassword } = await import('../../server/auth/passwords.ts');
  const { insertUser } = await import('../../server/users/queries.ts');
  const { toAuthUser } = await import('../../server/users/users.ts');

  let observer: ReturnType<typeof postgres> | undefined;
  const { app, config } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-soak-',
    env: {
      DEMO_DATA: 'true',
      RATE_LIMIT_ORDERS_PER_MIN: '1000',
      RATE_LIMIT_ANALYSES_PER_MIN: '1000',
      LLM_DAILY_BUDGET_USD: '1000',
      LLM_GLOBAL_DAILY_BUDGET_USD: '1000',
      AUTH_ACCESS_TOKEN_TTL_MIN: String(Math.min(24 * 60, settings.minutes * 2 + 30)),
      WS_MAX_CONNECTIONS_PER_USER: '5',
    },
    beforeStart: (url) => {
      observer = postgres(url, { max: 1, onnotice: () => undefined });
      cleanups.push({ what: 'observer connection', run: () => observer?.end({ timeout: 5 }) });
    },
  });
  const db = observer!;
  const [pgVersion] = await db<{ version: string }[]>`select current_setting('server_version') as version`;
  console.log(`Service up on ${app.url} (Postgres ${pgVersion?.version}, fresh database, pool ${config.DB_POOL_SIZE})`);

  // The users, as the factories make them: straight into the database, with a session each.
  const { db: serviceDb, clock, auth } = app.services;
  const passwordHash = await hashPassword(`soak-${randomBytes(8).toString('hex')}`);
  const users: SoakUser[] = [];
  for (let i = 0; i < settings.users; i++) {
    const username = `soak_${process.pid}_${i}`;
    const row = await insertUser(serviceDb, { username, email: `${username}@example.com`, passwordHash, role: 'user', at: clock.now() });
    const tokens = await auth.issueSession({ user: toAuthUser(row) });
    const key = await postJson(`${app.url}/api/exchange-keys`, { exchange: 'crypto_exchange', api_key: `soak-key-${process.pid}-${i}`, api_secret: 'soak-secret' }, tokens.access_token);
    if (key.status !== 201) throw new Error(`key registration failed: ${key.status} ${key.text}`);
    users.push({ userId: row.id, token: tokens.access_token });
  }
  await app.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  const bars = await app.services.marketData.read({ query: { asset_class: 'us_equity', symbol: 'AAPL' } });
  const last = bars.bars.at(-1)!.date;
  const backtest = { symbol: 'AAPL', asset_class: 'us_equity', strategy_name: 'sma_crossover', strategy_params: { fast: 10, slow: 30 }, start_date: `${Number(last.slice(0, 4)) - 2}${last.slice(4)}`, end_date: last };

  // The reference: a bare node:http handler in this process, sharing the service's event loop and machine.
  const reference = http.createServer({ keepAliveTimeout: 65_000 }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((resolve) => reference.listen(0, '127.0.0.1', resolve));
  cleanups.push({ what: 'reference server', run: () => new Promise<void>((resolve) => reference.close(() => resolve())) });
  const referenceUrl = `http://127.0.0.1:${(reference.address() as AddressInfo).port}/`;

  // Figures of the service, each minute of the schedule.
  const historyRead = async () => {
    const rows = await db<{ relname: string; read: string }[]>`select relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text as read from pg_stat_user_tables where relname in ${db(HISTORY_TABLES)}`;
    return new Map(rows.map((row) => [row.relname, Number(row.read)]));
  };
  const activeMs = async () => Number((await db<{ ms: string }[]>`select coalesce(active_time, 0)::text as ms from pg_stat_database where datname = current_database()`)[0]?.ms ?? 0);
  const serviceMinutes: ServiceMinute[] = [];

  console.log(`Soak: ${settings.users} users for ${settings.minutes} min (an order every 1-3 s each, lists and positions every 5 s, a backtest and an inline analysis every 20 s, a socket each)`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')} (other work on the machine disturbs the figures)`);
  const child = fork(fileURLToPath(import.meta.url), ['--load'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  loadChild = child;
  cleanups.push({ what: 'load generator', run: () => void child.kill('SIGTERM') });
  const spec: LoadSpec = { url: app.url, wsUrl: app.url.replace(/^http/, 'ws'), referenceUrl, users, minutes: settings.minutes, backtest };
  let scheduleStarted: () => void = () => undefined;
  const scheduled = new Promise<void>((resolve) => (scheduleStarted = resolve));
  const finished = new Promise<LoadResult>((resolve, reject) => {
    child.on('message', (message: { type: 'started' } | { type: 'result'; ok: boolean; result?: LoadResult; error?: string }) => {
      if (message.type === 'started') scheduleStarted();
      else if (message.ok && message.result) resolve(message.result);
      else reject(new Error(`load generator failed: ${message.error}`));
    });
    child.once('exit', (code, signal) => reject(new Error(`load generator exited with ${signal ?? code}`)));
  });
  finished.catch(() => undefined);
  child.send(spec);

  // The service's minutes follow the generator's schedule.
  await Promise.race([scheduled, finished.then(() => undefined), sleep(60_000).then(() => Promise.reject(new Error('the load generator did not start in a minute')))]);
  let before = { read: await historyRead(), active: await activeMs() };
  const started = performance.now();
  for (let minute = 0; minute < settings.minutes; minute++) {
    await sleep(Math.max(0, started + (minute + 1) * 60_000 - performance.now()));
    const now = { read: await historyRead(), active: await activeMs() };
    const [counts] = await db<{ orders: number; audit: number }[]>`select (select count(*)::int from orders) as orders, (select count(*)::int from audit_events) as audit`;
    const rowsRead = new Map(HISTORY_TABLES.map((table) => [table, (now.read.get(table) ?? 0) - (before.read.get(table) ?? 0)]));
    const memory = process.memoryUsage();
    serviceMinutes.push({ rssMb: memory.rss / 2 ** 20, heapMb: memory.heapUsed / 2 ** 20, fds: readdirSync('/proc/self/fd').length, pgBusy: (now.active - before.active) / 60_000, rowsRead, orders: counts?.orders ?? 0, auditRecords: counts?.audit ?? 0 });
    before = now;
    const sm = serviceMinutes.at(-1)!;
    console.log(`  minute ${minute + 1}: ${sm.orders} orders, ${sm.auditRecords} audit records so far; RSS ${fixed(sm.rssMb)} MB, ${sm.fds} fds; Postgres busy ${fixed(sm.pgBusy, 2)} backends`);
  }
  const result = await Promise.race([finished, sleep(DRAIN_MS + 60_000).then(() => Promise.reject(new Error('load generator did not report in time')))]);
  loadChild = undefined;

  // --- Report. --------------------------------------------------------------------------------
  const all = (figures: MinuteFigures) => KINDS.flatMap((kind) => figures.latencies[kind]).sort((a, b) => a - b);
  const p99 = (values: number[]) => percentile([...values].sort((a, b) => a - b), 99);
  const fivexx = (figures: MinuteFigures) => Object.entries(figures.statuses).reduce((sum, [status, n]) => sum + (Number(status) >= 500 ? n : 0), 0);
  const other = (figures: MinuteFigures) => Object.entries(figures.statuses).reduce((sum, [status, n]) => sum + (Number(status) >= 400 && Number(status) < 500 ? n : 0), 0);
  const widths = [6, 8, 8, 8, ...KINDS.map(() => 9), 8, 5, 5, 5, 7, 5, 7, 10];
  const row = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i]!)).join(' ');
  console.log('');
  console.log('Per minute (latencies in ms, by the minute a request was sent; p99 of every user request, then of each kind; ref: the bare handler):');
  console.log(row(['minute', 'requests', 'p50', 'p99', ...KINDS.map((kind) => `p99 ${kind.replace('list open', 'open').replace('positions', 'pos').replace('analysis', 'anlys').replace('backtest', 'bt')}`), 'ref p99', '5xx', '4xx', 'fail', 'RSS MB', 'fds', 'PG busy', 'rows read']));
  for (const [index, figures] of result.minutes.entries()) {
    const sorted = all(figures);
    const sm = serviceMinutes[index];
    const rowsRead = sm ? [...sm.rowsRead.values()].reduce((a, b) => a + b, 0) : Number.NaN;
    console.log(
      row([
        String(index + 1),
        String(sorted.length),
        fixed(percentile(sorted, 50), 1),
        fixed(percentile(sorted, 99), 1),
        ...KINDS.map((kind) => fixed(p99(figures.latencies[kind]), 1)),
        fixed(p99(figures.latencies.reference), 1),
        String(fivexx(figures)),
        String(other(figures)),
        String(figures.failed),
        sm ? fixed(sm.rssMb) : '-',
        sm ? String(sm.fds) : '-',
        sm ? fixed(sm.pgBusy, 2) : '-',
        fixed(rowsRead),
      ]),
    );
  }
  const busiest = [...(serviceMinutes.at(-1)?.rowsRead ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]).slice(0, 4);
  console.log(`  rows of history read in the last minute, busiest tables: ${busiest.map(([table, n]) => `${table} ${fixed(n)}`).join(', ')}`);
  const second = percentile(all(result.minutes[1]!), 99);
  const lastP99 = percentile(all(result.minutes.at(-1)!), 99);
  const ratio = lastP99 / second;
  const refRatio = p99(result.minutes.at(-1)!.latencies.reference) / p99(result.minutes[1]!.latencies.reference);
  const total5xx = result.minutes.reduce((sum, figures) => sum + fivexx(figures), 0);
  const totalFailed = result.minutes.reduce((sum, figures) => sum + figures.failed, 0);
  const statuses: Record<string, number> = {};
  for (const figures of result.minutes) for (const [status, n] of Object.entries(figures.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  const rss = serviceMinutes.map((sm) => sm.rssMb);
  const fds = serviceMinutes.map((sm) => sm.fds);
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  console.log('');
  console.log(`${verdict(ratio <= GOAL_RATIO)}  p99: last minute ${fixed(lastP99, 1)} ms / second minute ${fixed(second, 1)} ms = ${fixed(ratio, 2)} (goal <= ${GOAL_RATIO}); the reference's p99 over the same minutes: ${fixed(refRatio, 2)}x`);
  console.log(`${verdict(total5xx === 0 && totalFailed === 0)}  answers: ${JSON.stringify(statuses)}; ${total5xx} 5xx, ${totalFailed} failed requests, ${result.straggling} of them still unanswered ${DRAIN_MS / 1000} s after the schedule`);
  console.log(
    `${verdict(result.framesMissing === 0 && result.socketsLost === 0 && result.socketsOpened === settings.users)}  sockets: ${result.socketsOpened} of ${settings.users} open, ${result.socketsLost} lost${result.socketCloses.length > 0 ? ` (${result.socketCloses.slice(0, 3).join('; ')})` : ''}; ` +
      `${result.orders201} orders answered 201, ${result.framesMissing} without their fill frame; ${result.framesReceived} frames received`,
  );
  console.log(`      memory and descriptors: RSS ${rss.map((v) => fixed(v)).join(', ')} MB; fds ${fds.join(', ')} (per minute)`);
  console.log(`      load average after: ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
};

if (process.argv[2] === '--load') {
  process.once('message', (spec: LoadSpec) => {
    runGenerator(spec).then(
      (result) => process.send?.({ type: 'result', ok: true, result }, () => process.exit(0)),
      (error: unknown) => process.send?.({ type: 'result', ok: false, error: String(error) }, () => process.exit(1)),
    );
  });
  process.once('disconnect', () => process.exit(0));
} else {
  await runBench(main, { cleanUp, stopChildren: () => loadChild?.kill('SIGTERM') });
}
