// The live feed's ticks follow what the user trades from the moment an order event names it, not
// only once the read of the user's holdings that the event starts has finished.
import { describe, expect, it } from 'vitest';
import type { BusEvent, EventBus, PriceTick } from '../../server/events/bus.ts';
import { createFeeds } from '../../server/events/feeds.ts';

/** A promise with its resolve, for reads that finish when the test says. */
const deferred = <T>() => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
};

/** An in-memory bus: what the feeds subscribe to, and a way to deliver events and ticks. */
const fakeBus = () => {
  const listeners = new Map<string, Set<(event: BusEvent) => void>>();
  const tickListeners = new Set<(tick: PriceTick) => void>();
  let nextId = 1;
  const bus: Pick<EventBus, 'subscribe' | 'onTick'> = {
    subscribe: ({ channel, listener }) => {
      const set = listeners.get(channel) ?? new Set();
      listeners.set(channel, set);
      set.add(listener);
      return Promise.resolve(() => set.delete(listener));
    },
    onTick: (listener) => {
      tickListeners.add(listener);
      return () => tickListeners.delete(listener);
    },
  };
  return {
    bus: bus as EventBus,
    deliver: (channel: 'orders' | 'live', frame: Record<string, unknown>) => {
      const event: BusEvent = { id: nextId++, userId: 7, channel, frame };
      for (const listener of listeners.get(channel) ?? []) listener(event);
    },
    tick: (symbol: string, price: string) => {
      for (const listener of tickListeners) listener({ assetClass: 'crypto', symbol, price, at: '2026-11-27T00:00:00.000Z' });
    },
  };
};

const orderEvent = (symbol: string, eventType: string) => ({ type: 'order_event', event_type: eventType, asset_class: 'crypto', symbol, client_order_id: 'c1' });

describe('the live feed of one user', () => {
  it('sends the ticks of an instrument an order event named while the read of its holdings is still under way, and after a stale read ends', async () => {
    const { bus, deliver, tick } = fakeBus();
    const reads: Array<ReturnType<typeof deferred<Set<string>>>> = [];
    const orders = {
      watchedSymbols: () => {
        const read = deferred<Set<string>>();
        reads.push(read);
        return read.promise;
      },
    };
    const feeds = createFeeds({ events: bus, keys: { assetClassesOf: () => Promise.resolve([]) }, orders });
    const sent: Array<Record<string, unknown>> = [];
    const started = feeds.live({ user: { id: 7 }, send: (frame) => sent.push(frame) });
    // The first read: nothing held yet.
    await Promise.resolve();
    reads[0]!.resolve(new Set());
    const stop = await started;

    // The order is accepted (a read starts), then fills while that read is under way.
    deliver('orders', orderEvent('BTC/USDT', 'accepted'));
    deliver('orders', orderEvent('BTC/USDT', 'filled'));
    deliver('live', { type: 'trade', symbol: 'BTC/USDT', asset_class: 'crypto' });
    tick('ETH/USDT', '3000');
    tick('BTC/USDT', '50001');
    expect(sent.filter((frame) => frame.type === 'tick').map((frame) => frame.symbol)).toEqual(['BTC/USDT']);

    // The read that began before the fill answers without it: the instrument stays followed.
    reads[1]!.resolve(new Set());
    await new Promise((resolve) => setImmediate(resolve));
    tick('BTC/USDT', '50002');
    expect(sent.filter((frame) => frame.type === 'tick').map((frame) => frame.last)).toEqual([50001, 50002]);

    // The read the fill asked for settles what is followed: here the user no longer holds it.
    expect(reads).toHaveLength(3);
    reads[2]!.resolve(new Set());
    await new Promise((resolve) => setImmediate(resolve));
    tick('BTC/USDT', '50003');
    expect(sent.filter((frame) => frame.type === 'tick').map((frame) => frame.last)).toEqual([50001, 50002]);
    stop();
  });
});
