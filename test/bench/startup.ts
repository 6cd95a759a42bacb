// `node test/bench/startup.ts` (also part of `npm run bench`): how long a fresh `npm start` takes
// to answer /health 200 on a new embedded database, seeding included (the instrument universe and,
// with DEMO_DATA on, ten years of synthetic bars for every instrument), beside the floor of the
// same measurement: a bare node:http process answering /health, started the same way in the same
// run. Each is run BENCH_STARTUP_ROUNDS times (default 3); the goal is 15 s on PGlite.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GOAL_MS = 15_000;
const DEADLINE_MS = 120_000;
const rounds = Number(process.env.BENCH_STARTUP_ROUNDS ?? 3);

const BARE = `require('node:http').createServer((q, s) => { s.setHeader('content-type', 'application/json'); s.end('{"status":"ok"}'); })
  .listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ msg: 'listening', port: this.address().port })); });`;

/** Spawns, waits for the port in the 'listening' log line, polls /health until 200; returns ms. */
const timeToHealthy = async (args: string[], env: Record<string, string>): Promise<number> => {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: REPO, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no 'listening' within ${DEADLINE_MS} ms: ${stderr}`)), DEADLINE_MS);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /"msg":"listening".*?"port":(\d+)|"port":(\d+).*?"msg":"listening"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1] ?? match[2]));
        }
      });
      child.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
    });
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (res?.status === 200) return performance.now() - started;
      if (performance.now() - started > DEADLINE_MS) throw new Error('/health did not answer 200 in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
  }
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const runStartupBench = async (): Promise<void> => {
  const ours: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < rounds; round++) {
    bare.push(await timeToHealthy(['-e', BARE], {}));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'ts-bench-start-'));
    try {
      ours.push(await timeToHealthy(['server/main.ts'], { DATA_DIR: dataDir, PORT: '0', DEMO_DATA: 'true', LOG_LEVEL: 'info', NODE_ENV: 'development' }));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  process.stdout.write(
    [
      '',
      'Fresh start to a healthy /health (new PGlite DATA_DIR, migrations, instrument universe, DEMO_DATA bars)',
      `  bare node:http process : median ${fmt(median(bare))}   (${bare.map(fmt).join(', ')})`,
      `  ours, npm start        : median ${fmt(median(ours))}   (${ours.map(fmt).join(', ')})`,
      `${median(ours) <= GOAL_MS ? 'PASS' : 'FAIL'}  start-up: ${fmt(median(ours))} (goal <= ${fmt(GOAL_MS)})`,
      '',
    ].join('\n'),
  );
};

if (import.meta.url === `file://${process.argv[1]}`) await runStartupBench();
