// A feed as an async iterable, for the subscription procedures: started (subscribed and
// backfilled) before the first value is asked for, bounded, and stopped by the caller's signal
// or when the iteration ends.
import type { StopFeed } from './feeds.ts';

/** Frames queued for a consumer that has not taken them yet; beyond this it is too slow. */
export const MAX_QUEUED_FRAMES = 1_000;

/** The reader fell more than MAX_QUEUED_FRAMES behind: the subscription ends with this error. */
export class SlowConsumerError extends Error {
  override readonly name = 'SlowConsumerError';
}

export async function* feedIterable<TFrame>(start: (send: (frame: TFrame) => void) => Promise<StopFeed>, signal?: AbortSignal): AsyncGenerator<TFrame> {
  const queue: TFrame[] = [];
  let overflowed = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const stop = await start((frame) => {
    if (queue.length >= MAX_QUEUED_FRAMES) overflowed = true;
    else queue.push(frame);
    nudge();
  });
  signal?.addEventListener('abort', nudge);
  try {
    while (!signal?.aborted) {
      // Memory never grows without bound: a consumer this far behind is dropped.
      if (overflowed) throw new SlowConsumerError(`more than ${MAX_QUEUED_FRAMES} frames waited for the reader`);
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal?.removeEventListener('abort', nudge);
    stop();
  }
}
