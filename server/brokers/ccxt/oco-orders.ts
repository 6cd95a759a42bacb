// An OCO at an exchange that holds one as its own order list (Binance: oco.ts maps the request
// and the answer): its placement, and how its stop leg reads as its limit leg's child, both when
// one order is read back (the service's intake records a leg it did not place as a child) and in
// the open orders (the risk rules count a pair's hold once).
import type { Exchange, Order } from 'ccxt';
import type { BrokerOrder, BrokerOrderRequest } from '../types.ts';
import { type ClientOrderIdRule, type CcxtClientIdStore, toExchangeClientOrderId } from './client-ids.ts';
import { ccxtBrokerOrderId, marketsOf, orderListIdOf, type CcxtMarketView } from './mapping.ts';
import { ocoLegsOf, ocoLimitLegClientOrderId, ocoStopLegClientOrderId, toBinanceOcoParams, type BinanceOrderListApi } from './oco.ts';
import type { CcxtPlacedOrders } from './poller.ts';

/** An OCO's stop leg as its limit leg's child, among orders read with their list ids. */
export const withOcoParents = (read: readonly { order: BrokerOrder; list: string | undefined }[]): BrokerOrder[] =>
  read.map(({ order, list }) => {
    const limitClientOrderId = ocoLimitLegClientOrderId(order.clientOrderId);
    const limit = list === undefined || limitClientOrderId === undefined ? undefined : read.find((other) => other.list === list && other.order.clientOrderId === limitClientOrderId);
    return limit ? { ...order, parentId: limit.order.brokerOrderId } : order;
  });

/** What the adapter lends: its calls, its markets, its reading of orders, its client ids. */
export interface CcxtOcoDeps {
  use: <T>(what: string, run: (exchange: Exchange) => Promise<T>) => Promise<T>;
  start: () => Promise<{ exchange: Exchange }>;
  marketOf: (symbol: string) => Promise<CcxtMarketView>;
  tickSizeMode: () => Promise<boolean>;
  toOrder: (order: Order, market: CcxtMarketView, known?: string) => Promise<BrokerOrder>;
  idRule: ClientOrderIdRule;
  clientIds: CcxtClientIdStore;
  /** The symbols whose orders the poller reads. */
  watched: Set<string>;
  placed: CcxtPlacedOrders;
}

export const createCcxtOcoOrders = ({ use, start, marketOf, tickSizeMode, toOrder, idRule, clientIds, watched, placed }: CcxtOcoDeps) => {
  /** OCO stop legs' broker order ids and their limit legs' (this adapter's last thousand placements; others are looked up). */
  const ocoParents = new Map<string, string>();
  const rememberOcoParent = (stopBrokerOrderId: string, limitBrokerOrderId: string) => {
    ocoParents.set(stopBrokerOrderId, limitBrokerOrderId);
    if (ocoParents.size > 1_000) ocoParents.delete(ocoParents.keys().next().value!);
  };
  /**
   * The limit leg (a bracket child's parent) of an OCO's stop leg, by the client id it was named
   * with: the service records the stop leg as the limit leg's child.
   */
  const ocoParentOf = async (exchangeOrder: Order, read: BrokerOrder, market: CcxtMarketView): Promise<string | null> => {
    const limitClientOrderId = ocoLimitLegClientOrderId(read.clientOrderId);
    if (orderListIdOf(exchangeOrder) === undefined || limitClientOrderId === undefined) return null;
    const known = ocoParents.get(read.brokerOrderId);
    if (known) return known;
    const limit = await use('read the oco limit leg', (exchange) => exchange.fetchOrder('', market.symbol, { clientOrderId: toExchangeClientOrderId(limitClientOrderId, idRule) })).catch(() => undefined);
    return limit?.id ? ccxtBrokerOrderId(market.id, limit.id) : null;
  };


  /**
   * Our oco as the exchange's own order list (oco.ts): the limit leg is answered (it carries our
   * client order id and metadata.order_class `oco`), the stop leg comes as its child by events.
   */
  const placeOco = async (request: BrokerOrderRequest): Promise<BrokerOrder> => {
    const market = await marketOf(request.symbol);
    const stopClientOrderId = ocoStopLegClientOrderId(request.clientOrderId);
    const exchangeIds = { limit: toExchangeClientOrderId(request.clientOrderId, idRule), stop: toExchangeClientOrderId(stopClientOrderId, idRule) };
    const params = toBinanceOcoParams(request, market, await tickSizeMode(), exchangeIds);
    watched.add(market.symbol);
    if (exchangeIds.limit !== request.clientOrderId) clientIds.put(exchangeIds.limit, request.clientOrderId);
    if (exchangeIds.stop !== stopClientOrderId) clientIds.put(exchangeIds.stop, stopClientOrderId);
    const answer = await use('place the oco', (exchange) => (exchange as unknown as BinanceOrderListApi).privatePostOrderListOco(params));
    const { exchange } = await start();
    const legs = ocoLegsOf(answer, exchangeIds);
    const ccxtMarket = marketsOf(exchange)[market.symbol];
    const limit = await toOrder(exchange.parseOrder(legs.limit, ccxtMarket), market, request.clientOrderId);
    const stop = await toOrder(exchange.parseOrder(legs.stop, ccxtMarket), market, stopClientOrderId);
    rememberOcoParent(stop.brokerOrderId, limit.brokerOrderId);
    placed.add(limit);
    placed.add({ ...stop, parentId: limit.brokerOrderId });
    return {
      ...limit,
      clientOrderId: request.clientOrderId,
      status: 'accepted',
      filledQty: '0',
      avgFillPrice: null,
      orderType: 'limit',
      timeInForce: request.timeInForce,
      metadata: { ...request.metadata, ...limit.metadata, order_class: 'oco', exchange_order_list_id: legs.orderListId },
    };
  };


  return { placeOco, ocoParentOf };
};
