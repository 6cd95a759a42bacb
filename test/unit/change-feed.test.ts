// The change feed delivers every change to every handler, whatever one handler does, and turns
// each reconnect of its LISTEN connection into a resync.
import { describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../server/db/client.ts';
import { startChangeFeed, type Change } from '../../server/events/changes.ts';
import { createLogger } from '../../server/observability/logger.ts';

/** A database whose LISTEN side the test drives by hand. */
const fakeDatabase = () => {
  let deliver: (payload: string) => void = () => undefined;
  let connect: () => void = () => undefined;
  const database = {
    listen: (_channel: string, onMessage: (payload: string) => void, onConnect?: () => void) => {
      deliver = onMessage;
      connect = onConnect ?? (() => undefined);
      connect();
      return Promise.resolve(() => Promise.resolve());
    },
  } as unknown as DatabaseHandle;
  return { database, notify: (change: unknown) => deliver(JSON.stringify(change)), send: (payload: string) => deliver(payload), reconnect: () => connect() };
};

const quiet = createLogger('silent');

describe('change feed', () => {
  it('a handler that throws or rejects does not keep a change from the others', async () => {
    const { database, notify } = fakeDatabase();
    const feed = await startChangeFeed(database, quiet);
    const seen: Change[] = [];
    feed.subscribe(() => {
      throw new Error('boom');
    });
    feed.subscribe(() => Promise.reject(new Error('async boom')));
    feed.subscribe((change) => {
      seen.push(change);
    });
    notify({ kind: 'user', id: 7 });
    notify({ kind: 'halt' });
    expect(seen).toEqual([{ kind: 'user', id: 7 }, { kind: 'halt' }]);
  });

  it('sends resync after every reconnect, not on the first connection, and ignores malformed payloads', async () => {
    const { database, send, reconnect } = fakeDatabase();
    const feed = await startChangeFeed(database, quiet);
    const seen: Change[] = [];
    feed.subscribe((change) => {
      seen.push(change);
    });
    expect(seen).toEqual([]);
    reconnect();
    reconnect();
    send('not json {');
    expect(seen).toEqual([{ kind: 'resync' }, { kind: 'resync' }]);
  });
});
