// The e2e run's last line, plain for CI logs and scripts: `N passed, N failed`.
import type { FullResult, Reporter, TestCase, TestResult } from '@playwright/test/reporter';

export default class SummaryReporter implements Reporter {
  private readonly outcomes = new Map<string, boolean>();

  onTestEnd(test: TestCase, result: TestResult): void {
    // The last attempt of a test decides; a skipped test is neither.
    if (result.status === 'skipped') this.outcomes.delete(test.id);
    else this.outcomes.set(test.id, result.status === 'passed');
  }

  onEnd(result: FullResult): void {
    const passed = [...this.outcomes.values()].filter(Boolean).length;
    // A run that broke outside any test (global setup, a crash) counts as one failure.
    const failed = this.outcomes.size - passed + (result.status !== 'passed' && this.outcomes.size === passed ? 1 : 0);
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
  }

  printsToStdio(): boolean {
    return true;
  }
}
