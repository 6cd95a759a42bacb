// The order ids a real broker cannot keep for us, read back from our orders table, where every
// accepted order carries its client and broker order ids: a crypto exchange's digest form of our
// client order id (ccxt), and KIS's order, which takes no client id at all; an emulated order's
// child, which has no order row, through its trigger's row. The adapters get these
// stores from the composition root (OrderLinkStores in brokers/real/adapters.ts), so the brokers
// area never reads the order service's tables. Each store first asks what this process placed (in
// memory, for the moments between the broker's answer and our record of it), so a link is found
// after a restart and by the instance that holds the account's events lease.
import type { TTradingMode } from '../../contracts/brokers.ts';
import { createMemoryClientIdStore, toExchangeClientOrderId, type CcxtClientIdStore, type ClientOrderIdRule } from '../brokers/ccxt/index.ts';
import { createMemoryLinkStore, type KisOrderLink, type KisOrderLinkStore } from '../brokers/kis/index.ts';
import type { OrderLinkStores } from '../brokers/real/adapters.ts';
import type { Db } from '../db/client.ts';
import type { OrderRow, OrderTriggerRow } from '../db/schema/index.ts';
import { findOrderByBrokerId, findOrderByClientId } from './queries.ts';
import { triggerOfChild, triggerOfChildBrokerId } from './emulator/trigger-queries.ts';

/** One crypto account's client order ids behind the digest forms its exchange was sent. */
export const createCcxtClientIdStore = ({ db, userId, mode, rule }: { db: Db; userId: number; mode: TTradingMode; rule: ClientOrderIdRule }): CcxtClientIdStore => {
  const recent = createMemoryClientIdStore();
  return {
    put: (exchangeClientOrderId, ours) => recent.put(exchangeClientOrderId, ours),
    find: async (exchangeClientOrderId, brokerOrderId) => {
      const placed = await recent.find(exchangeClientOrderId, brokerOrderId);
      if (placed !== undefined) return placed;
      const row = await findOrderByBrokerId(db, { userId, assetClass: 'crypto', mode, brokerOrderId });
      // The row's id must be the one the exchange was sent (the order is the one we placed).
      if (row) return toExchangeClientOrderId(row.clientOrderId, rule) === exchangeClientOrderId ? row.clientOrderId : undefined;
      // An emulated order's child has no row of its own: its trigger knows it.
      const child = (await triggerOfChildBrokerId(db, { userId, childBrokerOrderId: brokerOrderId }))?.childClientOrderId;
      return child && toExchangeClientOrderId(child, rule) === exchangeClientOrderId ? child : undefined;
    },
  };
};

const linkOf = (row: OrderRow | undefined): KisOrderLink | undefined =>
  row?.brokerOrderId && row.assetClass === 'kr_equity'
    ? // The org number is read from the order's own row at KIS when a cancel needs it.
      { clientOrderId: row.clientOrderId, brokerOrderId: row.brokerOrderId, orgNo: '', metadata: row.metadata }
    : undefined;

/** An emulated order's child at KIS, as its trigger row links it (the child has no order row). */
const childLinkOf = (trigger: OrderTriggerRow | undefined): KisOrderLink | undefined =>
  trigger?.childClientOrderId && trigger.childBrokerOrderId && trigger.assetClass === 'kr_equity'
    ? { clientOrderId: trigger.childClientOrderId, brokerOrderId: trigger.childBrokerOrderId, orgNo: '', metadata: {} }
    : undefined;

/** One KIS account's order links: its orders', and its emulated orders' children's. */
export const createKisLinkStore = ({ db, userId, mode }: { db: Db; userId: number; mode: TTradingMode }): KisOrderLinkStore => {
  const recent = createMemoryLinkStore();
  return {
    put: (link) => recent.put(link),
    byClientOrderId: async (clientOrderId) =>
      (await recent.byClientOrderId(clientOrderId)) ?? linkOf(await findOrderByClientId(db, { userId, clientOrderId })) ?? childLinkOf(await triggerOfChild(db, { userId, childClientOrderId: clientOrderId })),
    byBrokerOrderId: async (brokerOrderId) =>
      (await recent.byBrokerOrderId(brokerOrderId)) ??
      linkOf(await findOrderByBrokerId(db, { userId, assetClass: 'kr_equity', mode, brokerOrderId })) ??
      childLinkOf(await triggerOfChildBrokerId(db, { userId, childBrokerOrderId: brokerOrderId })),
  };
};

/** The stores the real adapters are built with. */
export const orderLinkStores = (db: Db): OrderLinkStores => ({
  kis: ({ userId, mode }) => createKisLinkStore({ db, userId, mode }),
  ccxt: ({ userId, mode, rule }) => createCcxtClientIdStore({ db, userId, mode, rule }),
});
