// Order calls first (server/brokers/limits/order-calls.ts): the waiter queue both request limiters
// use, the exchange host's pacer and the adapters' order methods serve a placement, a cancel or a
// replace before the reads waiting for the same budget, and the reads among themselves in turn.
import { describe, expect, it } from 'vitest';
import { ordersFirstPacer } from '../../server/brokers/ccxt/host-pacing.ts';
import { asOrderCall, isOrderCall, ordersFirst } from '../../server/brokers/limits/order-calls.ts';
import { createWaiterQueue } from '../../server/brokers/limits/waiters.ts';
import type { Broker } from '../../server/brokers/types.ts';

describe('the waiter queue', () => {
  it('admits the order calls waiting before the reads, each kind in its order', async () => {
    const queue = createWaiterQueue();
    const admitted: string[] = [];
    const waitAs = (name: string, order: boolean) => {
      const turn = order ? asOrderCall(() => queue.wait()) : queue.wait();
      return turn.then(() => void admitted.push(name));
    };
    const turns = [waitAs('read-1', false), waitAs('read-2', false), waitAs('order-1', true), waitAs('read-3', false), waitAs('order-2', true)];
    expect(queue.length).toBe(5);
    for (let i = 0; i < 5; i += 1) queue.admitFirst();
    await Promise.all(turns);
    expect(admitted).toEqual(['order-1', 'order-2', 'read-1', 'read-2', 'read-3']);
  });
});

describe('the host pacer', () => {
  it('hands ccxt’s throttler one request at a time, the order calls waiting first, with their costs', async () => {
    const handed: (number | undefined)[] = [];
    let letThrough: (() => void) | undefined;
    const throttler = {
      throttle: (cost?: number) => {
        handed.push(cost);
        return new Promise<void>((resolve) => (letThrough = resolve));
      },
    };
    const pacer = ordersFirstPacer(throttler);
    const through: string[] = [];
    const ask = (name: string, cost: number, order: boolean) => (order ? asOrderCall(() => pacer.throttle(cost)) : pacer.throttle(cost)).then(() => void through.push(name));
    const asked = [ask('read-1', 20, false), ask('read-2', 20, false), ask('order-1', 1, true), ask('read-3', 4, false), ask('order-2', 1, true)];
    // The first read was handed on before the rest came; the others wait in front of the throttler.
    expect(handed).toEqual([20]);
    const release = async () => {
      letThrough!();
      await new Promise((resolve) => setImmediate(resolve));
    };
    for (let i = 0; i < 5; i += 1) await release();
    await Promise.all(asked);
    expect(through).toEqual(['read-1', 'order-1', 'order-2', 'read-2', 'read-3']);
    expect(handed).toEqual([20, 1, 1, 20, 4]);
  });

  it('passes a refusal of the throttler to its caller and goes on with the next', async () => {
    let calls = 0;
    const pacer = ordersFirstPacer({ throttle: () => (++calls === 1 ? Promise.reject(new Error('closed')) : Promise.resolve()) });
    await expect(pacer.throttle(1)).rejects.toThrow('closed');
    await expect(pacer.throttle(1)).resolves.toBeUndefined();
  });
});

describe('an adapter’s order methods', () => {
  it('run as order calls; its reads do not, and its other members read as before', async () => {
    const seen: Record<string, boolean> = {};
    const order = { brokerOrderId: 'b-1' } as Awaited<ReturnType<Broker['placeOrder']>>;
    /** Answers after an await, so that the context is read where an adapter's request would wait. */
    const answer = async <T>(name: string, value: T): Promise<T> => {
      await Promise.resolve();
      seen[name] = isOrderCall();
      return value;
    };
    const adapter = {
      name: 'fake',
      placeOrder: () => answer('placeOrder', order),
      cancelOrder: () => answer('cancelOrder', order),
      replaceOrder: () => answer('replaceOrder', order),
      account: () => answer('account', { cash: '1' }),
    } as unknown as Broker;
    const broker = ordersFirst(adapter);
    await broker.placeOrder({ clientOrderId: 'c', symbol: 'X', side: 'buy', qty: '1', orderType: 'market', timeInForce: 'day' });
    await broker.cancelOrder({ brokerOrderId: 'b-1' });
    await broker.replaceOrder({ brokerOrderId: 'b-1', clientOrderId: 'c', qty: '2' });
    await broker.account();
    expect(seen).toEqual({ placeOrder: true, cancelOrder: true, replaceOrder: true, account: false });
    expect(broker.name).toBe('fake');
    expect(isOrderCall()).toBe(false);
  });
});
