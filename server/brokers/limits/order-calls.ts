// Order calls first: a placement, a cancel or a replace waits for a request token ahead of the
// reads queued for the same budget (an account's balance, a ticker, a list of orders). A broker's
// budget is a rate, so under a burst every caller waits; what waits should not be the exits. When
// a fall in price fires a hundred users' stops at once, each stop's market order must not queue
// behind the reads the same fall sets off (the kill switch's look at every account after its
// fills, say), or it reaches the broker seconds late. Which call is an order call is told once,
// around the adapter's order methods (`ordersFirst`); the limiters and the exchange's pacer read it
// from the call's async context, whatever the layers between.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Broker } from '../types.ts';

const orderCall = new AsyncLocalStorage<true>();

/** Runs `run` as an order call: every request token it waits for is served before the reads'. */
export const asOrderCall = <T>(run: () => Promise<T>): Promise<T> => orderCall.run(true, run);

/** Whether the caller is inside an order call. */
export const isOrderCall = (): boolean => orderCall.getStore() === true;

/** The broker with its order methods run as order calls (its reads as they were). */
export const ordersFirst = (broker: Broker): Broker => {
  const placeOrder = broker.placeOrder.bind(broker);
  const cancelOrder = broker.cancelOrder.bind(broker);
  const replaceOrder = broker.replaceOrder.bind(broker);
  // The adapter's own object keeps its other members (getters, optional methods) as they are.
  return Object.assign(Object.create(broker) as Broker, {
    placeOrder: (request: Parameters<Broker['placeOrder']>[0]) => asOrderCall(() => placeOrder(request)),
    cancelOrder: (lookup: Parameters<Broker['cancelOrder']>[0]) => asOrderCall(() => cancelOrder(lookup)),
    replaceOrder: (request: Parameters<Broker['replaceOrder']>[0]) => asOrderCall(() => replaceOrder(request)),
  });
};
