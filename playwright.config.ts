// End-to-end tests of the web console: Playwright's runner driving Debian's chromium (never a
// downloaded browser) against the real service, started once by test/e2e/global-setup.ts.
import { defineConfig } from '@playwright/test';

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
  reporter: [['list'], ['./test/e2e/summary-reporter.ts']],
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      // Chromium's sandbox refuses to start as root (CI containers).
      args: runningAsRoot ? ['--no-sandbox'] : [],
    },
    // Every test's last page is kept as an artifact (test-results/e2e). The tests assert on DOM and
    // data; only screenshots.spec.ts compares pixels, with its baselines.
    screenshot: 'on',
    trace: 'retain-on-failure',
  },
});
