// The browser tests' reporter that prints, under a failed test, what the service logged while it
// ran (test/e2e/service-log-reporter.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestCase, TestResult } from '@playwright/test/reporter';
import { afterAll, describe, expect, it } from 'vitest';
import ServiceLogReporter, { MAX_LINES, serviceLinesOf } from '../e2e/service-log-reporter.ts';

const started = new Date('2026-12-05T03:40:00.000Z');
const at = (seconds: number) => new Date(started.getTime() + seconds * 1_000).toISOString();
const line = (entry: Record<string, unknown>) => JSON.stringify({ service: 'trading-service', ...entry });

const LOG = [
  line({ level: 50, time: at(-5), msg: 'before the test: left out' }),
  line({ level: 30, time: at(1), msg: 'request', route: '/trpc/analysis.getReport', status: 200 }),
  line({ level: 30, time: at(2), msg: 'analysis report started', reportId: 7 }),
  'not a log line: the service printed something else',
  line({ level: 30, time: at(3), msg: 'request', route: '/trpc/analysis.analyze', status: 422 }),
  line({ level: 40, time: at(4), msg: 'request', route: '/trpc/analysis.getReport', status: 200 }),
  line({ level: 40, time: at(10.5), msg: 'an LLM call failed', kind: 'timeout' }),
  line({ level: 50, time: at(20), msg: 'after the test and its slack: left out' }),
].join('\n');

const dir = mkdtempSync(path.join(tmpdir(), 'service-log-reporter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const testCase = { title: 'analysis: a quick report' } as unknown as TestCase;
const resultOf = (status: TestResult['status']) => ({ status, startTime: started, duration: 10_000 }) as unknown as TestResult;

describe('serviceLinesOf', () => {
  it('keeps the lines of the test’s window but the plain requests: warnings, errors, jobs, requests answered 400 or above', () => {
    const kept = serviceLinesOf(LOG, started, new Date(started.getTime() + 11_000)).map((kept) => (JSON.parse(kept) as { msg: string }).msg);
    expect(kept).toEqual(['analysis report started', 'request', 'request', 'an LLM call failed']);
  });

  it('keeps the last lines when there are more than it prints', () => {
    const many = Array.from({ length: MAX_LINES + 5 }, (_, index) => line({ level: 30, time: at(1), msg: `job step ${index}` })).join('\n');
    const kept = serviceLinesOf(many, started, new Date(started.getTime() + 2_000));
    expect(kept).toHaveLength(MAX_LINES);
    expect(kept[0]).toContain('job step 5');
    expect(kept.at(-1)).toContain(`job step ${MAX_LINES + 4}`);
  });
});

describe('ServiceLogReporter', () => {
  const logFile = path.join(dir, 'service.log');
  writeFileSync(logFile, LOG);

  it('prints the service’s lines under a failed or timed-out test, counting the pipe’s slack', () => {
    for (const status of ['failed', 'timedOut'] as const) {
      const written: string[] = [];
      new ServiceLogReporter({ logFile: () => logFile, write: (text) => written.push(text) }).onTestEnd(testCase, resultOf(status));
      expect(written).toHaveLength(1);
      expect(written[0]).toContain('-- the service\'s log while "analysis: a quick report" ran (4 lines');
      expect(written[0]).toContain('an LLM call failed');
      expect(written[0]).not.toContain('left out"');
    }
  });

  it('prints nothing for a test that passed or was skipped, nor without a log', () => {
    const written: string[] = [];
    const write = (text: string) => written.push(text);
    new ServiceLogReporter({ logFile: () => logFile, write }).onTestEnd(testCase, resultOf('passed'));
    new ServiceLogReporter({ logFile: () => logFile, write }).onTestEnd(testCase, resultOf('skipped'));
    new ServiceLogReporter({ logFile: () => undefined, write }).onTestEnd(testCase, resultOf('failed'));
    new ServiceLogReporter({ logFile: () => path.join(dir, 'missing.log'), write }).onTestEnd(testCase, resultOf('failed'));
    expect(written).toEqual([]);
  });
});
