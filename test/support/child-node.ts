// The V8 flags of the Node processes the tests start: the suite's workers, the process files' children
// (the service, the worker, the CLI), the browser tests' service.

/**
 * V8's garbage collector on the process's own thread (`--single-threaded-gc`), for every Node
 * process the tests start: the suite's workers (vitest.config.ts), the process files' children
 * (the service, the worker, the CLI, tsc), the browser tests' service. Not npm's own processes
 * (npm pack, npm install, npm start): Node takes no such V8 flag from NODE_OPTIONS. Meant to
 * spare a paused process waiting for GC helper threads that two crowded cores do not run; CI's
 * runs with it (807-944 s) and without (1,013 and 882 s) show no gain beyond their noise
 * (docs/architecture.md, Testing), so it is kept as harmless, not as a measured gain. What the
 * tests assert does not depend on how V8 collects; the service itself runs on V8's defaults.
 */
export const TEST_NODE_FLAGS: readonly string[] = ['--single-threaded-gc'];

/**
 * V8 flags for the suite's workers (vitest.config.ts) and the process files' children:
 * TEST_NODE_FLAGS, and PGlite's WebAssembly compiled once, by Liftoff, and never again by TurboFan
 * in the background (`--liftoff-only`). A child of these tests lives for seconds, too short for
 * optimised code to pay back its compile: `users create-admin` took about 4 s of CPU with the flag
 * against 7 without, and the process files' children are the largest share of the suite's CPU. A
 * worker lives for the whole run, yet pays too: TurboFan's compiles of PostgreSQL's hottest
 * WebAssembly functions (and the memory they touch: a quarter of the PGlite run's CPU is the
 * kernel's, mostly page faults) cost more than their faster code saves over the few seconds of
 * queries each file runs. The PGlite run (`npm test`, alone, four runs in turn) took 262 and 264 s
 * with the flag on its workers and 348 and 279 s without (484 and 489 CPU-s against 649 and 517).
 * What the tests assert (exit codes, output, files, answers, data) does not depend on how V8
 * compiles.
 */
export const CHILD_NODE_FLAGS: readonly string[] = ['--liftoff-only', ...TEST_NODE_FLAGS];
