// A feed as an async iterable, for the subscription procedures: started (subscribed and
// backfilled) before the first value is asked for, bounded, and stopped by the caller's signal
// or when the iteration ends.
import type { StopFeed } from './feeds.ts';

/** The reader fell more than its bound of frames behind: the iteration ends with this error. */
export class SlowConsumerError extends Error {
  override readonly name = 'SlowConsumerError';
}

export interface FeedIterableOptions {
  /**
   * Frames that may wait for the reader beyond those the feed sent while it started (a backfill
   * of at most BACKFILL_LIMIT, a hello, what came while the backfill was read): a reader further
   * behind ends the iteration with SlowConsumerError.
   */
  maxQueued: number;
  signal?: AbortSignal | undefined;
}

export async function* feedIterable<TFrame>(start: (send: (frame: TFrame) => void) => Promise<StopFeed>, { maxQueued, signal }: FeedIterableOptions): AsyncGenerator<TFrame> {
  const queue: TFrame[] = [];
  // The frames of the start are held whole, however many: the feed bounds them, and a bound
  // below a full backfill would end every resume after a long absence, again at each retry.
  let starting = true;
  /** Frames of the start still queued: they do not count against the bound. */
  let backlog = 0;
  let overflowed = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const stop = await start((frame) => {
    if (!starting && queue.length - backlog >= maxQueued) overflowed = true;
    else queue.push(frame);
    nudge();
  });
  starting = false;
  backlog = queue.length;
  signal?.addEventListener('abort', nudge);
  try {
    while (!signal?.aborted) {
      // Memory never grows without bound: a consumer this far behind is dropped.
      if (overflowed) throw new SlowConsumerError(`more than ${maxQueued} frames waited for the reader`);
      if (queue.length > 0) {
        backlog = Math.max(0, backlog - 1);
        yield queue.shift()!;
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener('abort', nudge);
    stop();
  }
}
