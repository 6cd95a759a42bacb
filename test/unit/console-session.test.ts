// The web console's session (client/console/src/session.ts) in Node, with the browser's storage
// replaced by small fakes and the service by a local HTTP server: a refresh rotates the token, and
// the console says "signed in" (its pages show) only once the new refresh token is kept. A page
// shown before that could be reloaded with the rotated-away token, which revokes the session.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** What the test uses of session.ts (imported by path: it is the console's project, with the DOM's types). */
interface SessionModule {
  session: { state(): string; restore(): Promise<void> };
}

/** localStorage as a Map. */
const fakeLocalStorage = () => {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
};

/**
 * IndexedDB enough for refresh-store.ts: one store of values by key. A readwrite transaction's
 * writes land, and it completes, only when the test lets it (`commitWrites`); `writeStarted`
 * resolves with the first value put.
 */
const fakeIndexedDb = (initial: Record<string, string>) => {
  const values = new Map(Object.entries(initial));
  let commit!: () => void;
  const committed = new Promise<void>((resolve) => (commit = resolve));
  let started!: (value: string) => void;
  const writeStarted = new Promise<string>((resolve) => (started = resolve));
  const request = <T>(result: () => T) => {
    const made: { result?: T; onsuccess?: () => void } = {};
    return { made, settle: () => void (made.result = result()) };
  };
  const transaction = () => {
    const tx: { oncomplete?: () => void; onerror?: () => void; onabort?: () => void; objectStore: () => unknown } = {
      objectStore: () => ({
        get: (key: string) => {
          const read = request(() => values.get(key));
          queueMicrotask(() => (read.settle(), tx.oncomplete?.()));
          return read.made;
        },
        put: (value: string, key: string) => {
          const write = request(() => void values.set(key, value));
          started(value);
          void committed.then(() => (write.settle(), tx.oncomplete?.()));
          return write.made;
        },
        delete: (key: string) => {
          const write = request(() => void values.delete(key));
          void committed.then(() => (write.settle(), tx.oncomplete?.()));
          return write.made;
        },
      }),
    };
    return tx;
  };
  const open = () => {
    const opening: { result?: unknown; onsuccess?: () => void; onupgradeneeded?: () => void; onerror?: () => void } = {};
    queueMicrotask(() => {
      opening.result = { transaction, createObjectStore: () => undefined };
      opening.onsuccess?.();
    });
    return opening;
  };
  return { indexedDB: { open }, values, writeStarted, commitWrites: commit };
};

describe('the console’s session', () => {
  let service: http.Server;
  const presented: string[] = [];

  beforeAll(async () => {
    // The service's refresh route: r1 rotates to r2.
    service = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const { refresh_token: token } = JSON.parse(body || '{}') as { refresh_token?: string };
        presented.push(`${req.method} ${req.url} ${token}`);
        const ok = req.method === 'POST' && req.url === '/api/auth/refresh' && token === 'r1';
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ok ? { access_token: 'a2', refresh_token: 'r2', token_type: 'Bearer', expires_in: 900 } : { error: { code: 'UNAUTHORIZED', message: 'no' } }));
      });
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => service.close(() => resolve())));

  it('is signed in after a refresh only once the rotated refresh token is kept', async () => {
    const storage = fakeLocalStorage();
    storage.setItem('trading-console.refresh-token', 'r1');
    const idb = fakeIndexedDb({ 'refresh-token': 'r1' });
    const { port } = service.address() as AddressInfo;
    Object.assign(globalThis, { window: { location: { origin: `http://127.0.0.1:${port}` } }, localStorage: storage, indexedDB: idb.indexedDB });

    const url = pathToFileURL(path.resolve(import.meta.dirname, '../../client/console/src/session.ts')).href;
    const { session } = (await import(url)) as SessionModule;
    expect(session.state()).toBe('restoring');

    const restored = session.restore();
    // The service rotated r1 to r2, and the console is writing r2 where the next load reads it.
    expect(await idb.writeStarted).toBe('r2');
    expect(presented).toEqual(['POST /api/auth/refresh r1']);
    expect(session.state()).toBe('restoring');
    expect(idb.values.get('refresh-token')).toBe('r1');

    idb.commitWrites();
    await restored;
    expect(idb.values.get('refresh-token')).toBe('r2');
    expect(session.state()).toBe('signed_in');
  });
});
