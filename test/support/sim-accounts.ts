// A simulated account for the simulator's tests: a fresh user's broker with its event stream
// recorded, and a wait for an event that matches. Streams end when the file's tests do.
import { afterAll } from 'vitest';
import type { TBrokerEvent, TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Simulator } from '../../server/brokers/simulator/index.ts';
import type { Broker, BrokerOrderRequest } from '../../server/brokers/types.ts';
import { newUser } from './factories.ts';
import type { TestServer } from './server.ts';
import { waitFor } from './wait.ts';

export interface SimAccount {
  userId: number;
  broker: Broker;
  events: TBrokerEvent[];
  /** Waits until the account's stream has delivered an event that matches. */
  seen(match: Partial<TBrokerEvent>): Promise<TBrokerEvent>;
}

const streams: AbortController[] = [];
afterAll(() => streams.forEach((controller) => controller.abort()));

const matches = (event: TBrokerEvent, match: Partial<TBrokerEvent>) => Object.entries(match).every(([field, value]) => event[field as keyof TBrokerEvent] === value);

export const openSimAccount = async ({ server, on, assetClass = 'crypto', mode = 'paper', prefix = 'sim' }: { server: TestServer; on: Simulator; assetClass?: TAssetClass; mode?: TTradingMode; prefix?: string }): Promise<SimAccount> => {
  const { user } = await newUser(server, { prefix });
  const broker = on.brokerFor({ userId: user.id, assetClass, mode });
  const events: TBrokerEvent[] = [];
  const controller = new AbortController();
  streams.push(controller);
  const stream = broker.events(controller.signal);
  void (async () => {
    for await (const event of stream) events.push(event);
  })();
  return {
    userId: user.id,
    broker,
    events,
    seen: async (match) => (await waitFor(() => Promise.resolve(events.find((event) => matches(event, match))), (found) => found !== undefined))!,
  };
};

/** An order with a client id unique in the process: market, gtc, unless the fields say otherwise. */
let orderCount = 0;
export const simOrder = (fields: Partial<BrokerOrderRequest> & Pick<BrokerOrderRequest, 'symbol' | 'side' | 'qty'>): BrokerOrderRequest => ({
  clientOrderId: `sim-order-${process.pid}-${++orderCount}`,
  orderType: 'market',
  timeInForce: 'gtc',
  ...fields,
});
