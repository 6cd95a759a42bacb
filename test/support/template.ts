// The suite's migrated template database (test/support/global-setup.ts), reached without loading
// the server: the process files copy it into their children's DATA_DIR.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/** The migrated template of test/support/global-setup.ts, when this project has one. */
export const databaseTemplate = (): ReturnType<typeof inject<'databaseTemplate'>> | undefined => {
  try {
    return inject('databaseTemplate');
  } catch {
    // Outside a vitest worker (npm run bench): no template, a plain database.
    return undefined;
  }
};

/** The temporary directories this test file made, removed after it (test/support/temp-dirs.ts). */
const made = new Set<string>();

/** A fresh temporary directory, removed once the test file that made it has run. */
export const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-test-'));
  made.add(dir);
  return dir;
};

/** Removes the temporary directories made so far: after a file's own afterAll hooks (its servers stopped). */
export const removeTempDirs = () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
};


/** A DATA_DIR holding a copy of the migrated PGlite template, when there is one. */
export const dataDirFromTemplate = (): string => {
  const dir = tempDir();
  const source = databaseTemplate();
  if (source?.kind === 'pglite') cpSync(path.join(source.dataDir, 'pgdata'), path.join(dir, 'pgdata'), { recursive: true });
  return dir;
};
