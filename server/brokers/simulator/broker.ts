// One simulated account seen through the Broker interface: every call fails as a real broker's
// would while the operator holds its asset class down, and opens the account on first use.
import { ALL_ORDER_CLASSES, TRAILING_ORDER_TYPES, type Broker, type BrokerAccount, type BrokerOrder, type BrokerOrderRequest, type BrokerPosition, type BrokerReplaceRequest, type BrokerSnapshot, type OrderLookup, type TBrokerEvent } from '../types.ts';
import { BROKER_NAME } from './books.ts';
import type { AccountKey } from './queries.ts';

/** What the simulator does for an account; the adapter asks it to be ready (no outage, the account open) before each call. */
export interface AccountBackend {
  /** Fails while the account's asset class is down (operator outage); opens the account on first use. */
  ready(key: AccountKey): Promise<void>;
  place(key: AccountKey, request: BrokerOrderRequest): Promise<BrokerOrder>;
  cancel(key: AccountKey, brokerOrderId: string): Promise<BrokerOrder>;
  replace(key: AccountKey, request: BrokerReplaceRequest): Promise<BrokerOrder>;
  getOrder(key: AccountKey, lookup: OrderLookup): Promise<BrokerOrder | undefined>;
  listOpenOrders(key: AccountKey): Promise<BrokerOrder[]>;
  positions(key: AccountKey): Promise<BrokerPosition[]>;
  account(key: AccountKey): Promise<BrokerAccount>;
  snapshot(key: AccountKey): Promise<BrokerSnapshot>;
  quote(key: AccountKey, symbol: string): Promise<string>;
  stream(key: AccountKey, signal: AbortSignal): AsyncIterable<TBrokerEvent>;
}


export const createSimulatedBroker = (backend: AccountBackend, key: AccountKey): Broker => {
  const ready = () => backend.ready(key);
  return {
    name: BROKER_NAME,
    assetClass: key.assetClass,
    mode: key.mode,
    // The books hold every type natively, a trailing stop's mark and stop on its row.
    nativeOrderTypes: TRAILING_ORDER_TYPES,
    nativeOrderClasses: ALL_ORDER_CLASSES,
    nativeTrailingLegs: true,
    placeOrder: async (request) => {
      await ready();
      return backend.place(key, request);
    },
    cancelOrder: async ({ brokerOrderId }) => {
      await ready();
      return backend.cancel(key, brokerOrderId);
    },
    replaceOrder: async (request) => {
      await ready();
      return backend.replace(key, request);
    },
    getOrder: async (lookup) => {
      await ready();
      return backend.getOrder(key, lookup);
    },
    listOpenOrders: async () => {
      await ready();
      return backend.listOpenOrders(key);
    },
    positions: async () => {
      await ready();
      return backend.positions(key);
    },
    account: async () => {
      await ready();
      return backend.account(key);
    },
    snapshot: async () => {
      await ready();
      return backend.snapshot(key);
    },
    quote: async (symbol) => {
      await ready();
      return backend.quote(key, symbol);
    },
    // A subscription, not a call: it stays open through an outage (a down broker has nothing to say).
    events: (signal) => backend.stream(key, signal),
  };
};
