// End-to-end tests of the web console: Playwright's runner driving Debian's chromium (never a
// downloaded browser) against the real service, started once by test/e2e/global-setup.ts.
import { defineConfig } from '@playwright/test';
import { useMemoryTmpdir } from './test/support/memory-tmpdir.ts';

// The service's data directory in memory where the machine allows it (test/support/memory-tmpdir.ts).
useMemoryTmpdir();

const runningAsRoot = process.getuid?.() === 0;

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '*.spec.ts',
  outputDir: 'test-results/e2e',
  globalSetup: './test/e2e/global-setup.ts',
  // Two shared cores: one browser at a time.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  // Bounds, not waits: every expectation polls for its condition and passes as soon as it holds.
  // Roomy, because CI runs these beside the PostgreSQL run on the same two cores.
  timeout: 120_000,
  expect: {
    timeout: 30_000,
    // The console's screenshots (test/e2e/screenshots.spec.ts): baselines in docs/screenshots/, by
    // name. Two runs differ by a few anti-aliased pixels at most; 1 % of a page's pixels may differ.
    toHaveScreenshot: { pathTemplate: '{testDir}/../../docs/screenshots/{arg}{ext}', maxDiffPixelRatio: 0.002 },
  },
  forbidOnly: true,
  // A failed test's service log lines are printed under it (service-log-reporter.ts says why).
  reporter: [['list'], ['./test/e2e/service-log-reporter.ts'], ['./test/e2e/summary-reporter.ts']],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        // Chromium's sandbox refuses to start as root (CI containers).
        ...(runningAsRoot ? ['--no-sandbox'] : []),
        // No GPU process: with no GPU to use, chromium emulates one in software (SwiftShader), in
        // a process of its own that was among the run's busiest; without it, pages are rasterised
        // in their renderer by Skia. The screenshots match their baselines either way
        // (screenshots.spec.ts passes with and without).
        '--disable-gpu',
      ],
    },
    // A failed test's last page is kept as an artifact (test-results/e2e), with its trace. The
    // tests assert on DOM and data; only screenshots.spec.ts compares pixels, with its baselines.
    // The trace keeps its DOM snapshots of every step (what a failure is read from) but no
    // screencast: recording a video of every test cost about a third of a spec's CPU (research:
    // 88 CPU s with it, 64 without, 55 with no trace at all). CI runs with none (.ci/run).
    screenshot: 'only-on-failure',
    trace: { mode: 'retain-on-failure', screenshots: false },
  },
});
