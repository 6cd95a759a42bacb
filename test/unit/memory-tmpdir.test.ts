// The run's temporary directory in memory (test/support/memory-tmpdir.ts): made only where no
// TMPDIR is set and the file system has the room asked for.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeMemoryTmpdir } from '../support/memory-tmpdir.ts';

const root = mkdtempSync(path.join(tmpdir(), 'ts-memory-tmpdir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('makeMemoryTmpdir', () => {
  it('makes a fresh directory under the root when no TMPDIR is set and there is room', () => {
    const dir = makeMemoryTmpdir({}, { root, minFreeBytes: 0 });
    expect(dir).toBeDefined();
    expect(path.dirname(dir!)).toBe(root);
    expect(statSync(dir!).isDirectory()).toBe(true);
    expect(makeMemoryTmpdir({}, { root, minFreeBytes: 0 })).not.toBe(dir);
  });

  it('leaves a TMPDIR that is set alone', () => {
    expect(makeMemoryTmpdir({ TMPDIR: '/somewhere' }, { root, minFreeBytes: 0 })).toBeUndefined();
  });

  it('makes nothing on a file system without the room asked for, or where the root is missing', () => {
    expect(makeMemoryTmpdir({}, { root, minFreeBytes: Number.MAX_SAFE_INTEGER })).toBeUndefined();
    const missing = path.join(root, 'missing');
    expect(makeMemoryTmpdir({}, { root: missing, minFreeBytes: 0 })).toBeUndefined();
    expect(existsSync(missing)).toBe(false);
  });
});
