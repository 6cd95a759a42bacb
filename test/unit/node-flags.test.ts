// The node flags the service runs with (docs/operations.md, "The node process's flags"): `npm
// start` and `npm run worker` share them, every bench of the service runs with them (so what it
// measures is what is deployed), and this Node accepts them (V8 exits at an unknown flag).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

/** The flags between `node` and the script's file, for each `node` command of a script. */
const nodeCommandsOf = (script: string) =>
  [...script.matchAll(/\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+(\S+\.ts)/g)].map(([, flags = '', file = '']) => ({ flags: flags.trim().split(/\s+/).filter(Boolean), file }));

const startFlags = nodeCommandsOf(scripts.start ?? '')[0]?.flags ?? [];

describe("the node process's flags", () => {
  it('are the ones docs/operations.md explains, the same for the server and the worker', () => {
    expect(startFlags).toEqual(['--max-semi-space-size=32', '--single-threaded-gc']);
    expect(nodeCommandsOf(scripts.worker ?? '')).toEqual([{ flags: startFlags, file: 'server/worker.ts' }]);
  });

  it("are every service bench's flags (the console's bench drives a browser, not the service's process)", () => {
    const benches = nodeCommandsOf(scripts.bench ?? '');
    expect(benches.length).toBeGreaterThan(10);
    for (const { flags, file } of benches) expect({ file, flags }).toEqual({ file, flags: file === 'test/bench/console.ts' ? [] : startFlags });
  });

  it('are accepted by this Node', () => {
    const run = spawnSync(process.execPath, [...startFlags, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: 'ok', stderr: '' });
  });
});
