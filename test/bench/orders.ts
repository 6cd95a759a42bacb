// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/orders.ts`: order
// placement through all five gates to the simulator (POST /api/equity/orders, crypto market buys,
// every request with a client_order_id of its own), beside the durable-order floor measured in
// the same run (test/bench/orders-floor.ts: a bare node:http handler that does, per order, in one
// transaction, the order row, an audit row, the fill, a second audit row and the position upsert).
//
// The goals: with 32 users, each a client waiting for its answer, ours >= 0.4 of the floor's
// orders/s; at a fixed offered rate of 20 % of the floor's throughput, sent on schedule whatever
// the answers, ours' p99 within 10 ms of the floor's p99 at the same rate.
//
// Two phases, each measured in full for both targets; the first is the headline:
// - Many users (BENCH_ORDERS_USERS, default BENCH_ORDERS_CONNECTIONS): the load the service exists
//   for. Each user is made as a client makes one (register, log in, a crypto key: benchTrader),
//   and each closed-loop client sends as its own user, so every user has one order in flight; the
//   open loop deals its orders to the users in turn. The floor gets the same users (their ids in
//   an x-user-id header, where ours reads the bearer token) and upserts each user's own position
//   row, so neither target has one hot row. Symbols: BENCH_ORDERS_SYMBOLS of BTC, ETH, SOL and BNB
//   against USDT (default all four), shared by all users as on a real venue; user u's k-th order is
//   on symbol (u + k) mod their count, so each user trades each in turn and ours' simulator
//   matches several symbols at once. Each quantity is about 5 USDT at the price the bench sets.
//   Both targets get the very same requests.
// - One user: BENCH_ORDERS_CONNECTIONS clients all sending as one user on BTC/USDT, as this bench
//   measured before. There the floor's orders all wait on one position row while ours commits an
//   account's orders together, which flatters ours: the figure is kept beside the headline.
//
// Fairness, as in run.ts:
// - Both servers live in this process (same Node, flags, heap); only one is under load at a time.
//   `npm run bench` runs it with the flags `npm start` takes on one core, as the servers get here
//   (scripts/node.sh: `--max-semi-space-size=32`, a larger young generation, so scavenges come
//   half as often; `--single-threaded-gc`, no GC helper threads to take the core from the main
//   thread; docs/operations.md), which both servers then share.
//   Each has a pool of DB_POOL_SIZE connections to the same fresh database on the same Postgres,
//   and the floor's commits are as durable as ours (the server's own synchronous_commit / fsync).
// - Pinned: where taskset (util-linux) is on PATH, every thread of this process, so both servers,
//   is pinned to the first CPU it may run on (threads started later inherit it) and the generator
//   to the second, so a server gets one core as in production and never takes the generator's.
//   Postgres runs as a system service, not ours to pin: its backends run on either core. The
//   report says which CPUs each had (read back from /proc), or that the run was unpinned and why
//   (no taskset, fewer than two CPUs, or BENCH_ORDERS_PIN=0). The generator runs at a higher
//   priority (GENERATOR_NICE, where the bench may raise it) than the backends that share its CPU:
//   in service clients are on other machines, and a send a backend held back counts in the
//   latency from its scheduled time (for both targets; the send lag is still reported).
// - The load generator is this file run as a child process (`--load`): on 2 cores an in-process
//   generator would share the servers' event loop. It is a small node:http client rather than
//   autocannon, because autocannon cannot do either half of what is asked: every request needs a
//   client_order_id of its own, and its rate mode (`overallRate`) is neither open-loop nor on
//   schedule (each connection sends its share of a second back to back, then waits for the next
//   second, one request in flight at a time, and its latency histogram is "corrected" with a 1 ms
//   expected interval). Closed loop: N workers, each sending its next order when the last one is
//   answered. Open loop: order i is sent at t0 + i/rate whatever happened to the others, over as
//   many keep-alive sockets as needed, and its latency counts from its scheduled time.
// - Measured time is split into alternating slices (floor, ours, ours, floor, ...), the open loop's
//   into more and shorter ones than the closed loop's (BENCH_ORDERS_RATE_ROUNDS, default 10): the
//   storage of a machine like this one stalls a commit for tens of ms now and then (a bare
//   insert-and-commit loop at these rates has a p99 of 13-53 ms here, with stalls up to 120 ms), and
//   in two long slices per target one stall decided which target's p99 carried it. Each slice's
//   own p99 is printed, starred where V8 ran a major (mark-compact) collection in it (the two
//   servers share one heap: such a slice's tail is the process's; before --single-threaded-gc,
//   most slices of ours over 100 ms measured here held one), and after the many-user phase's open loop the storage alone is
//   measured at the same rate (test/bench/storage-probe.ts), so a reader can tell the machine's
//   tail from the service's. Ours answers an
//   order when the broker has accepted it; the fill follows as a broker event in the same process.
//   After each slice of ours the bench waits for those fills to be applied (the "drain") before
//   the next slice starts, so ours' deferred work never lands on the floor's slice; the drain time
//   is reported, and the closed-loop figure is also given with it counted.
// - A request the generator gives up on (REQUEST_TIMEOUT_MS) counts in the latencies as the time
//   it waited, not as a missing sample; the server still finishes it, and the drain waits for that
//   too (the bench wraps the order service's place() to count placements under way).
// - Each phase starts with a warm-up of BENCH_ORDERS_WARMUP orders per target (at least two per
//   user and symbol: a user's first order on a symbol makes rows that later ones only update), then
//   an ANALYZE of the database, so that both targets run on the plans a database in service has.
//   The many-user phase then counts a census of as many orders, per order: the statements sent
//   to Postgres by kind, the round trips and the durable commits (write transactions), read off
//   the frontend protocol on this process's Postgres sockets (an observer on net.Socket#write,
//   installed for the whole run because a statement is parsed once per connection, counting only
//   during the census; it costs each write well under a microsecond); all transactions, rows and
//   backend time (pg_stat_database), WAL bytes and fsyncs (pg_stat_wal, cluster-wide), table
//   scans (pg_stat_user_tables), and the CPU of the server process (what the redesign must
//   lower, printed in the headline beside the floor's), of this database's backends (/proc) and
//   of the generator.
// - Each open-loop slice also records this process's own stalls (the longest event-loop delay and
//   V8's GC pauses), so that a tail made by the service can be told from one the machine made,
//   and, on Linux, how long its main thread was ready to run but waited for its (pinned) core,
//   beside the CPU its own helper threads took there: the rest of that wait is other processes on
//   the core, Postgres backends woken by the server's own writes above all.
// - Correctness, per user of each phase: every order of ours answered 201, and every 201 of
//   either target on disk once (ours: one order, filled, one fill; the floor: one order, one
//   fill, two audit rows, and the user's positions summing to its orders).
//
// Ours runs with RATE_LIMIT_ORDERS_PER_MIN=1000000, the setting's maximum (server/config.ts refuses
// more), far above the ~60 000 a minute reached here: the rate-limit gate runs and always passes.
//
// Settings: BENCH_ORDERS_SECONDS (closed loop, measured per target and phase, default 10),
// BENCH_ORDERS_RATE_SECONDS (open loop, per target and phase, default 10), BENCH_ORDERS_USERS
// (the many-user phase's users and clients, default BENCH_ORDERS_CONNECTIONS),
// BENCH_ORDERS_CONNECTIONS (clients of the one user, default 32, the goal's), BENCH_ORDERS_SYMBOLS
// (1 to 4, default 4), BENCH_ORDERS_ROUNDS (the closed loop's slices per target, default 2),
// BENCH_ORDERS_RATE_ROUNDS (the open loop's, default 10), BENCH_ORDERS_PROBE_SECONDS (the storage
// probe's length, default 5),
// BENCH_ORDERS_WARMUP (warm-up and census orders per target, default 400, each at most 30 s),
// BENCH_ORDERS_PIN (0: unpinned), BENCH_ORDERS_PROFILE (a folder: a V8 CPU profile of each measured slice,
// ours' and the floor's, is written there, to see where each one's time goes), BENCH_ORDERS_STEPS (1: where ours'
// open-loop orders spent their time in the server, step by step, test/bench/placement-steps.ts). The defaults take about two minutes. DATABASE_URL is required (an
// admin URL: a fresh database is created and dropped); without it the bench says so and exits 0.
// The exit code is 0 whatever the figures (a report, not a test); non-zero on a crash.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector/promises';
import http from 'node:http';
import net from 'node:net';
import { cpus, loadavg, setPriority } from 'node:os';
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type postgres from 'postgres';
import type { OrdersFloor } from './orders-floor.ts';
import { createCleanups, fixed, percentile, positiveInt, postgresAdminUrl, runBench, sleep } from './common.ts';
import { probeStorage, storageLine, type StorageProbe } from './storage-probe.ts';
import { createStepsRecorder, type StepsRecorder } from './placement-steps.ts';

const ROUTE = '/api/equity/orders';
const GOAL_RATIO = 0.4;
const GOAL_P99_DELTA_MS = 10;
const GOAL_CONNECTIONS = 32;
const OPEN_RATE_FRACTION = 0.2;
const POOL_SIZE = 20;
/** The configuration's ceiling for RATE_LIMIT_ORDERS_PER_MIN (server/config.ts): far above any rate reached here. */
const RATE_LIMIT_PER_MIN = 1_000_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** A bound on each target's census, whatever BENCH_ORDERS_WARMUP asks. */
const CENSUS_MAX_SECONDS = 30;
/** A bound on waiting for ours to finish its deferred work after a slice. */
const DRAIN_MAX_MS = 30_000;
const ORDER = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.0001, order_type: 'market' } as const;
/**
 * The many-user phase's symbols, shared by all its users: each quantity about 5 USDT at the price
 * the bench sets, in whole lots of the pair (server/instruments/universe.ts).
 */
const SYMBOLS = [
  { symbol: 'BTC/USDT', qty: 0.0001, price: '50000' },
  { symbol: 'ETH/USDT', qty: 0.002, price: '2500' },
  { symbol: 'SOL/USDT', qty: 0.04, price: '125' },
  { symbol: 'BNB/USDT', qty: 0.006, price: '800' },
] as const;

/** What varies from order to order besides its client_order_id. */
interface OrderShape {
  symbol: string;
  qty: number;
}

// ---------------------------------------------------------------------------------------------
// The load generator (the child process side).

interface LoadTarget {
  name: string;
  url: string;
  /** A user's headers per user (ours: its bearer token; the floor: its x-user-id): closed-loop worker w and open-loop order i send as user w, i mod the count. */
  users: Record<string, string>[];
  /** User u's k-th order is shapes[(u + k) mod their count]: each user trades each in turn, and every one is traded by all. */
  shapes: OrderShape[];
  /** client_order_id = `${idPrefix}-${n}`, n counting up per prefix for the life of the child. */
  idPrefix: string;
}

type LoadCommand =
  | { op: 'closed'; target: LoadTarget; connections: number; seconds: number }
  | { op: 'count'; target: LoadTarget; connections: number; count: number; maxSeconds: number }
  | { op: 'open'; target: LoadTarget; rate: number; seconds: number };

interface SliceResult {
  name: string;
  /** The window the figures count: the closed loop's duration, the open loop's schedule, or the count's wall time. */
  windowSec: number;
  sent: number;
  /** 2xx answers inside the window (closed loop: before its deadline). */
  okInWindow: number;
  /** Every 2xx answer, stragglers after a closed loop's deadline included (each is an order on disk). */
  okTotal: number;
  /** okTotal per user (the index into the target's users). */
  okByUser: number[];
  /** Latencies of 2xx answers counted in the window, and of timeouts as the time waited, ms (open loop: from the scheduled send time). */
  latenciesMs: number[];
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Open loop: how late the generator sent, ms (p99 and max). */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  /** The generator's own CPU over the command, ms. */
  generatorCpuMs: number;
  /** From the start to the last answer, s: beyond the open loop's schedule when answers fall behind. */
  spanSec: number;
}

const cpuMsNow = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

const runGenerator = () => {
  const agents = new Map<string, http.Agent>();
  const sequence = new Map<string, number>();
  /** Orders sent so far per user, by idPrefix. */
  const sentByUser = new Map<string, number[]>();
  const agentFor = (url: string) => {
    let agent = agents.get(url);
    if (!agent) {
      // Enough sockets for an open loop whose answers fall behind; a closed loop uses `connections`.
      agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
      agents.set(url, agent);
    }
    return agent;
  };

  const nextBody = (target: LoadTarget, user: number) => {
    const n = (sequence.get(target.idPrefix) ?? 0) + 1;
    sequence.set(target.idPrefix, n);
    const sent = sentByUser.get(target.idPrefix) ?? target.users.map(() => 0);
    sentByUser.set(target.idPrefix, sent);
    const shape = target.shapes[(user + sent[user]!++) % target.shapes.length];
    return JSON.stringify({ ...ORDER, ...shape, client_order_id: `${target.idPrefix}-${n}` });
  };

  type Outcome = { status: number; timeout?: boolean };
  const post = (target: LoadTarget, user: number, body: string): Promise<Outcome> =>
    new Promise((resolve) => {
      const url = new URL(target.url);
      let settled = false;
      const done = (outcome: Outcome) => {
        if (!settled) {
          settled = true;
          resolve(outcome);
        }
      };
      const req = http.request(
        {
          agent: agentFor(target.url),
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { ...target.users[user], 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          res.resume();
          res.once('end', () => done({ status: res.statusCode ?? 0 }));
          res.once('error', () => done({ status: 0 }));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => {
        done({ status: 0, timeout: true });
        req.destroy();
      });
      req.once('error', () => done({ status: 0 }));
      req.end(body);
    });

  const newResult = (target: LoadTarget): SliceResult => ({
    name: target.name,
    windowSec: 0,
    sent: 0,
    okInWindow: 0,
    okTotal: 0,
    okByUser: target.users.map(() => 0),
    latenciesMs: [],
    statusCodes: {},
    errors: 0,
    timeouts: 0,
    sendLagP99Ms: 0,
    sendLagMaxMs: 0,
    generatorCpuMs: 0,
    spanSec: 0,
  });
  let lastEnd = 0;

  /** Sends one order as `user`; `counts(end)` says whether its answer falls in the window. */
  const one = async (command: LoadCommand, user: number, result: SliceResult, startedAt: number, counts: (end: number) => boolean) => {
    result.sent++;
    const outcome = await post(command.target, user, nextBody(command.target, user));
    const end = performance.now();
    lastEnd = Math.max(lastEnd, end);
    if (outcome.status === 0) {
      result.errors++;
      if (outcome.timeout) {
        result.timeouts++;
        // An order not answered in time is not left out of the latencies: it counts as the time waited.
        if (counts(end)) result.latenciesMs.push(end - startedAt);
      }
      return;
    }
    result.statusCodes[outcome.status] = (result.statusCodes[outcome.status] ?? 0) + 1;
    if (outcome.status < 200 || outcome.status > 299) return;
    result.okTotal++;
    result.okByUser[user]!++;
    if (counts(end)) {
      result.okInWindow++;
      result.latenciesMs.push(end - startedAt);
    }
  };

  const closed = async (command: Extract<LoadCommand, { op: 'closed' | 'count' }>): Promise<SliceResult> => {
    const result = newResult(command.target);
    const t0 = performance.now();
    const deadline = t0 + (command.op === 'closed' ? command.seconds : command.maxSeconds) * 1000;
    let budget = command.op === 'count' ? command.count : Number.POSITIVE_INFINITY;
    // Worker w sends as user w mod the count: with as many workers as users, one order in flight per user.
    const worker = async (_: unknown, w: number) => {
      const user = w % command.target.users.length;
      while (performance.now() < deadline && budget > 0) {
        budget--;
        await one(command, user, result, performance.now(), (end) => end <= deadline);
      }
    };
    await Promise.all(Array.from({ length: command.connections }, worker));
    result.windowSec = command.op === 'closed' ? command.seconds : (performance.now() - t0) / 1000;
    result.spanSec = (lastEnd - t0) / 1000;
    return result;
  };

  const open = async (command: Extract<LoadCommand, { op: 'open' }>): Promise<SliceResult> => {
    const result = newResult(command.target);
    const total = Math.max(1, Math.round(command.rate * command.seconds));
    const intervalMs = 1000 / command.rate;
    const lags: number[] = [];
    const inflight = new Set<Promise<void>>();
    const t0 = performance.now() + 5;
    let next = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        // Everything due is sent now, whatever is still waiting for its answer.
        while (next < total && t0 + next * intervalMs <= now) {
          const scheduled = t0 + next * intervalMs;
          lags.push(now - scheduled);
          const sending = one(command, next % command.target.users.length, result, scheduled, () => true).finally(() => inflight.delete(sending));
          inflight.add(sending);
          next++;
        }
        if (next >= total) resolve();
        else setTimeout(tick, Math.max(0, t0 + next * intervalMs - performance.now()));
      };
      setTimeout(tick, 5);
    });
    await Promise.all(inflight);
    lags.sort((a, b) => a - b);
    result.windowSec = command.seconds;
    result.spanSec = (lastEnd - t0) / 1000;
    result.sendLagP99Ms = percentile(lags, 99);
    result.sendLagMaxMs = lags.at(-1) ?? 0;
    return result;
  };

  process.on('message', (message: LoadCommand) => {
    void (async () => {
      const cpuBefore = cpuMsNow();
      const result = message.op === 'open' ? await open(message) : await closed(message);
      result.generatorCpuMs = cpuMsNow() - cpuBefore;
      process.send?.({ ok: true, result });
    })().catch((error: unknown) => process.send?.({ ok: false, error: String(error) }));
  });
  // The parent gone (or done): nothing is left to send for.
  process.once('disconnect', () => {
    for (const agent of agents.values()) agent.destroy();
    process.exit(0);
  });
};

// ---------------------------------------------------------------------------------------------
// The bench (the parent side).



// Everything started here is undone here, last first, once, also on Ctrl-C.
const { cleanups, cleanUp } = createCleanups();

let loadChild: ChildProcess | undefined;

const THIS_FILE = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Pinning: the server side on one core, the generator on another (Postgres is not ours to pin).

interface Pinning {
  /** The CPU every thread of this process (both servers) may run on, and the generator's; both unset when unpinned. */
  server?: number;
  generator?: number;
  /** Why the run is unpinned. */
  why?: string;
}

/** The CPUs a task may run on, as /proc/<task>/status lists them ("0-1", "0,2"), or undefined where /proc does not say. */
const allowedCpusOf = (task: string): string | undefined => {
  try {
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${task}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
};

/** A kernel CPU list ("0-3,6") as CPU numbers. */
const cpuNumbers = (list: string): number[] =>
  list.split(',').flatMap((part) => {
    const [first, last = first] = part.split('-').map(Number);
    return first === undefined || last === undefined ? [] : Array.from({ length: last - first + 1 }, (_, i) => first + i);
  });

/**
 * Pins every thread of this process to its first allowed CPU with taskset (threads started later
 * inherit it from the thread that starts them), leaving the second for the generator.
 */
const pinServer = (): Pinning => {
  if (process.env.BENCH_ORDERS_PIN === '0') return { why: 'BENCH_ORDERS_PIN=0' };
  if (spawnSync('sh', ['-c', 'command -v taskset'], { stdio: 'ignore' }).status !== 0) return { why: 'taskset (util-linux) is not on PATH' };
  const allowed = allowedCpusOf('self');
  const [server, generator] = allowed === undefined ? [] : cpuNumbers(allowed);
  if (server === undefined || generator === undefined) return { why: `this process may run on CPUs ${allowed ?? '(unknown)'}, not two` };
  const pinned = spawnSync('taskset', ['-a', '-c', '-p', String(server), String(process.pid)], { encoding: 'utf8' });
  if (pinned.status !== 0) return { why: `taskset failed: ${(pinned.stderr || String(pinned.error ?? '')).trim()}` };
  return { server, generator };
};

/** This process's threads, counted by the CPUs each may run on ("0" => 12): pinning checked, not assumed. */
const threadCpus = (): Map<string, number> => {
  const counts = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    // not Linux: nothing to count
  }
  for (const task of tasks) {
    const list = allowedCpusOf(`self/task/${task}`) ?? '?';
    counts.set(list, (counts.get(list) ?? 0) + 1);
  }
  return counts;
};

/** The generator child, on `cpu` when given: one command at a time, each bounded in time. */
const startGenerator = (cpu: number | undefined) => {
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  // taskset execs node, so the child's pid is the generator's own.
  const child = cpu === undefined ? spawn(process.execPath, [THIS_FILE, '--load'], { stdio }) : spawn('taskset', ['-c', String(cpu), process.execPath, THIS_FILE, '--load'], { stdio });
  loadChild = child;
  const priority = raisePriority(child.pid);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    if (loadChild === child) loadChild = undefined;
  });
  const run = (command: LoadCommand): Promise<SliceResult> =>
    new Promise((resolve, reject) => {
      if (exited) {
        reject(new Error('load generator is gone'));
        return;
      }
      const nominalSec = command.op === 'count' ? command.maxSeconds : command.seconds;
      const limit = setTimeout(() => {
        cleanup();
        child.kill('SIGTERM');
        reject(new Error(`load generator did not answer within ${nominalSec * 1.5 + 30} s`));
      }, (nominalSec * 1.5 + 30) * 1000);
      const onMessage = (message: { ok: boolean; result?: SliceResult; error?: string }) => {
        cleanup();
        if (message.ok && message.result) resolve(message.result);
        else reject(new Error(`load generator failed: ${message.error}`));
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`load generator exited with ${signal ?? code}`));
      };
      const cleanup = () => {
        clearTimeout(limit);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send(command);
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (exited) {
        resolve();
        return;
      }
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.disconnect();
    });
  /** The CPUs the generator may run on, as /proc lists them. */
  const cpus = () => (child.pid === undefined ? undefined : allowedCpusOf(String(child.pid)));
  return { run, stop, cpus, priority };
};

/**
 * The generator's nice value: ahead of the Postgres backends that share its CPU. Clients are on
 * other machines in service; here a backend the servers' own writes woke could hold a send back,
 * and a late send counts in the latency from its scheduled time (the send lag is still reported).
 */
const GENERATOR_NICE = -10;

/**
 * Raises the generator's priority to GENERATOR_NICE, or says why it could not (raising takes root
 * or CAP_SYS_NICE). On Linux a nice value is a thread's: this sets the main thread's, which sends
 * and reads every request; node's helper threads, started before, keep theirs.
 */
const raisePriority = (pid: number | undefined): string => {
  if (pid === undefined) return 'at normal priority (no pid)';
  try {
    setPriority(pid, GENERATOR_NICE);
    return `at nice ${GENERATOR_NICE}`;
  } catch (error) {
    return `at normal priority (raising it was refused: ${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
};

type StatementKind = 'select' | 'locking select' | 'insert' | 'update' | 'delete' | 'begin' | 'commit' | 'rollback' | 'other';
const STATEMENT_KINDS: readonly StatementKind[] = ['select', 'locking select', 'insert', 'update', 'delete', 'begin', 'commit', 'rollback', 'other'];
const WRITES = new Set<StatementKind>(['locking select', 'insert', 'update', 'delete']);

/** What a statement is, from its SQL text (enough for the statements drizzle and postgres.js send). */
const classify = (text: string): StatementKind => {
  const sqlText = text.trim().toLowerCase();
  const first = /^[a-z]+/.exec(sqlText)?.[0] ?? '';
  if (first === 'begin' || first === 'start') return 'begin';
  if (first === 'commit' || first === 'end') return 'commit';
  if (first === 'rollback' || first === 'abort') return 'rollback';
  if (first === 'insert' || first === 'update' || first === 'delete') return first;
  if (first === 'select' || first === 'with') {
    if (/\b(insert\s+into|update\s+\S+\s+set|delete\s+from)\b/.test(sqlText)) return 'update';
    return /\bfor\s+(no\s+key\s+)?(update|share)\b/.test(sqlText) ? 'locking select' : 'select';
  }
  return 'other';
};

interface PgCounts {
  /** Statements executed, by kind. */
  byKind: Record<StatementKind, number>;
  /** Points where the client waits for Postgres (Sync, simple Query). */
  syncs: number;
  /** Writes to the Postgres sockets: each a system call (and, on loopback, a wakeup of a backend). */
  writes: number;
  /** Transactions that wrote (or locked rows) and committed: each a WAL flush under synchronous_commit=on. */
  writeCommits: number;
  /** Transactions opened with BEGIN. */
  explicitTx: number;
  unreliable: boolean;
}

/**
 * Follows the frontend messages written to Postgres sockets (port `pgPort`) while installed, per
 * socket (type byte + int32 length, so a message split over writes is followed): Parse names each
 * statement's SQL, Bind picks one, Execute runs it, a simple Query runs its text. From that: the
 * statements by kind, the round trips (Sync, Query), and the write transactions that committed
 * (autocommit writes, and BEGIN ... COMMIT blocks holding a write or a row lock). Anything
 * unexpected marks the count unreliable rather than guessing. Exact, local to this process, and
 * immune to other databases on the same server (unlike the cluster-wide xid and WAL counters).
 */
const pgMessageCounter = (pgPort: number) => {
  const KNOWN = new Set('BCDEHPSQXFdcfp'.split(''));
  const emptyCounts = (): PgCounts => ({ byKind: Object.fromEntries(STATEMENT_KINDS.map((k) => [k, 0])) as Record<StatementKind, number>, syncs: 0, writes: 0, writeCommits: 0, explicitTx: 0, unreliable: false });
  let counts = emptyCounts();
  interface SocketState {
    /** The start of a message whose end has not been written yet (postgres.js may split its writes). */
    partial: Buffer | undefined;
    statements: Map<string, StatementKind>;
    bound: StatementKind;
    inTx: boolean;
    txWrote: boolean;
    /** Whether a typed message was written yet: before it, the connection's untyped opening. */
    typed: boolean;
  }
  const states = new WeakMap<net.Socket, SocketState>();
  /**
   * A connection opens with messages that have no type byte, a length and then one of these codes:
   * the StartupMessage (protocol 3.0), or an SSLRequest, GSSENCRequest or CancelRequest before it.
   * Skipped: a connection opened during a census used to make all its counts unreliable ('?').
   */
  const OPENING_CODES = new Set([196_608, 80_877_103, 80_877_104, 80_877_102]);
  const cstring = (buffer: Buffer, at: number): [string, number] => {
    const end = buffer.indexOf(0, at);
    if (end < 0) throw new Error('unterminated string');
    return [buffer.toString('utf8', at, end), end + 1];
  };
  // Followed all along (a statement is parsed once per connection, maybe long before it is
  // counted); counted only between start() and stop().
  let counting = false;
  const executed = (state: SocketState, kind: StatementKind) => {
    if (counting) counts.byKind[kind]++;
    if (kind === 'begin') {
      state.inTx = true;
      state.txWrote = false;
      if (counting) counts.explicitTx++;
    } else if (kind === 'commit' || kind === 'rollback') {
      if (counting && state.inTx && state.txWrote && kind === 'commit') counts.writeCommits++;
      state.inTx = false;
    } else if (WRITES.has(kind)) {
      if (state.inTx) state.txWrote = true;
      else if (counting) counts.writeCommits++;
    }
  };
  const read = (socket: net.Socket, chunk: unknown) => {
    if (socket.remotePort !== pgPort) return;
    if (counting) counts.writes++;
    if (!Buffer.isBuffer(chunk) && !(chunk instanceof Uint8Array)) {
      counts.unreliable = true;
      return;
    }
    const written = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let state = states.get(socket);
    if (!state) {
      state = { partial: undefined, statements: new Map(), bound: 'other', inTx: false, txWrote: false, typed: false };
      states.set(socket, state);
    }
    const buffer = state.partial ? Buffer.concat([state.partial, written]) : written;
    state.partial = undefined;
    let at = 0;
    while (at + 5 <= buffer.length) {
      if (!state.typed) {
        if (at + 8 > buffer.length) break;
        if (OPENING_CODES.has(buffer.readInt32BE(at + 4))) {
          const opening = buffer.readInt32BE(at);
          if (opening < 8) {
            counts.unreliable = true;
            return;
          }
          if (at + opening > buffer.length) break;
          at += opening;
          continue;
        }
        state.typed = true;
      }
      const type = String.fromCharCode(buffer[at]!);
      const length = buffer.readInt32BE(at + 1);
      if (!KNOWN.has(type) || length < 4) {
        counts.unreliable = true;
        return;
      }
      // A message not written in full yet: read once the rest arrives.
      if (at + 1 + length > buffer.length) break;
      const body = at + 5;
      if (type === 'P') {
        const [name, next] = cstring(buffer, body);
        state.statements.set(name, classify(cstring(buffer, next)[0]));
      } else if (type === 'B') {
        const [, next] = cstring(buffer, body);
        state.bound = state.statements.get(cstring(buffer, next)[0]) ?? 'other';
      } else if (type === 'E') {
        executed(state, state.bound);
      } else if (type === 'Q') {
        executed(state, classify(cstring(buffer, body)[0]));
        if (counting) counts.syncs++;
      } else if (type === 'S') {
        if (counting) counts.syncs++;
      }
      at += 1 + length;
    }
    if (at < buffer.length) state.partial = Buffer.from(buffer.subarray(at));
  };
  type Write = (this: net.Socket, ...args: unknown[]) => boolean;
  const proto = net.Socket.prototype as unknown as { write: Write };
  const ownWrite = Object.prototype.hasOwnProperty.call(proto, 'write') ? proto.write : undefined;
  const original = proto.write;
  return {
    /** From now on every write to Postgres is followed (call it before any connection is made). */
    install: () => {
      proto.write = function (this: net.Socket, ...args: unknown[]): boolean {
        try {
          read(this, args[0]);
        } catch {
          counts.unreliable = true;
        }
        return original.apply(this, args);
      };
    },
    uninstall: () => {
      if (ownWrite) proto.write = ownWrite;
      else delete (proto as { write?: unknown }).write;
    },
    start: () => {
      counts = emptyCounts();
      counting = true;
    },
    stop: (): PgCounts => {
      counting = false;
      return { ...counts, byKind: { ...counts.byKind } };
    },
  };
};

/** Per-database counters of pg_stat_database, and the cluster-wide ones of pg_stat_wal. */
interface DbCumulative {
  xact_commit: number;
  xact_rollback: number;
  active_ms: number;
  idle_in_tx_ms: number;
  wal_bytes: number;
  wal_sync: number;
}

/** pg_stat_user_tables, per table. */
interface TableStats {
  seq_scan: number;
  seq_tup_read: number;
  idx_scan: number;
  n_tup_ins: number;
  n_tup_upd: number;
  n_tup_hot_upd: number;
  n_tup_del: number;
}

interface Census {
  name: string;
  orders: number;
  wallSec: number;
  pg: PgCounts;
  /** Transaction ids assigned meanwhile: every transaction that wrote, but in every database of the server. */
  xids: number;
  stats: DbCumulative;
  /** The tables the census touched, by name: their counters' deltas. */
  tables: Map<string, TableStats>;
  serverCpuMs: { user: number; system: number };
  pgCpuMs: number | undefined;
  generatorCpuMs: number;
  nonOk: number;
}

/** CPU time (user + system) of each of these processes so far, ms; those /proc does not show are left out. */
const processCpuMs = (pids: number[]): Map<number, number> => {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime, in clock ticks: USER_HZ is 100 on Linux.
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // gone, or not on this machine
    }
  }
  return cpu;
};

/** A GC entry of perf_hooks for a major collection (its `detail.kind`, which the typings of PerformanceEntry leave out). */
const isMajorGc = (entry: object) => (entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR;

/** This process's stalls during one slice. */
interface Stalls {
  loopDelayMaxMs: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
  /** Of those, V8's major collections (mark-compact): what fills the old generation decides when they come. */
  majorGcCount: number;
  majorGcMs: number;
  /** How the main thread shared its core (Linux); undefined where /proc has no schedstat. */
  core: CoreShare | undefined;
}

/** Over one slice: what kept the main thread from its (pinned) core. */
interface CoreShare {
  /** Time ready to run but waiting for the core, ms. */
  waitMs: number;
  /** How often it lost the core while it could still run (preempted). */
  preempted: number;
  /** CPU of this process's other threads (V8's GC and compiler helpers, libuv's pool), ms: pinned, they share the core. */
  helpersMs: number;
}

/**
 * The main thread's scheduling counters (Linux): its time waiting on a run queue (ns, schedstat's
 * second field) and its involuntary context switches, and the CPU time of the process's other
 * threads (schedstat's first field). Pinned to one core, the event loop waits whenever something
 * else runs there: this process's own helper threads, or another process (a Postgres backend woken
 * by the server's own write, say); the wait is in the latencies without being the loop's CPU.
 * Undefined where /proc has no such files.
 */
const mainThreadSchedule = (): { waitNs: number; preempted: number; helpersNs: Map<string, number> } | undefined => {
  try {
    const schedstat = (tid: string) => readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
    const main = String(process.pid);
    const waitNs = schedstat(main)[1]!;
    const preempted = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/self/task/${main}/status`, 'utf8'))?.[1]);
    // Per thread, so that a thread ending during a slice takes nothing away from the others' sum.
    const helpersNs = new Map<string, number>();
    for (const tid of readdirSync('/proc/self/task')) {
      if (tid === main) continue;
      // A thread that ended between the listing and the read.
      try {
        helpersNs.set(tid, schedstat(tid)[0]!);
      } catch {
        continue;
      }
    }
    return Number.isFinite(waitNs) && Number.isFinite(preempted) ? { waitNs, preempted, helpersNs } : undefined;
  } catch {
    return undefined;
  }
};

/** The main thread's share of its core between two readings of mainThreadSchedule. */
const coreShareBetween = (before: ReturnType<typeof mainThreadSchedule>, after: ReturnType<typeof mainThreadSchedule>): CoreShare | undefined => {
  if (!before || !after) return undefined;
  let helpersNs = 0;
  for (const [tid, ns] of after.helpersNs) helpersNs += ns - (before.helpersNs.get(tid) ?? 0);
  return { waitMs: (after.waitNs - before.waitNs) / 1e6, preempted: after.preempted - before.preempted, helpersMs: helpersNs / 1e6 };
};

interface PhaseSummary {
  name: string;
  windowSec: number;
  spanSec: number;
  okInWindow: number;
  okTotal: number;
  latenciesMs: number[];
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  elu: number[];
  drainMs: number[];
  stalls: Stalls[];
  /** Each slice's own p99, ms, in the order measured: a slice that met a stall of the machine stands out. */
  sliceP99Ms: number[];
}

const mergeSlices = (name: string, slices: SliceResult[], elu: number[], drainMs: number[], stalls: Stalls[]): PhaseSummary => {
  const statusCodes: Record<string, number> = {};
  for (const slice of slices) for (const [code, n] of Object.entries(slice.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    name,
    windowSec: slices.reduce((sum, s) => sum + s.windowSec, 0),
    spanSec: slices.reduce((sum, s) => sum + Math.max(s.windowSec, s.spanSec), 0),
    okInWindow: slices.reduce((sum, s) => sum + s.okInWindow, 0),
    okTotal: slices.reduce((sum, s) => sum + s.okTotal, 0),
    latenciesMs: slices.flatMap((s) => s.latenciesMs).sort((a, b) => a - b),
    statusCodes,
    errors: slices.reduce((sum, s) => sum + s.errors, 0),
    timeouts: slices.reduce((sum, s) => sum + s.timeouts, 0),
    sendLagP99Ms: Math.max(0, ...slices.map((s) => s.sendLagP99Ms)),
    sendLagMaxMs: Math.max(0, ...slices.map((s) => s.sendLagMaxMs)),
    elu,
    drainMs,
    stalls,
    sliceP99Ms: slices.map((s) => percentile([...s.latenciesMs].sort((a, b) => a - b), 99)),
  };
};

const non2xxOf = (s: PhaseSummary) => Object.entries(s.statusCodes).reduce((sum, [code, n]) => (code.startsWith('2') ? sum : sum + n), 0);

type TargetName = 'floor' | 'ours';

/** One phase's load, the same for both targets. */
interface Phase {
  /** 'many': the headline, a user per client; 'one': every client the same user. */
  key: 'many' | 'one';
  title: string;
  /** Ours' users; the floor's x-user-id is the same id. */
  users: { id: number; token: string }[];
  /** Closed-loop clients, and the census's or warm-up's. */
  connections: number;
  shapes: OrderShape[];
}

/** Per user of a phase, what is on disk against the 201s it was answered. */
interface OnDisk {
  ok: boolean;
  line: string;
  warn: string | undefined;
}

interface PhaseResult {
  phase: Phase;
  /** The many-user phase's census (the one-user phase has a warm-up instead). */
  census: Record<TargetName, Census> | undefined;
  closedLoop: Record<TargetName, PhaseSummary>;
  openLoop: Record<TargetName, PhaseSummary>;
  /** The open loop's offered rate, orders/s. */
  rate: number;
  /** The storage alone at that rate (the many-user phase only): see probeStorage. */
  storage: StorageProbe | undefined;
  /** With BENCH_ORDERS_STEPS: where ours' open-loop orders spent their time in the server. */
  steps: string[] | undefined;
  /** 201s per user (the index into phase.users), the check orders included. */
  answered: Record<TargetName, number[]>;
  onDisk: OnDisk;
}

const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
const mean = (values: number[]) => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);
const pct = (value: number) => `${fixed(value * 100)} %`;
const sumOf = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** BENCH_ORDERS_PROFILE=<dir>: a V8 CPU profile of each measured slice, named by its target (ours-N, floor-N), written there. */
const profileDir = process.env.BENCH_ORDERS_PROFILE;
/** BENCH_ORDERS_STEPS=1: the steps of ours' open-loop orders in the server (placement-steps.ts). */
const stepsWanted = process.env.BENCH_ORDERS_STEPS === '1';
let profiles = 0;
const startProfile = async () => {
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async (name: string) => {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${profileDir}/${name}-${++profiles}.cpuprofile`, JSON.stringify(profile));
      session.disconnect();
    },
  };
};

/** The figures a phase is judged by. */
const figuresOf = (r: PhaseResult) => {
  const floorRps = r.closedLoop.floor.okInWindow / r.closedLoop.floor.windowSec;
  const oursRps = r.closedLoop.ours.okInWindow / r.closedLoop.ours.windowSec;
  const p99Floor = percentile(r.openLoop.floor.latenciesMs, 99);
  const p99Ours = percentile(r.openLoop.ours.latenciesMs, 99);
  const oursAllOk = non2xxOf(r.closedLoop.ours) + non2xxOf(r.openLoop.ours) + r.closedLoop.ours.errors + r.openLoop.ours.errors === 0;
  return { floorRps, oursRps, ratio: floorRps > 0 ? oursRps / floorRps : 0, p99Floor, p99Ours, p99Delta: p99Ours - p99Floor, oursAllOk };
};

/** Server CPU per order in a census, ms (user + kernel). */
const serverCpuPerOrder = (c: Census) => (c.serverCpuMs.user + c.serverCpuMs.system) / Math.max(1, c.orders);

const signed = (value: number, digits: number) => `${value >= 0 ? '+' : ''}${fixed(value, digits)}`;

/** One phase's tables, warnings and verdicts. */
const printPhase = (r: PhaseResult, settings: { seconds: number; rateSeconds: number; rounds: number; rateRounds: number }) => {
  const { closedLoop, openLoop, rate, phase } = r;
  const f = figuresOf(r);
  const widths = [24, 9, 9, 8, 8, 8, 8, 8, 7];
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[i]!))).join(' ');
  const header = row(['target', 'req/s', 'requests', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors']);
  /** req/s: 2xx answers over the window (closed loop), or over the time to the last answer (open loop). */
  const line = (label: string, s: PhaseSummary, seconds: number) => {
    const l = s.latenciesMs;
    return row([label, fixed(s.okInWindow / seconds), String(s.okInWindow), fixed(percentile(l, 50), 1), fixed(percentile(l, 90), 1), fixed(percentile(l, 99), 1), fixed(l.at(-1) ?? Number.NaN, 1), String(non2xxOf(s)), String(s.errors)]);
  };
  const ms = (values: number[]) => values.map((v) => `${fixed(v)} ms`).join(', ');
  const stallsLine = (s: PhaseSummary) =>
    `${s.name} loop delay max ${fixed(Math.max(0, ...s.stalls.map((t) => t.loopDelayMaxMs)), 1)} ms, GC ${sumOf(s.stalls.map((t) => t.gcCount))} pauses ` +
    `(${fixed(sumOf(s.stalls.map((t) => t.gcTotalMs)))} ms in all, longest ${fixed(Math.max(0, ...s.stalls.map((t) => t.gcMaxMs)), 1)} ms; ` +
    `${sumOf(s.stalls.map((t) => t.majorGcCount))} of them major, ${fixed(sumOf(s.stalls.map((t) => t.majorGcMs)))} ms)`;
  /** Each slice's p99, starred where a major GC ran in the slice. */
  const sliceP99s = (s: PhaseSummary) => s.sliceP99Ms.map((v, i) => `${fixed(v, 1)}${(s.stalls[i]?.majorGcCount ?? 0) > 0 ? '*' : ''}`).join(' ');
  /** The main thread's wait for its CPU over the slices, in all and per order answered. */
  const cpuWaitLine = (s: PhaseSummary) => {
    const shares = s.stalls.map((t) => t.core);
    if (shares.some((share) => share === undefined)) return `${s.name} not measured (no /proc schedstat)`;
    const measured = shares as CoreShare[];
    const waitMs = sumOf(measured.map((share) => share.waitMs));
    const helpersMs = sumOf(measured.map((share) => share.helpersMs));
    const orders = Math.max(1, s.latenciesMs.length);
    return `${s.name} ${fixed(waitMs)} ms (${fixed(waitMs / orders, 2)} ms per order), preempted ${sumOf(measured.map((share) => share.preempted))} times, while its own other threads ran ${fixed(helpersMs)} ms (${fixed(helpersMs / orders, 2)} per order)`;
  };
  const drainTotalMs = sumOf(closedLoop.ours.drainMs);
  const oursSustained = closedLoop.ours.okInWindow / (closedLoop.ours.windowSec + drainTotalMs / 1000);

  console.log('');
  console.log(`== ${phase.title}`);
  console.log(`Closed loop: ${phase.connections} concurrent clients, each waiting for its answer; ${settings.seconds} s per target in ${settings.rounds} alternating slices`);
  console.log(header);
  console.log(line('floor (bare, 1 tx)', closedLoop.floor, closedLoop.floor.windowSec));
  console.log(line('ours (5 gates + sim)', closedLoop.ours, closedLoop.ours.windowSec));
  console.log(`  event loop busy: floor ${closedLoop.floor.elu.map(pct).join(', ')}; ours ${closedLoop.ours.elu.map(pct).join(', ')}`);
  console.log(`  ours answers at acceptance, its fills follow: ours was quiet again ${ms(closedLoop.ours.drainMs)} after its slices; counting that time, ${fixed(oursSustained)} orders/s`);
  console.log('');
  console.log(
    `Open loop: ${rate} orders/s offered (${OPEN_RATE_FRACTION * 100} % of the floor's closed-loop figure) on schedule, latency from the scheduled send; ${settings.rateSeconds} s per target in ${settings.rateRounds} alternating slices`,
  );
  console.log(header);
  console.log(line('floor (bare, 1 tx)', openLoop.floor, openLoop.floor.spanSec));
  console.log(line('ours (5 gates + sim)', openLoop.ours, openLoop.ours.spanSec));
  console.log(`  p99 of each slice, ms (* a major GC ran in it): floor ${sliceP99s(openLoop.floor)}; ours ${sliceP99s(openLoop.ours)}`);
  if (r.storage) console.log(`  ${storageLine(r.storage, rate)}`);
  console.log(
    `  generator send lag p99 (max): floor ${fixed(openLoop.floor.sendLagP99Ms, 1)} (${fixed(openLoop.floor.sendLagMaxMs, 1)}) ms, ours ${fixed(openLoop.ours.sendLagP99Ms, 1)} (${fixed(openLoop.ours.sendLagMaxMs, 1)}) ms; ` +
      `event loop busy: floor ${pct(mean(openLoop.floor.elu))}, ours ${pct(mean(openLoop.ours.elu))}; ours quiet again ${ms(openLoop.ours.drainMs)} after its slices`,
  );
  console.log(`  this process during the slices: ${stallsLine(openLoop.floor)}; ${stallsLine(openLoop.ours)}`);
  console.log(`  its main thread ready to run but waiting for its CPU: ${cpuWaitLine(openLoop.floor)}; ${cpuWaitLine(openLoop.ours)}`);
  for (const line of r.steps ?? []) console.log(line);
  for (const s of [openLoop.floor, openLoop.ours]) {
    if (s.spanSec > s.windowSec + 1) console.log(`  WARN  ${s.name} fell behind the offered rate: its last answer came ${fixed(s.spanSec - s.windowSec, 1)} s after the schedule ended, so its latencies are mostly queueing`);
    if (s.timeouts > 0) console.log(`  WARN  ${s.name}: ${s.timeouts} orders not answered within ${REQUEST_TIMEOUT_MS / 1000} s; they count in its latencies as the time waited`);
    if (s.sendLagP99Ms > 5) console.log(`  WARN  the generator sent ${s.name === 'ours' ? "ours'" : "the floor's"} orders up to ${fixed(s.sendLagP99Ms, 1)} ms late (p99): it was short of CPU, and those ms are in the latencies`);
  }
  console.log('');
  const at = phase.key === 'many' ? `${phase.users.length} users` : `${phase.connections} clients of one user`;
  const goalNote = phase.connections === GOAL_CONNECTIONS ? '' : ` [the goal is stated at ${GOAL_CONNECTIONS}]`;
  console.log(`${verdict(f.ratio >= GOAL_RATIO)}  throughput: ours ${fixed(f.oursRps)} / floor ${fixed(f.floorRps)} orders/s = ${fixed(f.ratio, 3)} of the floor (goal >= ${GOAL_RATIO}) at ${at}${goalNote}`);
  console.log(`${verdict(f.p99Delta <= GOAL_P99_DELTA_MS)}  latency at ${rate} orders/s: ours p99 ${fixed(f.p99Ours, 1)} ms - floor p99 ${fixed(f.p99Floor, 1)} ms = ${signed(f.p99Delta, 1)} ms (goal <= ${GOAL_P99_DELTA_MS} ms)`);
  console.log(
    `${verdict(f.oursAllOk)}  responses: ours ${JSON.stringify(closedLoop.ours.statusCodes)} closed, ${JSON.stringify(openLoop.ours.statusCodes)} open, ${closedLoop.ours.errors + openLoop.ours.errors} errors; ` +
      `floor ${non2xxOf(closedLoop.floor) + non2xxOf(openLoop.floor)} non-2xx, ${closedLoop.floor.errors + openLoop.floor.errors} errors`,
  );
  console.log(`${verdict(r.onDisk.ok)}  on disk: ${r.onDisk.line}`);
  if (r.onDisk.warn) console.log(`  WARN  ${r.onDisk.warn}`);
};

/** The census of the many-user phase: where an order's time goes, per order. */
const printCensus = (r: PhaseResult, settings: { warmup: number }) => {
  const { floor: censusFloor, ours: censusOurs } = r.census!;
  const { floorRps, oursRps } = figuresOf(r);
  console.log('');
  console.log(`Where the time goes, per order: the census of "${r.phase.title}" (${settings.warmup} orders per target at ${r.phase.connections} clients, after the warm-up and before the measured runs; ours' fills drained inside it)`);
  const censusWidths = [54, 10, 10];
  const crow = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(censusWidths[0]!) : cell.padStart(censusWidths[i]!))).join(' ');
  const per = (c: Census, value: number | undefined, digits = 2) => (value === undefined ? '-' : fixed(value / Math.max(1, c.orders), digits));
  const both = (label: string, f: (c: Census) => string) => console.log(crow([label, f(censusFloor), f(censusOurs)]));
  const counted = (f: (c: Census) => string) => (c: Census) => (c.pg.unreliable ? '?' : f(c));
  const statementsOf = (c: Census) => STATEMENT_KINDS.reduce((sum, k) => sum + c.pg.byKind[k], 0);
  console.log(crow(['', 'floor', 'ours']));
  both('orders answered 2xx / not', (c) => `${c.orders} / ${c.nonOk}`);
  both('census rate, orders/s (counters on)', (c) => fixed(c.orders / c.wallSec));
  both('statements sent to Postgres (counted on the sockets)', counted((c) => per(c, statementsOf(c), 1)));
  for (const kind of STATEMENT_KINDS) {
    if (censusFloor.pg.byKind[kind] + censusOurs.pg.byKind[kind] > 0) both(`  ${kind}`, counted((c) => per(c, c.pg.byKind[kind], 1)));
  }
  both('round trips waited for (Sync / simple Query)', counted((c) => per(c, c.pg.syncs, 1)));
  both('socket writes to Postgres (system calls)', counted((c) => per(c, c.pg.writes, 1)));
  both('transactions with a write or row lock (commits to flush, at most)', counted((c) => per(c, c.pg.writeCommits, 2)));
  both('transaction ids assigned (cluster-wide)', (c) => per(c, c.xids, 2));
  both('transactions committed, any (pg_stat_database)', (c) => per(c, c.stats.xact_commit, 1));
  both('transactions rolled back', (c) => per(c, c.stats.xact_rollback, 2));
  both('WAL bytes (cluster-wide)', (c) => per(c, c.stats.wal_bytes, 0));
  both('WAL fsyncs (cluster-wide)', (c) => per(c, c.stats.wal_sync, 2));
  both('Postgres backends executing (incl. lock waits), ms', (c) => per(c, c.stats.active_ms, 1));
  both('Postgres backends idle in transaction, ms', (c) => per(c, c.stats.idle_in_tx_ms, 1));
  both("CPU of this database's backends, ms", (c) => per(c, c.pgCpuMs, 2));
  both('CPU of the server process (user + kernel), ms', (c) => `${per(c, c.serverCpuMs.user, 2)} + ${per(c, c.serverCpuMs.system, 2)}`);
  both('CPU of the load generator, ms', (c) => per(c, c.generatorCpuMs, 2));
  const perOrder = (c: Census, value: number) => value / Math.max(1, c.orders);
  const oursCommits = perOrder(censusOurs, censusOurs.pg.writeCommits);
  const floorCommits = perOrder(censusFloor, censusFloor.pg.writeCommits);
  const oursCpu = serverCpuPerOrder(censusOurs);
  const floorCpu = serverCpuPerOrder(censusFloor);
  const commitRate = floorRps * floorCommits;
  console.log('');
  console.log(
    `  commits: ours makes up to ${fixed(oursCommits, 2)} durable commits per order, the floor ${fixed(floorCommits, 2)}. At the floor's commit rate (${fixed(commitRate)}/s) ` +
      `that alone would cap ours near ${fixed(commitRate / Math.max(oursCommits, 1e-9))} orders/s (${fixed(floorCommits / Math.max(oursCommits, 1e-9), 2)} of the floor).`,
  );
  console.log(
    `  server CPU: ours spends ${fixed(oursCpu, 2)} ms of the Node process's CPU per order (floor ${fixed(floorCpu, 2)} ms): on one event loop that caps it near ${fixed(1000 / Math.max(oursCpu, 1e-9))} orders/s. ` +
      `Its loop was ${pct(mean(r.closedLoop.ours.elu))} busy in the closed loop (floor ${pct(mean(r.closedLoop.floor.elu))}).`,
  );
  const allCpu = (c: Census) => perOrder(c, c.serverCpuMs.user + c.serverCpuMs.system + (c.pgCpuMs ?? 0) + c.generatorCpuMs);
  const cores = cpus().length;
  console.log(
    `  machine: an order costs ${fixed(allCpu(censusOurs), 1)} ms of CPU in all for ours (server, Postgres backends, generator), ${fixed(allCpu(censusFloor), 1)} ms for the floor; ` +
      `${cores} cores cap ours near ${fixed((cores * 1000) / Math.max(allCpu(censusOurs), 1e-9))} orders/s and the floor near ${fixed((cores * 1000) / Math.max(allCpu(censusFloor), 1e-9))}` +
      (censusOurs.pgCpuMs === undefined ? ' (Postgres backends not visible in /proc: left out)' : ''),
  );
  const caps = [
    { what: "durable commits at the floor's commit rate", cap: commitRate / Math.max(oursCommits, 1e-9) },
    { what: "the server's CPU on one event loop", cap: 1000 / Math.max(oursCpu, 1e-9) },
    { what: `all CPU on ${cores} cores`, cap: (cores * 1000) / Math.max(allCpu(censusOurs), 1e-9) },
  ].sort((a, b) => a.cap - b.cap);
  console.log(`  => the tightest of these bounds on ours is ${caps[0]!.what} (~${fixed(caps[0]!.cap)} orders/s); measured closed loop: ${fixed(oursRps)} orders/s`);
  if (censusOurs.pg.unreliable || censusFloor.pg.unreliable) console.log('  (counts marked ? could not be read from the sockets reliably)');
  console.log('');
  console.log('Tables per order: index scans, sequential scans (rows they read), rows inserted, updated (of which HOT), deleted');
  for (const c of [censusFloor, censusOurs]) {
    const busiest = [...c.tables].sort(([, a], [, b]) => b.idx_scan + b.seq_tup_read + b.n_tup_ins + b.n_tup_upd - (a.idx_scan + a.seq_tup_read + a.n_tup_ins + a.n_tup_upd));
    for (const [relname, t] of busiest) {
      const cells = [
        `idx ${per(c, t.idx_scan, 1)}`,
        `seq ${per(c, t.seq_scan, 1)} (${per(c, t.seq_tup_read, 0)} rows)`,
        `ins ${per(c, t.n_tup_ins, 1)}`,
        `upd ${per(c, t.n_tup_upd, 1)} (${per(c, t.n_tup_hot_upd, 1)})`,
        `del ${per(c, t.n_tup_del, 1)}`,
      ];
      console.log(`  ${c.name.padEnd(6)}${relname.padEnd(26)}${cells.map((cell) => cell.padEnd(18)).join('')}`);
    }
  }
};

/** The headline: the many-user phase's verdicts, ours' server CPU per order beside the floor's, and the one-user figures beside them. */
const printHeadline = (many: PhaseResult, one: PhaseResult, pinning: Pinning) => {
  const m = figuresOf(many);
  const o = figuresOf(one);
  const where = pinning.server === undefined ? `UNPINNED (${pinning.why})` : `this process on CPU ${pinning.server}, the generator on CPU ${pinning.generator}`;
  const goalNote = many.phase.users.length === GOAL_CONNECTIONS ? '' : ` [the goal is stated at ${GOAL_CONNECTIONS}]`;
  console.log('');
  console.log(`Headline: ${many.phase.users.length} users, one order in flight each; ${where}`);
  console.log(`${verdict(m.ratio >= GOAL_RATIO)}  throughput: ours ${fixed(m.oursRps)} / floor ${fixed(m.floorRps)} orders/s = ${fixed(m.ratio, 3)} of the floor (goal >= ${GOAL_RATIO})${goalNote}`);
  console.log(
    `${verdict(m.p99Delta <= GOAL_P99_DELTA_MS)}  latency at ${many.rate} orders/s (${OPEN_RATE_FRACTION * 100} % of the floor's): ours p99 ${fixed(m.p99Ours, 1)} ms - floor p99 ${fixed(m.p99Floor, 1)} ms = ${signed(m.p99Delta, 1)} ms (goal <= ${GOAL_P99_DELTA_MS} ms)`,
  );
  if (many.census) {
    const oursCpu = serverCpuPerOrder(many.census.ours);
    const floorCpu = serverCpuPerOrder(many.census.floor);
    console.log(`      server CPU per order (census): ours ${fixed(oursCpu, 2)} ms, floor ${fixed(floorCpu, 2)} ms (${fixed(oursCpu / Math.max(floorCpu, 1e-9), 1)} x the floor's)`);
  }
  const allOk = m.oursAllOk && o.oursAllOk && many.onDisk.ok && one.onDisk.ok;
  console.log(`${verdict(allOk)}  every order of ours answered 201, and every 201 of both once on disk, for every user of both phases (details below)`);
  console.log(
    `      beside it, ${one.phase.connections} clients of one user on one symbol: ours ${fixed(o.oursRps)} / floor ${fixed(o.floorRps)} orders/s = ${fixed(o.ratio, 3)}; ` +
      `p99 at ${one.rate} orders/s ours ${fixed(o.p99Ours, 1)} ms, floor ${fixed(o.p99Floor, 1)} ms (${signed(o.p99Delta, 1)} ms)`,
  );
};

/** Runs `work` over `items`, `width` at a time. */
const inBatches = async <T, R>(items: T[], width: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> => {
  const results: R[] = [];
  for (let at = 0; at < items.length; at += width) results.push(...(await Promise.all(items.slice(at, at + width).map((item, i) => work(item, at + i)))));
  return results;
};

const main = async () => {
  const adminUrl = postgresAdminUrl('orders', 'the durable-order floor and the statement census are PostgreSQL');
  if (!adminUrl) return;
  const connections = positiveInt('BENCH_ORDERS_CONNECTIONS', GOAL_CONNECTIONS);
  const settings = {
    seconds: positiveInt('BENCH_ORDERS_SECONDS', 10),
    rateSeconds: positiveInt('BENCH_ORDERS_RATE_SECONDS', 10),
    connections,
    users: positiveInt('BENCH_ORDERS_USERS', connections),
    symbols: positiveInt('BENCH_ORDERS_SYMBOLS', SYMBOLS.length),
    rounds: positiveInt('BENCH_ORDERS_ROUNDS', 2),
    rateRounds: positiveInt('BENCH_ORDERS_RATE_ROUNDS', 10),
    probeSeconds: positiveInt('BENCH_ORDERS_PROBE_SECONDS', 5),
    warmup: positiveInt('BENCH_ORDERS_WARMUP', 400),
  };
  if (settings.symbols > SYMBOLS.length) throw new Error(`BENCH_ORDERS_SYMBOLS must be at most ${SYMBOLS.length}, got ${settings.symbols}`);

  // The service and its helpers are loaded here, not at the top: the generator child needs none of them.
  const [{ startBenchService, benchTrader, postJson }, { startOrdersFloor, FLOOR_USER_HEADER }, { default: postgresJs }, { sql: drizzleSql }] = await Promise.all([
    import('./service.ts'),
    import('./orders-floor.ts'),
    import('postgres'),
    import('drizzle-orm'),
  ]);

  // Pinned before anything starts, so every thread the servers start inherits the CPU.
  const pinning = pinServer();
  const loadBefore = loadavg();
  // The socket observer goes in before the first connection to Postgres, so it sees every Parse.
  const counter = pgMessageCounter(Number(new URL(adminUrl).port || 5432));
  counter.install();
  cleanups.push({ what: 'socket observer', run: () => counter.uninstall() });

  // An observer connection of the bench's own: settings, statistics, the integrity check.
  let observer!: postgres.Sql;
  let pgSettings: { version: string; synchronous_commit: string; fsync: string; wal_sync_method: string; commit_delay: string } | undefined;
  const { app, databaseUrl, logFile, closeLog } = await startBenchService({
    cleanups,
    prefix: 'ts-bench-orders-',
    env: {
      DB_POOL_SIZE: String(POOL_SIZE),
      RATE_LIMIT_ORDERS_PER_MIN: String(RATE_LIMIT_PER_MIN),
      SIM_TICK_INTERVAL_MS: '0',
      SIM_INITIAL_CASH_USDT: '1000000000',
    },
    beforeStart: async (url) => {
      observer = postgresJs(url, { max: 1, onnotice: () => undefined });
      cleanups.push({ what: 'observer connection', run: () => observer.end({ timeout: 5 }) });
      [pgSettings] = await observer<NonNullable<typeof pgSettings>[]>`
        select current_setting('server_version') as version, current_setting('synchronous_commit') as synchronous_commit,
               current_setting('fsync') as fsync, current_setting('wal_sync_method') as wal_sync_method, current_setting('commit_delay') as commit_delay`;
    },
  });
  console.log(`service up on ${app.url} (Postgres ${pgSettings?.version}, fresh database, pool ${POOL_SIZE})`);

  // The users, as a client makes each: register, log in, register a crypto key. One for the
  // one-user phase, then one per client of the many-user phase; and a price for every symbol.
  const oneUser = await benchTrader(app, 'bench_orders');
  const manyUsers = await inBatches(Array.from({ length: settings.users }), 4, (_, i) => benchTrader(app, `bench_orders_u${i}`));
  const symbols = SYMBOLS.slice(0, settings.symbols);
  for (const { symbol, price } of symbols) await app.services.simulator.setPrice({ assetClass: 'crypto', symbol, price });
  console.log(`${settings.users + 1} users registered and logged in, each with a crypto key; prices set for ${symbols.map((s) => s.symbol).join(', ')}`);

  const floor: OrdersFloor = await startOrdersFloor({ databaseUrl, poolSize: POOL_SIZE, route: ROUTE });
  cleanups.push({ what: 'floor server', run: () => floor.close() });
  const floorHeaders = (userId: number) => ({ [FLOOR_USER_HEADER]: String(userId) });

  // Placements under way in ours, counted around the order service's place(): a request the
  // generator gave up on still runs to its end, and no slice may start before ours is quiet.
  let placing = 0;
  const orderService = app.services.orders;
  const placeOrder = orderService.place;
  orderService.place = async (...args) => {
    placing++;
    try {
      return await placeOrder(...args);
    } finally {
      placing--;
    }
  };
  /** Waits (bounded) until ours has no placement under way and every fill and broker event is applied. */
  const drainOurs = async () => {
    const started = performance.now();
    const bound = started + DRAIN_MAX_MS;
    do {
      while (placing > 0 && performance.now() < bound) await sleep(5);
      await app.services.simulator.idle();
      await app.services.orders.idle();
    } while (placing > 0 && performance.now() < bound);
    if (placing > 0) console.log(`WARN  ours still had ${placing} placements under way after ${DRAIN_MAX_MS} ms`);
    return performance.now() - started;
  };

  // One order each, checked by hand: both answer 201 with the order.
  const tag = randomBytes(3).toString('hex');
  const oursCheck = await postJson(`${app.url}${ROUTE}`, { ...ORDER, client_order_id: `check-${tag}-ours` }, oneUser.token);
  if (oursCheck.status !== 201 || oursCheck.json?.status !== 'accepted') throw new Error(`ours did not accept the check order: ${oursCheck.status} ${oursCheck.text}`);
  const floorCheckResponse = await fetch(`${floor.url}${ROUTE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...floorHeaders(oneUser.userId) },
    body: JSON.stringify({ ...ORDER, client_order_id: `check-${tag}-floor` }),
  });
  const floorCheck = { status: floorCheckResponse.status, text: await floorCheckResponse.text() };
  if (floorCheck.status !== 201 || (JSON.parse(floorCheck.text) as { status?: unknown }).status !== 'filled') throw new Error(`the floor did not take the check order: ${floorCheck.status} ${floorCheck.text}`);
  await drainOurs();
  const [checkRow] = await observer<{ status: string }[]>`select status from orders where user_id = ${oneUser.userId} and client_order_id = ${`check-${tag}-ours`}`;
  if (checkRow?.status !== 'filled') throw new Error(`ours' check order is ${checkRow?.status ?? 'missing'} after the drain, not filled`);
  console.log(`both answer 201: ours ${oursCheck.text.length} bytes (status accepted, filled after the answer), floor ${floorCheck.text.length} bytes (status filled)`);

  const manyPhase: Phase = {
    key: 'many',
    title: `${settings.users} users, one order in flight each, orders in turn over ${symbols.length} symbols shared by all`,
    users: manyUsers.map((u) => ({ id: u.userId, token: u.token })),
    connections: settings.users,
    shapes: symbols.map(({ symbol, qty }) => ({ symbol, qty })),
  };
  const onePhase: Phase = {
    key: 'one',
    title: `one user, ${settings.connections} clients, one symbol (${ORDER.symbol} market buys of ${ORDER.qty})`,
    users: [{ id: oneUser.userId, token: oneUser.token }],
    connections: settings.connections,
    shapes: [{ symbol: ORDER.symbol, qty: ORDER.qty }],
  };
  const targetsOf = (phase: Phase): Record<TargetName, LoadTarget> => ({
    floor: { name: 'floor', url: `${floor.url}${ROUTE}`, users: phase.users.map((u) => floorHeaders(u.id)), shapes: phase.shapes, idPrefix: `bo${tag}-${phase.key}-floor` },
    ours: { name: 'ours', url: `${app.url}${ROUTE}`, users: phase.users.map((u) => ({ authorization: `Bearer ${u.token}` })), shapes: phase.shapes, idPrefix: `bo${tag}-${phase.key}-ours` },
  });

  const generator = startGenerator(pinning.generator);
  cleanups.push({ what: 'load generator', run: () => generator.stop() });
  /** 201s per user, by the target's idPrefix (a phase and target each): what the disk must hold. */
  const answered = new Map<string, number[]>();
  const run = async (command: LoadCommand) => {
    const result = await generator.run(command);
    const tally = answered.get(command.target.idPrefix) ?? command.target.users.map(() => 0);
    result.okByUser.forEach((n, user) => (tally[user]! += n));
    answered.set(command.target.idPrefix, tally);
    return result;
  };

  // --- Census: what one order costs each target, counted. ------------------------------------
  /** Backends flush their statistics at most once a second: wait, then give each pooled connection a statement. */
  const flushStats = async () => {
    await sleep(1100);
    await Promise.all([
      ...Array.from({ length: floor.poolSize }, () => floor.sql`select pg_sleep(0.05)`),
      ...Array.from({ length: POOL_SIZE }, () => app.services.db.execute(drizzleSql`select pg_sleep(0.05)`)),
    ]);
    await sleep(200);
  };
  const cumulative = async (): Promise<DbCumulative> => {
    const [row] = await observer<DbCumulative[]>`
      select d.xact_commit::float8 as xact_commit, d.xact_rollback::float8 as xact_rollback, d.active_time as active_ms, d.idle_in_transaction_time as idle_in_tx_ms,
             w.wal_bytes::float8 as wal_bytes, w.wal_sync::float8 as wal_sync
      from pg_stat_database d, pg_stat_wal w where d.datname = current_database()`;
    return row!;
  };
  const tableStats = async () =>
    new Map(
      (
        await observer<(TableStats & { relname: string })[]>`
          select relname, seq_scan::float8 as seq_scan, seq_tup_read::float8 as seq_tup_read, coalesce(idx_scan, 0)::float8 as idx_scan,
                 n_tup_ins::float8 as n_tup_ins, n_tup_upd::float8 as n_tup_upd, n_tup_hot_upd::float8 as n_tup_hot_upd, n_tup_del::float8 as n_tup_del
          from pg_stat_user_tables`
      ).map(({ relname, ...stats }) => [relname, stats]),
    );
  const nextXid = async () => Number((await observer<{ xid: string }[]>`select pg_snapshot_xmax(pg_current_snapshot())::text as xid`)[0]!.xid);
  const backendPids = async () => (await observer<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`).map((row) => row.pid);

  /** The warm-up's orders, sent with the counters on. */
  const census = async (name: TargetName, warmUp: LoadCommand): Promise<Census> => {
    await flushStats();
    const pidsBefore = await backendPids();
    const before = { stats: await cumulative(), tables: await tableStats(), cpu: process.cpuUsage(), pg: processCpuMs(pidsBefore) };
    const xidBefore = await nextXid();
    counter.start();
    const started = performance.now();
    let result: SliceResult;
    let counts: PgCounts;
    try {
      result = await run(warmUp);
      if (name === 'ours') await drainOurs();
    } finally {
      counts = counter.stop();
    }
    const wallSec = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(before.cpu);
    const xids = (await nextXid()) - xidBefore;
    const pg = processCpuMs([...new Set([...pidsBefore, ...(await backendPids())])]);
    // Backends that started during the census count whole; those that ended are lost (none expected).
    let pgCpuMs: number | undefined = 0;
    for (const [pid, ms] of pg) pgCpuMs += ms - (before.pg.get(pid) ?? 0);
    if (pg.size === 0) pgCpuMs = undefined;
    await flushStats();
    const stats = await cumulative();
    const tables = new Map<string, TableStats>();
    for (const [relname, after] of await tableStats()) {
      const was = before.tables.get(relname);
      const delta = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (was?.[k as keyof TableStats] ?? 0)])) as unknown as TableStats;
      // Tables the orders touch, not those of background work (pg-boss) that happened to run meanwhile.
      if (delta.seq_scan + delta.idx_scan + delta.n_tup_ins + delta.n_tup_upd + delta.n_tup_del >= 0.1 * Math.max(1, result.okTotal)) tables.set(relname, delta);
    }
    const delta = Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, v - before.stats[k as keyof DbCumulative]])) as unknown as DbCumulative;
    return {
      name,
      orders: result.okTotal,
      wallSec,
      pg: counts,
      xids,
      stats: delta,
      tables,
      serverCpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 },
      pgCpuMs,
      generatorCpuMs: result.generatorCpuMs,
      nonOk: result.sent - result.okTotal,
    };
  };

  // --- Measured slices, alternating between the targets. ------------------------------------
  /** Set while an open loop runs with BENCH_ORDERS_STEPS: ours' slices are listened to. */
  let openLoopSteps: StepsRecorder | undefined;
  /**
   * Records this process's own stalls during a slice (both servers live in it): the longest
   * event-loop delay, and the GC pauses (V8's, reported by perf_hooks). They tell a tail made here
   * from one the machine made; with BENCH_ORDERS_STEPS, ours' placement steps too.
   */
  const slice = async (command: LoadCommand) => {
    const stopListening = command.target.name === 'ours' ? openLoopSteps?.listen() : undefined;
    const eluBefore = performance.eventLoopUtilization();
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    const gcPauses: { ms: number; major: boolean }[] = [];
    const gcObserver = new PerformanceObserver((list) =>
      gcPauses.push(...list.getEntries().map((entry) => ({ ms: entry.duration, major: isMajorGc(entry) }))),
    );
    loopDelay.enable();
    gcObserver.observe({ entryTypes: ['gc'] });
    const profiling = profileDir !== undefined ? await startProfile() : undefined;
    const scheduleBefore = mainThreadSchedule();
    const result = await run(command);
    stopListening?.();
    if (profiling) await profiling.stop(command.target.name);
    gcObserver.disconnect();
    loopDelay.disable();
    const stalls: Stalls = {
      loopDelayMaxMs: loopDelay.max / 1e6,
      gcCount: gcPauses.length,
      gcTotalMs: sumOf(gcPauses.map((pause) => pause.ms)),
      gcMaxMs: Math.max(0, ...gcPauses.map((pause) => pause.ms)),
      majorGcCount: gcPauses.filter((pause) => pause.major).length,
      majorGcMs: sumOf(gcPauses.filter((pause) => pause.major).map((pause) => pause.ms)),
      core: coreShareBetween(scheduleBefore, mainThreadSchedule()),
    };
    return { result, elu: performance.eventLoopUtilization(eluBefore).utilization, stalls, drainMs: command.target.name === 'ours' ? await drainOurs() : 0 };
  };
  const alternate = async (make: (name: TargetName) => LoadCommand, rounds: number): Promise<Record<TargetName, PhaseSummary>> => {
    const taken: Record<TargetName, Awaited<ReturnType<typeof slice>>[]> = { floor: [], ours: [] };
    for (let round = 0; round < rounds; round++) {
      const order: TargetName[] = round % 2 === 0 ? ['floor', 'ours'] : ['ours', 'floor'];
      for (const name of order) taken[name].push(await slice(make(name)));
    }
    const summary = (name: TargetName) =>
      mergeSlices(
        name,
        taken[name].map((t) => t.result),
        taken[name].map((t) => t.elu),
        name === 'ours' ? taken[name].map((t) => t.drainMs) : [],
        taken[name].map((t) => t.stalls),
      );
    return { floor: summary('floor'), ours: summary('ours') };
  };

  /**
   * A phase: a warm-up (every user's first orders on each symbol make rows that later orders only
   * update), the census (many users), the closed loop, then the open loop at a fifth of the floor's rate.
   */
  const measure = async (phase: Phase): Promise<Omit<PhaseResult, 'answered' | 'onDisk'>> => {
    const targets = targetsOf(phase);
    const batch = (name: TargetName, count: number): LoadCommand => ({ op: 'count', target: targets[name], connections: phase.connections, count, maxSeconds: CENSUS_MAX_SECONDS });
    const warmUpCount = Math.max(settings.warmup, 2 * phase.users.length * phase.shapes.length);
    console.log(`${phase.title}: warm-up, ${warmUpCount} orders per target (not measured) ...`);
    for (const name of ['floor', 'ours'] as const) await run(batch(name, warmUpCount));
    await drainOurs();
    // Statistics, as a database in service has them. This one is minutes old: autovacuum analyzes
    // a table a minute or more after it fills, and until then every plan is made for empty tables
    // and kept by the connections that prepared it (an order's lookup by its key then scans the
    // user's orders by another index). Both targets' tables, so neither is measured on stale plans.
    await observer`analyze`;
    let censuses: Record<TargetName, Census> | undefined;
    if (phase.key === 'many') {
      console.log(`  census: ${settings.warmup} orders per target, counters on (not measured) ...`);
      censuses = { floor: await census('floor', batch('floor', settings.warmup)), ours: await census('ours', batch('ours', settings.warmup)) };
    }
    console.log(`  closed loop: ${phase.connections} concurrent clients, ${settings.seconds} s per target in ${settings.rounds} alternating slices ...`);
    const closedLoop = await alternate((name) => ({ op: 'closed', target: targets[name], connections: phase.connections, seconds: settings.seconds / settings.rounds }), settings.rounds);
    const floorRps = closedLoop.floor.okInWindow / closedLoop.floor.windowSec;
    const rate = Math.max(1, Math.round(floorRps * OPEN_RATE_FRACTION));
    console.log(`  open loop: ${rate} orders/s offered (${OPEN_RATE_FRACTION * 100} % of the floor's ${fixed(floorRps)}/s), ${settings.rateSeconds} s per target in ${settings.rateRounds} alternating slices ...`);
    const steps = stepsWanted ? createStepsRecorder() : undefined;
    openLoopSteps = steps;
    const openLoop = await alternate((name) => ({ op: 'open', target: targets[name], rate, seconds: settings.rateSeconds / settings.rateRounds }), settings.rateRounds);
    openLoopSteps = undefined;
    let storage: StorageProbe | undefined;
    if (phase.key === 'many') {
      console.log(`  storage alone: a one-row insert and commit at ${rate}/s for ${settings.probeSeconds} s ...`);
      storage = await probeStorage(databaseUrl, { rate, seconds: settings.probeSeconds, poolSize: POOL_SIZE });
    }
    return { phase, census: censuses, closedLoop, openLoop, rate, storage, steps: steps?.lines() };
  };

  // The check orders are the one user's.
  for (const target of Object.values(targetsOf(onePhase))) answered.set(target.idPrefix, [1]);
  // The headline's phase first.
  const measured = [await measure(manyPhase), await measure(onePhase)];
  const loadAfter = loadavg();

  // --- Integrity: per user, every 201 is an order on disk, once, and every order of ours is filled. --
  await drainOurs();
  const oursByUser = new Map(
    (
      await observer<{ user_id: number; orders: number; filled: number; fills: number; filled_orders: number; reconciling: number; reconciled: number }[]>`
        with o as (select user_id, count(*) as orders, count(*) filter (where status = 'filled') as filled from orders group by user_id),
             f as (select user_id, count(*) as fills, count(distinct client_order_id) as filled_orders, count(*) filter (where execution_id like 'reconcile:%') as reconciling from order_fills group by user_id),
             r as (select subject_user_id as user_id, count(*) as reconciled from audit_events where action = 'order.reconciled' group by subject_user_id)
        select o.user_id::int as user_id, o.orders::int as orders, o.filled::int as filled, coalesce(f.fills, 0)::int as fills, coalesce(f.filled_orders, 0)::int as filled_orders,
               coalesce(f.reconciling, 0)::int as reconciling, coalesce(r.reconciled, 0)::int as reconciled
        from o left join f using (user_id) left join r using (user_id)`
    ).map((row) => [row.user_id, row]),
  );
  const floorByUser = new Map(
    (
      await observer<{ user_id: number; orders: number; fills: number; audits: number; position_ok: boolean; position: string | null }[]>`
        with o as (select user_id, count(*) as orders, sum(qty) as qty from bench_orders group by user_id),
             f as (select user_id, count(*) as fills from bench_fills group by user_id),
             a as (select user_id, count(*) as audits from bench_audit group by user_id),
             p as (select user_id, sum(qty) as qty from bench_positions group by user_id)
        select o.user_id::int as user_id, o.orders::int as orders, coalesce(f.fills, 0)::int as fills, coalesce(a.audits, 0)::int as audits,
               p.qty is not distinct from o.qty as position_ok, p.qty::text as position
        from o left join f using (user_id) left join a using (user_id) left join p using (user_id)`
    ).map((row) => [row.user_id, row]),
  );
  const onDiskOf = (phase: Phase, got: Record<TargetName, number[]>): OnDisk => {
    const oursWrong: string[] = [];
    const floorWrong: string[] = [];
    let reconciled = 0;
    let reconciling = 0;
    phase.users.forEach((user, i) => {
      const want = { ours: got.ours[i] ?? 0, floor: got.floor[i] ?? 0 };
      const ours = oursByUser.get(user.id) ?? { orders: 0, filled: 0, fills: 0, filled_orders: 0, reconciling: 0, reconciled: 0 };
      const fl = floorByUser.get(user.id) ?? { orders: 0, fills: 0, audits: 0, position_ok: true, position: null };
      reconciled += ours.reconciled;
      reconciling += ours.reconciling;
      if (ours.orders !== want.ours || ours.filled !== want.ours || ours.fills !== want.ours || ours.filled_orders !== want.ours) {
        oursWrong.push(`user ${user.id}: ${want.ours} answers 201 -> ${ours.orders} orders, ${ours.filled} filled, ${ours.fills} fills of ${ours.filled_orders} orders`);
      }
      if (fl.orders !== want.floor || fl.fills !== want.floor || fl.audits !== 2 * want.floor || !fl.position_ok) {
        floorWrong.push(`user ${user.id}: ${want.floor} answers 201 -> ${fl.orders} orders, ${fl.fills} fills, ${fl.audits} audit rows, position ${fl.position} ${fl.position_ok ? '=' : '!='} the orders' sum`);
      }
    });
    const total = (name: TargetName) => sumOf(got[name]);
    const oursSum = (key: 'orders' | 'filled' | 'fills') => sumOf(phase.users.map((u) => oursByUser.get(u.id)?.[key] ?? 0));
    const floorSum = (key: 'orders' | 'fills' | 'audits') => sumOf(phase.users.map((u) => floorByUser.get(u.id)?.[key] ?? 0));
    const wrongLine = (name: string, wrong: string[]) => (wrong.length === 0 ? '' : `; ${name} WRONG for ${wrong.length} users, e.g. ${wrong.slice(0, 3).join('; ')}`);
    return {
      ok: oursWrong.length === 0 && floorWrong.length === 0,
      line:
        `checked per user (${phase.users.length}): ` +
        `ours ${total('ours')} answers 201 -> ${oursSum('orders')} orders (${oursSum('filled')} filled), ${oursSum('fills')} fills; ` +
        `floor ${total('floor')} answers 201 -> ${floorSum('orders')} orders, ${floorSum('fills')} fills, ${floorSum('audits')} audit rows, each user's positions summed against its orders` +
        wrongLine('ours', oursWrong) +
        wrongLine('floor', floorWrong),
      // The once-a-minute reconcile job (server/jobs) ran during the load: what it did to orders in flight.
      warn: reconciled + reconciling > 0 ? `ours' reconciler audited ${reconciled} orders as reconciled while they were in flight; ${reconciling} reconciling fills` : undefined,
    };
  };
  const results: PhaseResult[] = measured.map((m) => {
    const targets = targetsOf(m.phase);
    const got = { floor: answered.get(targets.floor.idPrefix) ?? [], ours: answered.get(targets.ours.idPrefix) ?? [] };
    return { ...m, answered: got, onDisk: onDiskOf(m.phase, got) };
  });
  const [many, one] = results as [PhaseResult, PhaseResult];

  // Close the service first so every log line is flushed, then count them.
  const generatorCpus = generator.cpus();
  await generator.stop();
  await app.close();
  await closeLog();
  const logText = readFileSync(logFile, 'utf8');
  const requestLines = logText.split('"msg":"request"').length - 1;
  const errorLines = logText.split('"level":"error"').length - 1;

  // --- Report. --------------------------------------------------------------------------------
  const threads = [...threadCpus()].map(([list, n]) => `${n} on CPU ${list}`).join(', ');
  console.log('');
  console.log(`POST ${ROUTE}: ours (five gates, simulator) vs the durable-order floor, same process, same Postgres, same load`);
  console.log(`  node ${process.version}, ${cpus().length} CPUs; Postgres ${pgSettings?.version}: synchronous_commit=${pgSettings?.synchronous_commit}, fsync=${pgSettings?.fsync}, wal_sync_method=${pgSettings?.wal_sync_method}, commit_delay=${pgSettings?.commit_delay}`);
  console.log(`  both pools ${POOL_SIZE} connections; ours: NODE_ENV=test, LOG_LEVEL=info to a file, RATE_LIMIT_ORDERS_PER_MIN=${RATE_LIMIT_PER_MIN} (the setting's maximum), SIM_TICK_INTERVAL_MS=0`);
  console.log(
    pinning.server === undefined
      ? `  UNPINNED (${pinning.why}): this process (threads: ${threads}), the generator (${generator.priority}) and Postgres share all CPUs`
      : `  pinned with taskset: this process, both servers (threads: ${threads}), on CPU ${pinning.server}; the generator on CPU ${generatorCpus ?? '?'}, ${generator.priority} (ahead of the Postgres backends there); Postgres, a system service, unpinned`,
  );
  console.log(
    `  many users: ${settings.users} users, a closed-loop client each, the open loop's orders dealt to them in turn; every order a market buy of the next of ${symbols.map((s) => `${s.symbol} ${s.qty}`).join(', ')} (about 5 USDT), ` +
      `so each symbol is shared by all; the floor gets the same users (x-user-id) and upserts each user's own position rows`,
  );
  console.log(`  one user: ${settings.connections} clients of one user, one symbol; a new client_order_id per request; generator: a child process (node:http, keep-alive)`);
  console.log(`  load average before/after: ${loadBefore.map((v) => v.toFixed(2)).join(' ')} / ${loadAfter.map((v) => v.toFixed(2)).join(' ')} (other work on the machine disturbs the figures)`);

  printHeadline(many, one, pinning);
  printPhase(many, settings);
  printPhase(one, settings);
  console.log(`  ours' log (both phases): ${requestLines} request lines, ${errorLines} error lines`);
  printCensus(many, settings);
};

if (process.argv[2] === '--load') {
  runGenerator();
} else {
  await runBench(main, { cleanUp, stopChildren: () => loadChild?.kill('SIGTERM') });
}
