// A bus subscription as an async iterable, for the subscription procedures: subscribed (and
// backfilled) before the first value is asked for, bounded, and ended by the caller's signal.
import type { BusEvent, EventBus, TEventChannel } from './bus.ts';

/** Events queued for a consumer that has not taken them yet; beyond this it is too slow. */
export const MAX_QUEUED_EVENTS = 1_000;

/** The reader fell more than MAX_QUEUED_EVENTS behind: its transport closes it (1013 on WebSockets). */
export class SlowConsumerError extends Error {
  override readonly name = 'SlowConsumerError';
}

/** What a stream yields: a durable event (with its outbox id) or a passing frame (a tick). */
export interface StreamItem {
  id: number | undefined;
  frame: Record<string, unknown>;
}

export interface EventStream extends AsyncIterable<StreamItem> {
  /** Adds a frame that is not in the outbox (a tick) to the stream, under the same bound. */
  inject(frame: Record<string, unknown>): void;
  /** Ends the subscription (also done when the signal aborts or the iteration stops). */
  close(): void;
}

export const openEventStream = async (
  bus: EventBus,
  { userId, channel, afterId, signal }: { userId: number; channel: TEventChannel; afterId?: number | undefined; signal?: AbortSignal | undefined },
): Promise<EventStream> => {
  const queue: StreamItem[] = [];
  let overflowed = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const enqueue = (item: StreamItem) => {
    if (queue.length >= MAX_QUEUED_EVENTS) overflowed = true;
    else queue.push(item);
    nudge();
  };
  const unsubscribe = await bus.subscribe({
    userId,
    channel,
    afterId,
    listener: (event: BusEvent) => enqueue({ id: event.id, frame: event.frame }),
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    signal?.removeEventListener('abort', close);
    nudge();
  };
  if (signal?.aborted) close();
  else signal?.addEventListener('abort', close);

  return {
    inject: (frame) => {
      if (!closed) enqueue({ id: undefined, frame });
    },
    close,
    async *[Symbol.asyncIterator]() {
      try {
        while (!closed) {
          // Memory never grows without bound: a consumer this far behind is dropped.
          if (overflowed) throw new SlowConsumerError(`more than ${MAX_QUEUED_EVENTS} events waited for the reader`);
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        close();
      }
    },
  };
};
