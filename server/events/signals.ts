// Signals between instances: a NOTIFY sent in the caller's transaction, so it goes out only if
// that transaction commits, and is never stored. A signal is a hint that lets a waiter on any
// instance look again at once at a change that has no event of its own; nothing depends on its
// arrival (the waiter keeps its own bound), so one lost while a LISTEN connection was down costs
// only time. Unlike the outbox's events it reaches no client: only this process's listeners hear
// it. A NOTIFY in a transaction holds a database-wide lock through its commit, so signals are for
// rare changes (an order whose outcome is unknown), never for every commit.
import { notify, type DatabaseHandle, type Queryable } from '../db/client.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';

export interface Signal {
  /** What changed, as the sender and its listeners agree on it. */
  topic: string;
  userId: number;
  /** Which of the user's things changed (an order's client order id). */
  key: string;
}

const CHANNEL = 'ts_signals';

/** Sends a signal in `tx`: every instance hears it once `tx` commits, none if it rolls back. */
export const sendSignal = (tx: Queryable, signal: Signal): Promise<void> => notify(tx, CHANNEL, JSON.stringify(signal));

const signalOf = (payload: string): Signal | undefined => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { topic, userId, key } = parsed as Record<string, unknown>;
  return typeof topic === 'string' && typeof userId === 'number' && typeof key === 'string' ? { topic, userId, key } : undefined;
};

/** Listens for the signals of every instance; `on` adds a listener in this process. */
export const listenForSignals = async (database: DatabaseHandle, log: Logger) => {
  const listeners = createListeners<[Signal]>((error) => log.error({ err: error }, 'signal listener failed'));
  const unlisten = await database.listen(CHANNEL, (payload) => {
    const signal = signalOf(payload);
    if (signal) listeners.publish(signal);
  });
  return {
    on: (listener: (signal: Signal) => void) => listeners.add(listener),
    close: async () => {
      await unlisten();
      listeners.clear();
    },
  };
};
