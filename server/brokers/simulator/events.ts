// The simulator's broker events, delivered in this process after their transaction commits: to
// the streams of one account (Broker.events) and to whole-simulator listeners. In-process on
// purpose for now: the order service (next issue) takes these in and persists them with its own
// rows, and cross-instance delivery arrives with the events issue (outbox + LISTEN/NOTIFY). An
// event therefore reaches only listeners in the instance whose transaction produced it.
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AccountKey } from './queries.ts';

type Listener = (event: TBrokerEvent) => void;

const keyOf = ({ userId, assetClass, mode }: AccountKey) => `${userId}:${assetClass}:${mode}`;

export interface EventHub {
  emit(events: readonly TBrokerEvent[]): void;
  /** The account's events from this call on, until the signal aborts. */
  stream(account: AccountKey, signal: AbortSignal): AsyncIterable<TBrokerEvent>;
  /** Every account's events; returns the unsubscribe function. */
  onEvent(listener: Listener): () => void;
}

export const createEventHub = (logger: Logger): EventHub => {
  const byAccount = new Map<string, Set<Listener>>();
  const everyone = new Set<Listener>();

  const call = (listener: Listener, event: TBrokerEvent) => {
    try {
      listener(event);
    } catch (error) {
      logger.error({ err: error, broker_order_id: event.broker_order_id }, 'broker event listener failed');
    }
  };

  const stream = (account: AccountKey, signal: AbortSignal): AsyncIterable<TBrokerEvent> => {
    // Subscribed now, not when iteration starts, so nothing between this call and the first
    // `next()` is missed. The buffer is unbounded: an account's events are few, and a reader
    // that stops reading aborts its signal.
    const queue: TBrokerEvent[] = [];
    let wake: (() => void) | undefined;
    const key = keyOf(account);
    const listener: Listener = (event) => {
      queue.push(event);
      wake?.();
    };
    const done = () => {
      const set = byAccount.get(key);
      set?.delete(listener);
      if (set?.size === 0) byAccount.delete(key);
      wake?.();
    };
    if (!signal.aborted) {
      let set = byAccount.get(key);
      if (!set) byAccount.set(key, (set = new Set()));
      set.add(listener);
      signal.addEventListener('abort', done, { once: true });
    }
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for (;;) {
            while (queue.length > 0) yield queue.shift()!;
            if (signal.aborted) return;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
          }
        } finally {
          signal.removeEventListener('abort', done);
          done();
        }
      },
    };
  };

  return {
    emit: (events) => {
      for (const event of events) {
        for (const listener of byAccount.get(keyOf({ userId: event.user_id, assetClass: event.asset_class, mode: event.mode })) ?? []) call(listener, event);
        for (const listener of everyone) call(listener, event);
      }
    },
    stream,
    onEvent: (listener) => {
      everyone.add(listener);
      return () => everyone.delete(listener);
    },
  };
};
