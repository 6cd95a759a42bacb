// The README's front door, run as a reader would paste it: the shell block of "A first order",
// word for word but for the service's address, against a fresh service. It must end with the
// paper order filled and the position held, so the quick start cannot go stale unnoticed.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

const README = path.resolve(import.meta.dirname, '../../README.md');
/** The address the README's block names: the one `npm start` listens on by default. */
const DOCUMENTED_BASE = 'B=http://127.0.0.1:8000';

/** The first ```sh block under the heading `heading`. */
const shellBlockUnder = (markdown: string, heading: string): string => {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!section || !block) throw new Error(`no sh block under "${heading}" in README.md`);
  return block[1]!;
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe("the README's quick start", () => {
  it('"A first order", pasted into a shell, registers, logs in, adds a paper key and buys: the position holds the order', async () => {
    const block = shellBlockUnder(readFileSync(README, 'utf8'), '### A first order');
    expect(block).toContain(DOCUMENTED_BASE);
    const script = block.replace(DOCUMENTED_BASE, `B=${server.url}`);
    // Each answer on a line of its own (curl's -w), as a reader sees them one after another; run
    // asynchronously, as the service answers from this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script.replaceAll('curl -s ', "curl -s -w '\\n' ")], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('error', reject);
      child.once('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
    const answers = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const [registered, key, order, positions] = answers;
    expect(registered).toMatchObject({ username: 'alice' });
    expect(key).toMatchObject({ exchange: 'crypto_exchange' });
    expect(order).toMatchObject({ symbol: 'BTC/USDT', side: 'buy', status: 'accepted' });
    expect(positions).toMatchObject({ items: [expect.objectContaining({ symbol: 'BTC/USDT', qty: 0.001, side: 'LONG' })] });
  });
});
