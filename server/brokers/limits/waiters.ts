// The callers waiting for a request token, first come, first served, order calls before reads
// (order-calls.ts): the queue both request limiters (the in-process one and the one over the
// shared budget in Postgres) hand tokens to. A caller whose signal aborts leaves the queue and is
// refused; close refuses the rest.
import { BrokerUnavailableError } from '../types.ts';
import { isOrderCall } from './order-calls.ts';

/** Why a limiter refuses a caller: it is closing (the service stops) or the caller gave up. */
export const limiterClosed = () => new BrokerUnavailableError('the request limiter of this key is closed (the service is stopping)', { notTaken: true });
export const waitAbandoned = () => new BrokerUnavailableError('the request was abandoned while waiting for the rate limit', { notTaken: true });

/** The refusal a caller gets before it queues, if any: a closed limiter or an aborted signal. */
export const refusalBeforeQueueing = (closed: boolean, signal?: AbortSignal): Error | undefined =>
  closed ? limiterClosed() : signal?.aborted ? waitAbandoned() : undefined;

interface Waiter {
  admit: () => void;
  refuse: (error: Error) => void;
  urgent: boolean;
}

export const createWaiterQueue = () => {
  const queue: Waiter[] = [];
  /** Queues an order call behind the order calls already waiting, ahead of every read; a read last. */
  const enqueue = (waiter: Waiter) => {
    const firstRead = waiter.urgent ? queue.findIndex((queued) => !queued.urgent) : -1;
    if (firstRead < 0) queue.push(waiter);
    else queue.splice(firstRead, 0, waiter);
  };
  return {
    /** Settles when this caller is admitted (resolves) or refused (rejects). */
    wait: (signal?: AbortSignal): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          reject(waitAbandoned());
        };
        const waiter: Waiter = {
          admit: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          refuse: (error) => {
            signal?.removeEventListener('abort', onAbort);
            reject(error);
          },
          urgent: isOrderCall(),
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        enqueue(waiter);
      }),
    get length() {
      return queue.length;
    },
    /** Lets the longest-waiting caller send its request. */
    admitFirst: () => queue.shift()?.admit(),
    /** Refuses every caller waiting now. */
    refuseAll: (error: () => Error) => {
      for (const waiter of queue.splice(0)) waiter.refuse(error());
    },
  };
};

export type WaiterQueue = ReturnType<typeof createWaiterQueue>;
