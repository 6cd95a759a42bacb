// The node flags the service runs with (docs/operations.md, "The node process's flags"):
// scripts/node.sh picks them by the cores the process may use, `npm start` and `npm run worker`
// run through it, every bench of the service runs with its flags (the order bench, which pins its
// servers to one core, with those of one core), and this Node accepts them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
const REPO = new URL('../..', import.meta.url);

const MANY_CORES = ['--max-semi-space-size=32'];
const ONE_CORE = [...MANY_CORES, '--single-threaded-gc'];

/** The flags between `node` and the script's file, for each `node` command of a script. */
const nodeCommandsOf = (script: string) =>
  [...script.matchAll(/\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+(\S+\.ts)/g)].map(([, flags = '', file = '']) => ({ flags: flags.trim().split(/\s+/).filter(Boolean), file }));

/** The flags node got from scripts/node.sh, run under `prefix` (taskset, say). */
const flagsFromNodeSh = (prefix: string[] = [], extraEnv: Record<string, string> = {}) => {
  const [command = 'sh', ...args] = [...prefix, 'sh', 'scripts/node.sh', '-e', 'process.stdout.write(JSON.stringify(process.execArgv.slice(0, process.execArgv.indexOf("-e"))))'];
  // node.sh runs the `node` on PATH, as npm's scripts do: this one first.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...extraEnv };
  const run = spawnSync(command, args, { cwd: REPO, env, encoding: 'utf8' });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(run.stdout) as string[];
};

const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
/** The flags by this process's affinity alone, and the setting that hides the machine's own cgroup quota from node.sh. */
const BY_AFFINITY = availableParallelism() > 1 ? MANY_CORES : ONE_CORE;
const NO_QUOTA = { NODE_SH_CPU_MAX: '/nonexistent/cpu.max' };

describe("the node process's flags", () => {
  it('npm start and npm run worker run node through scripts/node.sh', () => {
    expect(scripts.start).toBe('exec sh scripts/node.sh server/main.ts');
    expect(scripts.worker).toBe('exec sh scripts/node.sh server/worker.ts');
  });

  it('scripts/node.sh collects garbage on the main thread alone where the process may use one core, with helper threads where more', () => {
    expect(flagsFromNodeSh([], NO_QUOTA)).toEqual(BY_AFFINITY);
  });

  it.skipIf(!hasTaskset)('scripts/node.sh sees one core under taskset', () => {
    expect(flagsFromNodeSh(['taskset', '-c', '0'], NO_QUOTA)).toEqual(ONE_CORE);
  });

  it("scripts/node.sh counts a cgroup's CPU quota under two cores as one core", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'node-sh-'));
    try {
      const quota = (line: string) => {
        const file = path.join(dir, 'cpu.max');
        writeFileSync(file, `${line}\n`);
        return flagsFromNodeSh([], { NODE_SH_CPU_MAX: file });
      };
      expect(quota('150000 100000')).toEqual(ONE_CORE);
      expect(quota('200000 100000')).toEqual(BY_AFFINITY);
      expect(quota('max 100000')).toEqual(BY_AFFINITY);
      // A file of another shape is no quota, and never stops the start.
      expect(quota('150000')).toEqual(BY_AFFINITY);
      expect(quota('1.5 cores')).toEqual(BY_AFFINITY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are every service bench\'s, the order bench\'s those of one core (the console\'s bench drives a browser)', () => {
    const benches = nodeCommandsOf(scripts.bench ?? '');
    expect(benches.length).toBeGreaterThan(10);
    const expected = (file: string) => (file === 'test/bench/console.ts' ? [] : file === 'test/bench/orders.ts' ? ONE_CORE : MANY_CORES);
    for (const { flags, file } of benches) expect({ file, flags }).toEqual({ file, flags: expected(file) });
  });
});
