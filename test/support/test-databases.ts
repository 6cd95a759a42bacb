// How a run's test databases on PostgreSQL are named (a module of its own: the global setup, in
// vitest's main process, reads it too, and must not load what reads vitest's worker state).
/**
 * The name every test database of a run on PostgreSQL starts with: its template's. They are
 * dropped together when the run ends (test/support/global-setup.ts), not one by one as each file
 * ends: Postgres checkpoints at every DROP DATABASE, writing out every database's dirty pages. In
 * the PostgreSQL run those checkpoints wrote 950 MB, mostly pages of databases about to be
 * dropped; with the drops at the end, 65 MB, and the run took 198 s instead of 250 s.
 */
export const testDatabasePrefix = (templateName: string) => `${templateName.replace(/^ts_template_/, 'ts_test_')}_`;
