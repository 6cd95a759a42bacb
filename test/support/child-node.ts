// How the process tests start the service's entry points (server, worker, CLI) as children.

/**
 * V8 flags for those children: PGlite's WebAssembly compiled once, by Liftoff, and never again by
 * TurboFan in the background (`--liftoff-only`). A child of these tests lives for seconds, too
 * short for optimised code to pay back its compile: `users create-admin` took about 4 s of CPU
 * with the flag against 7 without, and the process files' children are the largest share of the
 * suite's CPU. What the tests assert (exit codes, output, files, answers, data) does not depend on
 * how V8 compiles; the service itself runs on V8's defaults.
 */
export const CHILD_NODE_FLAGS: readonly string[] = ['--liftoff-only'];
