// A native OCO at an exchange that has one (DESIGN §6 "Advanced orders": the broker's own type
// where it is equivalent). ccxt has no unified OCO; Binance spot's is its order list endpoint
// `POST /api/v3/orderList/oco`, which ccxt exposes as the implicit `privatePostOrderListOco`
// (signed like every private call). Our oco (a sell limit at the take-profit and the bracket's
// stop leg) is Binance's sell list: a LIMIT_MAKER above the price and a STOP_LOSS (or a
// STOP_LOSS_LIMIT with stop_loss_limit) below it. The limit leg carries our client order id (our
// order row follows it); the stop leg `<ours>:sl`, named as a bracket's stop child, which the
// service reads back and records as the limit leg's child when its first event comes. Binance
// expires the other leg when one fills, and cancels both when either is canceled. Pure apart
// from the types.
import { bracketChildClientOrderId } from '../../../contracts/orders.ts';
import { BrokerRejectedError, BrokerUnavailableError, NO_ORDER_CLASSES, type BrokerOrderRequest, type TBrokerOrderClass } from '../types.ts';
import { toCcxtOrder, type CcxtMarketView } from './mapping.ts';

/**
 * The ccxt exchange ids whose OCO the adapter places, by id: ccxt's `has` names no OCO capability,
 * and each exchange's list endpoint has its own parameters. Binance.US (its API differs) is left out untested.
 */
const OCO_EXCHANGES: ReadonlySet<string> = new Set(['binance']);
const OCO_CLASSES: ReadonlySet<TBrokerOrderClass> = new Set(['oco']);

export const ccxtNativeOrderClassesOf = (exchangeId: string): ReadonlySet<TBrokerOrderClass> => (OCO_EXCHANGES.has(exchangeId) ? OCO_CLASSES : NO_ORDER_CLASSES);

/** The implicit ccxt method that places a Binance spot order list (typed in ccxt's abstract/binance.d.ts, not on Exchange). */
export interface BinanceOrderListApi {
  privatePostOrderListOco(params: Record<string, string>): Promise<unknown>;
}

/** Our client order id of an OCO's stop leg: the bracket stop child's name (`x:sl`). */
export const ocoStopLegClientOrderId = (limitClientOrderId: string) => bracketChildClientOrderId(limitClientOrderId, 'stop_loss');

/** The limit leg's client order id of a stop leg named by ocoStopLegClientOrderId, else undefined. */
export const ocoLimitLegClientOrderId = (stopClientOrderId: string): string | undefined => {
  const suffix = ocoStopLegClientOrderId('');
  return stopClientOrderId.endsWith(suffix) && stopClientOrderId.length > suffix.length ? stopClientOrderId.slice(0, -suffix.length) : undefined;
};

/**
 * Binance's orderList/oco parameters for our oco: the quantity and prices put on the market's
 * steps as a single order's are (toCcxtOrder: the sell's prices rounded up), the exchange's forms
 * of the legs' client ids. Refused: a buy (ours protect a held position), an ioc/fok (the legs rest).
 */
export const toBinanceOcoParams = (request: BrokerOrderRequest, market: CcxtMarketView, tickSizeMode: boolean, exchangeIds: { limit: string; stop: string }): Record<string, string> => {
  const stopLoss = request.bracket?.stopLoss;
  if (request.side !== 'sell' || request.orderType !== 'limit' || request.limitPrice == null || stopLoss == null) {
    throw new BrokerRejectedError('an oco here is a sell limit (the take-profit) with a bracket stop_loss');
  }
  if (request.timeInForce === 'ioc' || request.timeInForce === 'fok') throw new BrokerRejectedError(`an oco's legs rest until one fills: time_in_force ${request.timeInForce} is not taken`);
  const single = { ...request, bracket: null };
  const limit = toCcxtOrder(single, market, tickSizeMode, exchangeIds.limit);
  const stop = toCcxtOrder(
    { ...single, orderType: 'stop', limitPrice: null, stopPrice: stopLoss, metadata: request.bracket?.stopLossLimit == null ? {} : { stop_limit_price: request.bracket.stopLossLimit } },
    market,
    tickSizeMode,
    exchangeIds.stop,
  );
  return {
    symbol: market.id,
    side: 'SELL',
    quantity: limit.amount,
    aboveType: 'LIMIT_MAKER',
    abovePrice: limit.price!,
    aboveClientOrderId: exchangeIds.limit,
    ...(stop.price === undefined ? { belowType: 'STOP_LOSS' } : { belowType: 'STOP_LOSS_LIMIT', belowPrice: stop.price, belowTimeInForce: 'GTC' }),
    belowStopPrice: stop.triggerPrice!,
    belowClientOrderId: exchangeIds.stop,
  };
};

/** One order's report in an order list's answer (Binance's FULL response), as ccxt's parseOrder reads it. */
export type BinanceOrderReport = Record<string, unknown> & { orderId?: number | string; clientOrderId?: string };

/**
 * The list's id and the reports of its two legs, by the client ids they were sent with. An answer
 * without either leaves the outcome unknown (the list may stand at the exchange): unavailable, not
 * a refusal, so the reconciler looks the order up by its client id.
 */
export const ocoLegsOf = (answer: unknown, exchangeIds: { limit: string; stop: string }): { orderListId: string; limit: BinanceOrderReport; stop: BinanceOrderReport } => {
  const list = (answer ?? {}) as { orderListId?: number | string; orderReports?: BinanceOrderReport[] };
  const reports = Array.isArray(list.orderReports) ? list.orderReports : [];
  const limit = reports.find((report) => report.clientOrderId === exchangeIds.limit);
  const stop = reports.find((report) => report.clientOrderId === exchangeIds.stop);
  if (!limit || !stop) throw new BrokerUnavailableError('the exchange answered the oco without both of its orders');
  return { orderListId: String(list.orderListId ?? ''), limit, stop };
};
