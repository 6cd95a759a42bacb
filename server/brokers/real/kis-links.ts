// One KIS account's order links for the service: the links this process made (in memory, for
// the moments between KIS's answer and our record of it), and otherwise the orders table, where
// every accepted order carries its client and broker order ids. So a link survives a restart and
// is seen by the instance that holds the account's events lease.
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { Db } from '../../db/client.ts';
import type { OrderRow } from '../../db/schema/index.ts';
import { findOrderByBrokerId, findOrderByClientId } from '../../orders/queries.ts';
import { createMemoryLinkStore, type KisOrderLink, type KisOrderLinkStore } from '../kis/index.ts';

const linkOf = (row: OrderRow | undefined): KisOrderLink | undefined =>
  row?.brokerOrderId && row.assetClass === 'kr_equity'
    ? // The org number is read from the order's own row at KIS when a cancel needs it.
      { clientOrderId: row.clientOrderId, brokerOrderId: row.brokerOrderId, orgNo: '', metadata: row.metadata }
    : undefined;

export const createKisLinkStore = ({ db, userId, mode }: { db: Db; userId: number; mode: TTradingMode }): KisOrderLinkStore => {
  const recent = createMemoryLinkStore();
  return {
    put: (link) => recent.put(link),
    byClientOrderId: async (clientOrderId) => (await recent.byClientOrderId(clientOrderId)) ?? linkOf(await findOrderByClientId(db, { userId, clientOrderId })),
    byBrokerOrderId: async (brokerOrderId) => (await recent.byBrokerOrderId(brokerOrderId)) ?? linkOf(await findOrderByBrokerId(db, { userId, assetClass: 'kr_equity', mode, brokerOrderId })),
  };
};
