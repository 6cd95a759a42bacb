// When a browser test fails, what the service logged while it ran, printed under the failure: a
// CI run keeps no test-results, and the service's log lives in its data directory, which goes
// with the run (test/e2e/service.ts). Its warnings and errors, its jobs' lines and any request
// that answered 400 or above; the plain request lines (hundreds a test) are left out.
import { existsSync, readFileSync } from 'node:fs';
import type { Reporter, TestCase, TestResult } from '@playwright/test/reporter';

/** At most this many lines a failed test: the last ones, nearest the failure. */
export const MAX_LINES = 80;
/** Lines the service wrote this long after the test ended still count (its log reaches the file through a pipe). */
const SLACK_MS = 1_000;
/** pino's `warn`. */
const WARN = 40;

interface LogEntry {
  level?: number;
  time?: string;
  msg?: string;
  status?: number;
}

const entryOf = (line: string): LogEntry | undefined => {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
};

/** The log's lines written from `from` to `to` that a failure may need, the last MAX_LINES of them. */
export const serviceLinesOf = (log: string, from: Date, to: Date): string[] => {
  const kept: string[] = [];
  for (const line of log.split('\n')) {
    const entry = entryOf(line);
    const at = entry?.time === undefined ? Number.NaN : Date.parse(entry.time);
    if (!entry || !(at >= from.getTime() && at <= to.getTime())) continue;
    const plainRequest = entry.msg === 'request' && (entry.level ?? 0) < WARN && (entry.status ?? 0) < 400;
    if (!plainRequest) kept.push(line);
  }
  return kept.slice(-MAX_LINES);
};

export default class ServiceLogReporter implements Reporter {
  /** Where the service logs: global-setup.ts names it in the runner's environment, where reporters run. */
  private readonly logFile: () => string | undefined;
  private readonly write: (text: string) => void;

  constructor(options: { logFile?: () => string | undefined; write?: (text: string) => void } = {}) {
    this.logFile = options.logFile ?? (() => process.env.E2E_SERVICE_LOG);
    this.write = options.write ?? ((text) => process.stdout.write(text));
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    if (result.status === 'passed' || result.status === 'skipped') return;
    const file = this.logFile();
    if (!file || !existsSync(file)) return;
    const to = new Date(result.startTime.getTime() + result.duration + SLACK_MS);
    const lines = serviceLinesOf(readFileSync(file, 'utf8'), result.startTime, to);
    this.write(`-- the service's log while "${test.title}" ran (${lines.length} lines; requests answered below 400 left out)\n${lines.map((line) => `${line}\n`).join('')}`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
