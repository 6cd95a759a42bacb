// What the order emulator's working orders hold of an account (DESIGN §6: buying power reserves
// working buys, and what a sell may use is held less what working sells hold). The broker's own
// figures net only the orders it holds; an emulated order waiting for its trigger is not one of
// them, so the risk gate adds these to the broker's snapshot: each as the broker order it stands
// for (a stop, a stop-limit as a stop with its limit in metadata, a trailing stop at its current
// stop, a take-profit as a limit), an OCO's legs and a bracket's exits grouped as one pair.
import type { Decimal } from 'decimal.js';
import { reservedCash } from '../../brokers/funds.ts';
import type { BrokerOrder } from '../../brokers/types.ts';
import type { Queryable } from '../../db/client.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { OrderAttempt } from '../attempt.ts';
import { workingOrderOf } from '../risk/exposure.ts';
import { workingEmulatedOrders } from './trigger-queries.ts';

/** The account's working emulated orders of a symbol, as broker orders the risk rules read. */
export const emulatedWorkingOrders = async (db: Queryable, { userId, assetClass, mode }: Pick<OrderAttempt, 'userId' | 'assetClass' | 'mode'>, symbol: string): Promise<BrokerOrder[]> =>
  (await workingEmulatedOrders(db, { userId, assetClass, live: mode === 'live', symbol })).map(({ order, parentBrokerOrderId }) => ({
    brokerOrderId: order.brokerOrderId!,
    clientOrderId: order.clientOrderId,
    assetClass: order.assetClass,
    mode,
    symbol: order.symbol,
    side: order.side,
    // A broker reads a stop-limit and a trailing stop as stops (types.ts).
    orderType: order.orderType === 'stop_limit' || order.orderType === 'trailing_stop' ? 'stop' : order.orderType,
    timeInForce: order.timeInForce,
    qty: order.qty,
    filledQty: order.filledQty,
    avgFillPrice: order.avgFillPrice,
    limitPrice: order.orderType === 'stop_limit' ? null : order.limitPrice,
    stopPrice: order.stopPrice,
    status: 'open',
    // A leg's group is its OCO's or its entry's (an OCO's own take-profit heads its group).
    parentId: parentBrokerOrderId,
    metadata: order.orderType === 'stop_limit' ? { ...order.metadata, stop_limit_price: order.limitPrice } : order.metadata,
    submittedAt: order.submittedAt,
    updatedAt: order.updatedAt,
  }));

/** The buying power left once the emulated buys' reserves are taken from the broker's. */
export const buyingPowerBesides = (assetClass: OrderAttempt['assetClass'], buyingPower: string, emulated: readonly BrokerOrder[]): Decimal =>
  new ExactDecimal(buyingPower).minus(reservedCash(assetClass, emulated.map(workingOrderOf)));
