// The change feed: every instance LISTENs on one channel, and a write that changes state other
// instances cache (a user's status, the halt switch) publishes a change in its transaction, so
// each instance drops its copy at once. After the listening connection comes back, a `resync`
// change tells every cache to reload: notifications sent while it was down are gone.
import type { DatabaseHandle, Queryable } from '../db/client.ts';
import { notify } from '../db/client.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';

export type Change = { kind: 'user'; id: number } | { kind: 'halt' } | { kind: 'live_suspend' } | { kind: 'sim_outage' } | { kind: 'broker_keys'; userId: number } | { kind: 'instruments' } | { kind: 'resync' };
type Handler = (change: Change) => void | Promise<void>;

export interface ChangeFeed {
  /** Publishes on commit of the given transaction (or at once outside one). */
  publish(db: Queryable, change: Exclude<Change, { kind: 'resync' }>): Promise<void>;
  subscribe(handler: Handler): () => void;
  close(): Promise<void>;
}

const CHANNEL = 'ts_changes';

export const startChangeFeed = async (database: DatabaseHandle, logger: Logger): Promise<ChangeFeed> => {
  // One handler that fails (or rejects) must not keep the change from the others.
  const handlers = createListeners<[Change]>((error, change) => logger.error({ err: error, change }, 'change handler failed'));
  const deliver = (change: Change) => handlers.publish(change);
  let connections = 0;
  const unlisten = await database.listen(
    CHANNEL,
    (payload) => {
      let change: Change;
      try {
        change = JSON.parse(payload) as Change;
      } catch {
        logger.warn('ignoring malformed change notification');
        return;
      }
      deliver(change);
    },
    () => {
      // The first connection comes before any cache has loaded; every later one is a reconnect.
      if (++connections === 1) return;
      logger.warn({ channel: CHANNEL }, 'change feed reconnected: reloading caches');
      deliver({ kind: 'resync' });
    },
  );
  return {
    publish: (db, change) => notify(db, CHANNEL, JSON.stringify(change)),
    subscribe: (handler) => handlers.add(handler),
    close: () => unlisten(),
  };
};
