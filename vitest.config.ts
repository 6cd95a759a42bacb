import { defineConfig } from 'vitest/config';

// Three projects: unit (pure logic) and process (the entry points as child processes) first,
// then integration (the real server in-process over HTTP, each file on its own copy of a migrated
// template database; the model-based test of a paper account, test/model, runs here with a
// bounded number of runs).
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: two files at a time.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts', 'test/model/**/*.test.ts'], globalSetup: ['test/support/global-setup.ts'], sequence: { groupOrder: 1 } },
      },
      // With the unit tests, before the integration files: its files are the suite's longest (each
      // starts the service as a child process), and run last they left one worker idle at the end.
      { extends: true, test: { name: 'process', include: ['test/process/**/*.test.ts'], sequence: { groupOrder: 0 } } },
    ],
  },
});
