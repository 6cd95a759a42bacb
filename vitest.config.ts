import { configDefaults, defineConfig } from 'vitest/config';
import { CHILD_NODE_FLAGS } from './test/support/child-node.ts';
import { useMemoryTmpdir } from './test/support/memory-tmpdir.ts';
import { ProcessFilesFirst } from './test/support/sequencer.ts';

// Five projects, run together on three workers (the process files first: test/support/sequencer.ts):
// - unit: pure logic;
// - process: the entry points as child processes (its files are the suite's longest); those whose
//   children run on embedded PGlite whatever the suite runs on run in the PGlite run only;
// - integration: the real server in-process over HTTP, each file on its own copy of a migrated
//   template database; the model-based test of a paper account (test/model) runs here with a
//   bounded number of runs;
// - isolated: the few files that replace a module (vi.mock), fake the timers or set a browser's
//   globals (console-session.test.ts), which need a module graph of their own;
// - no-database: integration files that open no database (NO_DATABASE below).
// unit and integration share one module graph per worker (isolate: false): every file importing
// the whole server again cost about half of their time. Each file still builds its own app (its
// own database, config, clock and services), so no state of one is seen by another.
const OWN_MODULES = ['test/integration/db-internals.test.ts', 'test/integration/duplicate-wait.test.ts', 'test/unit/clock.test.ts', 'test/unit/console-session.test.ts', 'test/unit/logger.test.ts'];
// Integration files that open no database (broker adapters against their fakes, the alerts'
// channels, the OpenAPI document): their own project, which CI's PostgreSQL pass leaves out, since
// they would do the same work there.
const NO_DATABASE = [
  'test/integration/alerts.test.ts',
  'test/integration/alpaca-adapter.test.ts',
  'test/integration/alpaca-quotes.test.ts',
  'test/integration/ccxt-adapter.test.ts',
  'test/integration/ccxt-stream.test.ts',
  'test/integration/kis-quotes.test.ts',
  'test/integration/openapi-examples.test.ts',
  'test/integration/openapi-typescript.test.ts',
];
const DATABASE = { globalSetup: ['test/support/global-setup.ts'] };

// The run's temporary files (data directories above all) in memory where the machine allows it:
// test/support/memory-tmpdir.ts says why. Set before any worker starts, so all of them inherit it.
useMemoryTmpdir();

export default defineConfig({
  test: {
    pool: 'forks',
    // V8's collector on each worker's own thread, and PGlite's WebAssembly left to Liftoff:
    // test/support/child-node.ts says why.
    execArgv: [...CHILD_NODE_FLAGS],
    // Bounds, not waits: a test that starts servers takes seconds of CPU, and the suite must pass
    // on a loaded machine (two CPU hogs beside it, or CI's other work).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores, three files at a time: a file waits part of its time (on its children, sockets
    // and timers), and with two the cores were busy 150 % of 200 %; with three, 187 %.
    maxWorkers: 3,
    sequence: { sequencer: ProcessFilesFirst },
    setupFiles: ['test/support/temp-dirs.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: [...configDefaults.exclude, ...OWN_MODULES], isolate: false } },
      { extends: true, test: { name: 'process', include: ['test/process/**/*.test.ts'], ...DATABASE } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts', 'test/model/**/*.test.ts'], exclude: [...configDefaults.exclude, ...OWN_MODULES, ...NO_DATABASE], isolate: false, ...DATABASE },
      },
      { extends: true, test: { name: 'no-database', include: NO_DATABASE, isolate: false } },
      { extends: true, test: { name: 'isolated', include: OWN_MODULES, ...DATABASE } },
    ],
  },
});
