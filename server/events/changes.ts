// The change feed: every instance LISTENs on one channel, and a write that changes state other
// instances cache (a user's status, the halt switch) publishes a change in its transaction,
// so each instance drops its copy at once (DESIGN §8).
import type { DatabaseHandle, Db, Tx } from '../db/client.ts';
import { notify } from '../db/client.ts';
import type { Logger } from '../observability/logger.ts';

export type Change = { kind: 'user'; id: number } | { kind: 'halt' };
type Handler = (change: Change) => void;

export interface ChangeFeed {
  /** Publishes on commit of the given transaction (or at once outside one). */
  publish(db: Db | Tx, change: Change): Promise<void>;
  subscribe(handler: Handler): () => void;
  close(): Promise<void>;
}

const CHANNEL = 'ts_changes';

export const startChangeFeed = async (database: DatabaseHandle, logger: Logger): Promise<ChangeFeed> => {
  const handlers = new Set<Handler>();
  const unlisten = await database.listen(CHANNEL, (payload) => {
    let change: Change;
    try {
      change = JSON.parse(payload) as Change;
    } catch {
      logger.warn({ payload }, 'ignoring malformed change notification');
      return;
    }
    for (const handler of handlers) handler(change);
  });
  return {
    publish: (db, change) => notify(db, CHANNEL, JSON.stringify(change)),
    subscribe: (handler) => {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    close: () => unlisten(),
  };
};
