// The service as a child process (server/main.ts), for the tests that kill it, starve it of its
// database or run two of it: started with its own DATA_DIR, its output kept, killed and cleaned up
// by the test file that started it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_NODE_FLAGS } from './child-node.ts';
import { waitFor } from './wait.ts';

export const REPO = path.resolve(import.meta.dirname, '../..');
/** Node 24: this process's when it is one, else the pinned one in node_modules. */
export const NODE = Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : path.join(REPO, 'node_modules', 'node', 'bin', 'node');

export interface ServerProcess {
  readonly proc: ChildProcessWithoutNullStreams;
  stdout: string;
  stderr: string;
  /** Set once the process has exited and its output is read. */
  exit?: number | null;
  readonly closed: Promise<number | null>;
}

/** The JSON lines the process has logged so far. */
export const logLines = (child: ServerProcess): Record<string, unknown>[] =>
  child.stdout.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

/** The first log line with that message, waiting up to `deadlineMs` for it; fails when the process ends first. */
export const logged = (child: ServerProcess, msg: string, deadlineMs: number) =>
  waitFor(
    () => {
      const line = logLines(child).find((entry) => entry.msg === msg);
      if (!line && child.exit !== undefined) throw new Error(`the server exited (${child.exit}) before logging '${msg}'\n${child.stderr}\n${child.stdout}`);
      return Promise.resolve(line);
    },
    (line) => line !== undefined,
    deadlineMs,
  ) as Promise<Record<string, unknown>>;

/** The base URL once the process logs that it listens. */
export const listeningAt = async (child: ServerProcess, deadlineMs: number): Promise<string> => `http://127.0.0.1:${String((await logged(child, 'listening', deadlineMs)).port)}`;

export interface JsonReply {
  status: number;
  // The tests read the answers' fields as each route documents them.
  body: any;
  text: string;
  retryAfter: string | null;
}

/** One HTTP call with a JSON body; a request that hangs past `deadlineMs` fails on its own rather than holding the test. */
export const callJson = async (base: string, method: string, urlPath: string, opts: { body?: unknown; token?: string; deadlineMs: number }): Promise<JsonReply> => {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${urlPath}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: AbortSignal.timeout(opts.deadlineMs) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, text, retryAfter: response.headers.get('retry-after') };
};

/**
 * The service processes of one test file: `start` spawns one (DATA_DIR a fresh temporary
 * directory named after `prefix`); `stopAll`, for its afterAll, kills those still running and
 * removes their directories.
 */
export const serverProcesses = (prefix: string) => {
  const children = new Set<ServerProcess>();
  const dirs: string[] = [];

  const start = (env: Record<string, string>): ServerProcess => {
    const dataDir = mkdtempSync(path.join(tmpdir(), `ts-${prefix}-`));
    dirs.push(dataDir);
    const proc = spawn(NODE, [...TEST_NODE_FLAGS, 'server/main.ts'], {
      cwd: REPO,
      stdio: 'pipe',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', DEMO_DATA: 'false', ...env },
    });
    const child: ServerProcess = {
      proc,
      stdout: '',
      stderr: '',
      closed: new Promise((resolve) =>
        proc.once('close', (code) => {
          child.exit = code;
          resolve(code);
        }),
      ),
    };
    children.add(child);
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => (child.stdout += chunk));
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (child.stderr += chunk));
    proc.stdin.end();
    return child;
  };

  const stopAll = async () => {
    for (const child of children) if (child.exit === undefined) process.kill(child.proc.pid!, 'SIGKILL');
    await Promise.all([...children].map((child) => child.closed));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };

  return { start, stopAll };
};
