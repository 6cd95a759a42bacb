// Where the tests' temporary files go. Every PGlite the suite starts copies the migrated template
// (41 MB in about 1,240 files) into a data directory of its own, then writes its WAL and tables
// there; the process files, the client package's install and the browser tests' service do the
// same kind of work. On an ext4 disk, creating and removing those files cost the kernel about a
// second of CPU per copy on the machines CI runs on (inode allocation, journal); in memory
// (tmpfs) about 40 ms.

import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import path from 'node:path';

/** Room the suite's directories may take at once (a few dozen data directories of about 41 MB), with margin. */
const MIN_FREE_BYTES = 2 * 1024 ** 3;

/**
 * A fresh directory under `root` for a run's temporary files, when `env` sets no TMPDIR (a
 * setting of the user's, or a parent run's that a child inherits) and `root` is a writable file
 * system with `minFreeBytes` to spare (a container's /dev/shm of 64 MB is not); otherwise undefined.
 */
export const makeMemoryTmpdir = (env: NodeJS.ProcessEnv, { root = '/dev/shm', minFreeBytes = MIN_FREE_BYTES } = {}): string | undefined => {
  if (env.TMPDIR) return undefined;
  try {
    const { bavail, bsize } = statfsSync(root);
    if (bavail * bsize < minFreeBytes) return undefined;
    return mkdtempSync(path.join(root, 'trading-service-tests-'));
  } catch {
    // No such directory here (macOS, Windows), or not writable: the system's temporary directory.
    return undefined;
  }
};

/**
 * Points TMPDIR, for this process and every process it starts with its environment (vitest's
 * workers, Playwright's), at a fresh directory on /dev/shm (makeMemoryTmpdir), removed when this
 * process exits. Children started with an environment of their own (the process files') keep the
 * system's; the data directories they use are made here and handed to them. Where there is none, nothing changes: the
 * tests use the system's temporary directory, only more slowly.
 */
export const useMemoryTmpdir = (): void => {
  const dir = makeMemoryTmpdir(process.env);
  if (!dir) return;
  process.env.TMPDIR = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
};
