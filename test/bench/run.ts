// `npm run bench`: GET /api/auth/me through the whole service (HTTP layer, trpc-to-openapi,
// authedProcedure, token check, cached user lookup, one log line and one metric sample) against
// a raw node:http handler answering the same bytes, in the same run, under the same load; and,
// as the reference point, a bare trpc-to-openapi handler with one zod route.
//
// Fairness (DESIGN §9, the benchmark requirement):
// - Both servers live in this process, so they share the same Node, flags, heap and machine
//   state; only one of them is under load at a time.
// - The load generator (autocannon, test/bench/load.ts) runs in one separate child process with
//   identical settings for both targets. On a 2-core machine an in-process generator would share
//   the servers' event loop and cap both figures at whatever the generator leaves; a child gets
//   its own loop (and the OS can give it the other core).
// - Each target gets a warm-up with the same settings (not counted), then the measured time in
//   alternating slices (raw, ours, ours, raw, ...), so load from other work on the machine that
//   comes and goes weighs on both alike.
// - Ours logs as production does: LOG_LEVEL=info, one JSON line per request, through an async
//   pino destination, here a file in the bench's temp dir; the raw handler logs nothing.
//
// Settings: BENCH_SECONDS (measured per target, default 10), BENCH_WARMUP_SECONDS (default 2),
// BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (slices per target, default 5). DATABASE_URL
// selects Postgres (a fresh database, dropped afterwards); without it, PGlite in a temp dir.
// The exit code is 0 whatever the figures (this is a report, not a test); non-zero on a crash.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startBareServer } from './bare.ts';
import type { LoadSpec, LoadSummary, TargetSummary } from './load.ts';
import { createCleanups, positiveInt, runBench } from './common.ts';
import { startBenchService } from './service.ts';

const GOAL_RATIO = 0.18;
const GOAL_P99_MS = 60;
const GOAL_CONNECTIONS = 50;
const ROUTE = '/api/auth/me';


const settings = {
  seconds: positiveInt('BENCH_SECONDS', 10),
  warmupSeconds: positiveInt('BENCH_WARMUP_SECONDS', 2),
  connections: positiveInt('BENCH_CONNECTIONS', GOAL_CONNECTIONS),
  rounds: positiveInt('BENCH_ROUNDS', 5),
  pipelining: 1,
};

// Everything started here is undone here, last first, once, also on Ctrl-C.
const { cleanups, cleanUp } = createCleanups();

let loadChild: ChildProcess | undefined;

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

/** Runs autocannon in a child process against the targets and returns their summaries. */
const generateLoad = (spec: LoadSpec): Promise<LoadSummary> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    loadChild = child;
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    // A bound, so a stuck generator cannot hold the bench: the run plus a generous margin.
    const nominalSec = spec.targets.length * (spec.warmupSeconds + spec.seconds);
    const limit = setTimeout(() => child.kill('SIGTERM'), (nominalSec * 1.5 + 30) * 1000);
    child.once('error', (error) => {
      clearTimeout(limit);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(limit);
      loadChild = undefined;
      if (code !== 0) {
        reject(new Error(`load generator exited with ${signal ?? code}`));
        return;
      }
      try {
        resolve(JSON.parse(out) as LoadSummary);
      } catch {
        reject(new Error(`load generator printed no summary: ${out.slice(0, 200)}`));
      }
    });
  });

const postJson = async (url: string, body: unknown): Promise<{ status: number; json: unknown; text: string }> => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as unknown) : undefined, text };
};

/** Registers and logs in one user on our service; returns its access token. */
const accessTokenFor = async (baseUrl: string): Promise<string> => {
  const username = `bench_${process.pid}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const registered = await postJson(`${baseUrl}/api/auth/register`, { username, email: `${username}@example.com`, password });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
  const login = await postJson(`${baseUrl}/api/auth/login`, { username, password });
  const token = (login.json as { access_token?: unknown } | undefined)?.access_token;
  if (login.status !== 200 || typeof token !== 'string') throw new Error(`login failed: ${login.status} ${login.text}`);
  return token;
};

const getOnce = async (url: string, token: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, contentType: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
};

/** The reference: node:http answering the route with fixed bytes, nothing else. */
const startRawServer = async (body: Buffer, contentType: string): Promise<{ server: Server; url: string }> => {
  const headers = { 'Content-Type': contentType, 'Content-Length': String(body.length) };
  // Same keep-alive setting as ours (server/http/server.ts).
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    if (req.method === 'GET' && req.url === ROUTE) {
      res.writeHead(200, headers);
      res.end(body);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

const countLines = (file: string, needle: string): number => {
  const text = readFileSync(file, 'utf8');
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
};

const fixed = (value: number, digits = 0) => value.toFixed(digits);
const pad = (text: string, width: number) => text.padStart(width);

const printReport = (args: { db: string; raw: TargetSummary; bare: TargetSummary; ours: TargetSummary; loadBefore: number[]; loadAfter: number[]; logLines: number }) => {
  const { raw, bare, ours } = args;
  const columns = ['target', 'req/s', 'requests', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors'];
  const widths = [22, 13, 10, 8, 8, 8, 8, 8, 7];
  const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : pad(cell, widths[i]!))).join(' ');
  const line = (name: string, s: TargetSummary) =>
    row([
      name,
      fixed(s.requestsPerSec),
      String(s.requests),
      fixed(s.latencyMs.p50),
      fixed(s.latencyMs.p90),
      fixed(s.latencyMs.p99),
      fixed(s.latencyMs.max),
      String(s.non2xx),
      String(s.errors),
    ]);

  const ratio = raw.requestsPerSec > 0 ? ours.requestsPerSec / raw.requestsPerSec : 0;
  // Every response of ours must have been a 200: nothing else counts as a measured request.
  const only200 = Object.keys(ours.statusCodes).every((code) => code === '200');
  const allOk = only200 && ours.non2xx === 0 && ours.errors === 0 && ours.requests > 0 && ours.statusCodes['200'] === ours.requests;
  const rawOk = raw.non2xx === 0 && raw.errors === 0 && raw.requests > 0;
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');

  console.log('');
  console.log(`GET ${ROUTE}: ours (full stack) vs raw node:http, same process, same load`);
  console.log(
    `  node ${process.version}, ${cpus().length} CPUs, database: ${args.db}; autocannon in a child process: ` +
      `${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds} s warm-up (not counted) + ${settings.seconds} s measured per target ` +
      `in ${settings.rounds} alternating slices`,
  );
  console.log(`  ours logs one line per request at LOG_LEVEL=info to a file (async pino destination): ${args.logLines} request lines written; raw logs nothing`);
  console.log(`  load average before/after: ${args.loadBefore.map((v) => v.toFixed(2)).join(' ')} / ${args.loadAfter.map((v) => v.toFixed(2)).join(' ')} (other work on the machine disturbs the figures)`);
  console.log('');
  console.log(row(columns));
  console.log(line('raw node:http', raw));
  console.log(line('bare trpc-to-openapi', bare));
  console.log(line('ours /api/auth/me', ours));
  console.log(`req/s: mean over the measured time (completed requests / ${fixed(raw.durationSec, 1)} s raw, ${fixed(ours.durationSec, 1)} s ours)`);
  console.log('');
  const percent = `${(ratio * 100).toFixed(2)} %`;
  const bareRatio = raw.requestsPerSec > 0 ? bare.requestsPerSec / raw.requestsPerSec : 0;
  console.log(`ours / raw: ${percent} of raw req/s`);
  console.log(`reference: bare trpc-to-openapi (one zod route, no auth, no logs, no metrics) / raw: ${(bareRatio * 100).toFixed(2)} %`);
  console.log(`${verdict(ratio >= GOAL_RATIO)}  throughput: ${percent} of raw (goal >= ${GOAL_RATIO * 100} %)`);
  const p99Note = settings.connections === GOAL_CONNECTIONS ? '' : ` [measured at ${settings.connections} connections, the goal is stated at ${GOAL_CONNECTIONS}]`;
  console.log(`${verdict(ours.latencyMs.p99 <= GOAL_P99_MS)}  latency: ours p99 ${fixed(ours.latencyMs.p99)} ms (goal <= ${GOAL_P99_MS} ms at ${GOAL_CONNECTIONS} connections)${p99Note}`);
  console.log(
    `${verdict(allOk)}  responses: ours ${ours.ok2xx} x 2xx, ${ours.non2xx} non-2xx, ${ours.errors} errors (${ours.timeouts} timeouts); status codes ${JSON.stringify(ours.statusCodes)}`,
  );
  if (!rawOk) console.log(`WARN  raw reference had ${raw.non2xx} non-2xx and ${raw.errors} errors: its figure is not trustworthy`);
};

const main = async () => {
  const loadBefore = loadavg();
  const { app, logFile, closeLog } = await startBenchService({ cleanups, prefix: 'ts-bench-', env: { NODE_ENV: 'production' } });
  const db = `${app.services.database.kind}${app.services.database.kind === 'postgres' ? ' (DATABASE_URL, fresh database)' : ' (temp dir)'}`;
  console.log(`service up on ${app.url}, database: ${db}`);

  const token = await accessTokenFor(app.url);
  const headers = { authorization: `Bearer ${token}` };
  const reference = await getOnce(`${app.url}${ROUTE}`, token);
  if (reference.status !== 200) throw new Error(`GET ${ROUTE} answered ${reference.status}: ${reference.body.toString('utf8')}`);
  const contentType = reference.contentType ?? 'application/json';

  const raw = await startRawServer(reference.body, contentType);
  cleanups.push({ what: 'raw server', run: () => closeServer(raw.server) });
  const check = await getOnce(`${raw.url}${ROUTE}`, token);
  if (check.status !== 200 || !check.body.equals(reference.body) || check.contentType !== contentType) {
    throw new Error('raw server does not answer the same bytes as ours');
  }
  const bare = await startBareServer(ROUTE, JSON.parse(reference.body.toString('utf8')));
  cleanups.push({ what: 'bare server', run: () => closeServer(bare.server) });
  const bareCheck = await getOnce(`${bare.url}${ROUTE}`, token);
  if (bareCheck.status !== 200 || !bareCheck.body.equals(reference.body)) throw new Error('bare server does not answer the same bytes as ours');
  console.log(`all three answer ${reference.body.length} bytes of ${contentType}: ${reference.body.toString('utf8')}`);

  console.log(`measuring raw, bare and ours: ${settings.warmupSeconds} s warm-up each, then ${settings.seconds} s each in ${settings.rounds} alternating slices ...`);
  const [rawSummary, bareSummary, oursSummary] = await generateLoad({
    targets: [
      { name: 'raw', url: `${raw.url}${ROUTE}` },
      { name: 'bare', url: `${bare.url}${ROUTE}` },
      { name: 'ours', url: `${app.url}${ROUTE}` },
    ],
    headers,
    connections: settings.connections,
    pipelining: settings.pipelining,
    warmupSeconds: settings.warmupSeconds,
    seconds: settings.seconds,
    rounds: settings.rounds,
  });
  if (!rawSummary || !bareSummary || !oursSummary) throw new Error('load generator returned too few summaries');
  const loadAfter = loadavg();

  // Close the service first so every log line is flushed, then count them.
  await app.close();
  await closeLog();
  const logLines = countLines(logFile, '"msg":"request"');

  printReport({ db, raw: rawSummary, bare: bareSummary, ours: oursSummary, loadBefore, loadAfter, logLines });
};

await runBench(main, { cleanUp, stopChildren: () => loadChild?.kill('SIGTERM') });
