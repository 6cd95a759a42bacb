// Which of the suite's runs this is: on embedded PGlite (`npm test`), or on the PostgreSQL that
// DATABASE_URL names (CI's second pass, .ci/run).

/**
 * The run on PGlite. A test whose child processes get an embedded PGlite whatever the suite runs
 * on does the same work in both runs: it runs in this one only.
 */
export const ON_PGLITE = !process.env.DATABASE_URL;
