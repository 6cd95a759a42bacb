// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/driver-gc.ts`: how
// much of what the database driver (postgres.js, as the service uses it: a pool, one statement at
// a time per connection) allocates lives long enough for V8 to move it to the old generation,
// beside a control that makes the same requests and answers over plain TCP sockets (a local echo
// server) at the same pace. A diagnostic, run on its own (not part of `npm run bench`).
//
// Why it matters: what is promoted fills the old generation, and the order bench's worst open-loop
// slices hold a major (mark-compact) collection; each scavenge also takes as long as what it
// copies. It found that the driver's queries (closures written into properties in a constructor
// V8 does not optimise, which it allocates old) kept every statement's objects alive until the
// next full collection: about 700 bytes promoted per statement, against 1 for the control; with the driver
// patch's garbage-collector change (docs/operations.md), about 40.
//
// Each target runs in a child process of its own with `--trace-gc-nvp` (V8 prints one line per
// collection, with the bytes it promoted) and `--max-semi-space-size=32` (as `npm start`); the
// statements are paced by timers, as requests arrive at a server, after a warm-up. The parent
// reads the collections that began inside the measured window. Settings: BENCH_DRIVER_RATE
// (statements per second, 2000), BENCH_DRIVER_SECONDS (10), BENCH_DRIVER_POOL (connections, 20).
// The exit code is 0 whatever the figures; non-zero on a crash.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { fixed, positiveInt, postgresAdminUrl } from './common.ts';

type Role = 'driver' | 'control';

const rate = positiveInt('BENCH_DRIVER_RATE', 2000);
const seconds = positiveInt('BENCH_DRIVER_SECONDS', 10);
const pool = positiveInt('BENCH_DRIVER_POOL', 20);
const WARMUP_MS = 2000;

/** Sends `one()` `rate` times a second for `ms`, on schedule, and waits for every answer. */
const paced = (one: () => Promise<unknown>, ms: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const total = Math.round((rate * ms) / 1000);
    const t0 = performance.now();
    let sent = 0;
    let answered = 0;
    const tick = () => {
      while (sent < total && t0 + (sent * 1000) / rate <= performance.now()) {
        sent++;
        one().then(() => {
          if (++answered === total) resolve();
        }, reject);
      }
      if (sent < total) setTimeout(tick, Math.max(0, t0 + (sent * 1000) / rate - performance.now()));
    };
    tick();
  });

/** The control: `pool` sockets to a local echo server, each request a length-prefixed frame answered in turn. */
const controlClient = async () => {
  const server = net.createServer((socket) => socket.on('data', (data) => socket.write(data))).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  const sockets = await Promise.all(Array.from({ length: pool }, () => new Promise<net.Socket>((resolve) => { const socket = net.connect(port, '127.0.0.1', () => resolve(socket)); })));
  const waiting = sockets.map(() => [] as ((row: { one: number }) => void)[]);
  sockets.forEach((socket, i) =>
    socket.on('data', (data: Buffer) => {
      for (let at = 0; at < data.length; ) {
        const length = data.readUInt32BE(at);
        waiting[i]!.shift()!({ one: data.toString('utf8', at + 4, at + length).length });
        at += length;
      }
    }),
  );
  let next = 0;
  const one = () =>
    new Promise<{ one: number }>((resolve) => {
      const i = next++ % pool;
      const body = Buffer.from('select 1 as one');
      const frame = Buffer.alloc(4 + body.length);
      frame.writeUInt32BE(frame.length);
      body.copy(frame, 4);
      waiting[i]!.push(resolve);
      sockets[i]!.write(frame);
    });
  return { one, close: () => (sockets.forEach((socket) => socket.destroy()), server.close()) };
};

const driverClient = async (url: string) => {
  const { default: postgres } = await import('postgres');
  const sql = postgres(url, { max: pool, onnotice: () => undefined });
  return { one: () => sql.unsafe('select 1 as one'), close: () => sql.end({ timeout: 5 }) };
};

/** A child: warms up, then prints the window it measured (performance.now(), as V8's trace lines count). */
const runRole = async (role: Role, url: string) => {
  const client = role === 'driver' ? await driverClient(url) : await controlClient();
  await paced(client.one, WARMUP_MS);
  const start = performance.now();
  await paced(client.one, seconds * 1000);
  console.log(`WINDOW ${fixed(start, 0)} ${fixed(performance.now(), 0)}`);
  await client.close();
};

interface Collections {
  scavenges: number;
  majors: number;
  pauseMs: number;
  promotedBytes: number;
  windowMs: number;
}

/** The collections of one child's trace that began inside its window. */
const collectionsOf = (trace: string): Collections => {
  const window = /^WINDOW (\d+) (\d+)$/m.exec(trace);
  if (!window) throw new Error(`no window in the child's output:\n${trace.slice(-2000)}`);
  const [start, end] = [Number(window[1]), Number(window[2])];
  const out: Collections = { scavenges: 0, majors: 0, pauseMs: 0, promotedBytes: 0, windowMs: end - start };
  for (const line of trace.split('\n')) {
    const at = /\s(\d+) ms: pause=([\d.]+) .*?gc=(\w+)/.exec(line);
    if (!at || Number(at[1]) < start || Number(at[1]) > end) continue;
    const kind = at[3];
    if (kind === 's') out.scavenges++;
    else if (kind === 'ms' || kind === 'mc') out.majors++;
    out.pauseMs += Number(at[2]);
    out.promotedBytes += Number(/\spromoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  return out;
};

const runChild = (role: Role, url: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-semi-space-size=32', '--trace-gc-nvp', fileURLToPath(import.meta.url), role, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`the ${role} child exited with ${code}`))));
  });

const main = async () => {
  const url = postgresAdminUrl('driver-gc', 'the driver runs `select 1` against it');
  if (!url) return;
  console.log(`${rate} statements/s for ${seconds} s over ${pool} connections, paced by timers, after ${WARMUP_MS / 1000} s of warm-up; each target in a child process (node ${process.version}, --max-semi-space-size=32)`);
  console.log(`${'target'.padEnd(34)} ${'scavenges'.padStart(9)} ${'mean pause'.padStart(11)} ${'majors'.padStart(6)} ${'promoted/s'.padStart(11)} ${'per statement'.padStart(14)}`);
  for (const [role, label] of [['control', 'control (TCP echo, same pace)'], ['driver', 'postgres.js (select 1, pooled)']] as const) {
    const c = collectionsOf(await runChild(role, url));
    const statements = (rate * c.windowMs) / 1000;
    const collections = c.scavenges + c.majors;
    console.log(
      `${label.padEnd(34)} ${String(c.scavenges).padStart(9)} ${`${fixed(collections ? c.pauseMs / collections : 0, 2)} ms`.padStart(11)} ${String(c.majors).padStart(6)} ` +
        `${`${fixed(c.promotedBytes / 1024 / (c.windowMs / 1000), 0)} KB`.padStart(11)} ${`${fixed(c.promotedBytes / statements, 0)} B`.padStart(14)}`,
    );
  }
};

const [role, url] = process.argv.slice(2);
if (role === 'driver' || role === 'control') await runRole(role, url ?? '');
else await main();
