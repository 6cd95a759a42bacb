// An order's type and prices as one phrase, each word once: "market", "limit 2,000.00 USDT",
// "stop 80,000.00 USDT", "stop 80,000.00 USDT, limit 79,500.00 USDT" (a stop-limit names both),
// "trailing stop 80,000.00 USDT" (a trailing stop's current stop).
import type { TOrderResponse } from '@trading-service/client';
import { price, type InstrumentSteps } from './instrument.ts';

/** What the phrase needs of an order (TOrderResponse has it). */
export interface OrderPrices {
  readonly order_type: TOrderResponse['order_type'];
  readonly limit_price: number | null;
  readonly stop_price: number | null;
  readonly currency: string;
}

export const orderTerms = (order: OrderPrices, instrument?: InstrumentSteps): string => {
  const stop = order.order_type === 'trailing_stop' ? 'trailing stop' : 'stop';
  const prices = [
    order.stop_price === null ? undefined : `${stop} ${price(order.stop_price, order.currency, instrument)}`,
    order.limit_price === null ? undefined : `limit ${price(order.limit_price, order.currency, instrument)}`,
  ].filter((part) => part !== undefined);
  // The price words name the type; a market order (or one without its prices) says its type.
  return prices.length === 0 ? order.order_type.replace('_', ' ') : prices.join(', ');
};
