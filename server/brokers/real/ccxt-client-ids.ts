// One crypto account's client order ids behind the digest forms its exchange was sent: the ones
// this process placed (in memory, for the moments between the exchange's answer and our record of
// it), and otherwise the orders table by broker order id, where every accepted order carries both
// ids. So an id is found after a restart and by the instance that holds the account's events lease.
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { Db } from '../../db/client.ts';
import { findOrderByBrokerId } from '../../orders/queries.ts';
import { createMemoryClientIdStore, toExchangeClientOrderId, type CcxtClientIdStore, type ClientOrderIdRule } from '../ccxt/index.ts';

export const createCcxtClientIdStore = ({ db, userId, mode, rule }: { db: Db; userId: number; mode: TTradingMode; rule: ClientOrderIdRule }): CcxtClientIdStore => {
  const recent = createMemoryClientIdStore();
  return {
    put: (exchangeClientOrderId, ours) => recent.put(exchangeClientOrderId, ours),
    find: async (exchangeClientOrderId, brokerOrderId) => {
      const placed = await recent.find(exchangeClientOrderId, brokerOrderId);
      if (placed !== undefined) return placed;
      const row = await findOrderByBrokerId(db, { userId, assetClass: 'crypto', mode, brokerOrderId });
      // The row's id must be the one the exchange was sent (the order is the one we placed).
      return row && toExchangeClientOrderId(row.clientOrderId, rule) === exchangeClientOrderId ? row.clientOrderId : undefined;
    },
  };
};
