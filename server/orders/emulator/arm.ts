// What an emulated order's trigger starts as (DESIGN §6 "Advanced orders"), from the order and the
// broker's price now: a trailing stop's first stop and mark from its trail; a stop's or a
// stop-limit's own stop, refused as a broker refuses one that would trigger at once. The
// placement arms a trigger with it, and a replace arms it again. Pure.
import type { Decimal } from 'decimal.js';
import { validateOco } from '../../brokers/matching.ts';
import { refuseTriggeredStop } from '../../brokers/simulator/books.ts';
import { BrokerRejectedError } from '../../brokers/types.ts';
import type { InstrumentRow, OrderRow, OrderTriggerRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import { nextClose } from '../../markets/calendar.ts';
import { firstStopOf, TRAIL_PERCENT, TRAIL_PRICE } from '../trailing.ts';

/** A trail as the order's metadata keeps it (a number), as decimal text; null when absent. */
const decimalText = (value: unknown): string | null => (typeof value === 'number' || typeof value === 'string' ? String(value) : null);

/** The trigger's fields an arming sets (the rest are the order's identity). */
export type TArmed = Pick<OrderTriggerRow, 'orderType' | 'stopPrice' | 'hwm' | 'limitPrice' | 'trailPercent' | 'trailPrice'>;

/** When an emulated order armed at `at` ends: a day order at its session's close (the exchange calendar, as the simulator's); else never. */
export const expiryOf = ({ assetClass, timeInForce }: Pick<OrderRow, 'assetClass' | 'timeInForce'>, at: Date): Date | null =>
  timeInForce === 'day' ? nextClose({ assetClass, at }) : null;

/** Whether the emulator holds orders of this type. */
export const isTriggerType = (orderType: OrderRow['orderType']): orderType is OrderTriggerRow['orderType'] =>
  orderType === 'trailing_stop' || orderType === 'stop' || orderType === 'stop_limit' || orderType === 'limit';

/**
 * The trigger an order arms at `price` (the broker's price now). A trailing stop's stop is set from
 * its `mark` (a replace keeps the mark it reached), else from the price. Throws
 * BrokerRejectedError for a trigger no broker would hold: a trail without its size or leaving no
 * stop above 0, a stop that would trigger at once, a stop-limit without its limit.
 */
export const armOf = (
  order: Pick<OrderRow, 'orderType' | 'side' | 'stopPrice' | 'limitPrice' | 'metadata'>,
  price: Decimal,
  instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'>,
  mark: Decimal = price,
): TArmed => {
  const { orderType, side } = order;
  if (!isTriggerType(orderType)) throw new BrokerRejectedError(`the order emulator holds no ${orderType} orders`);
  if (orderType === 'trailing_stop') {
    const trailPercent = decimalText(order.metadata[TRAIL_PERCENT]);
    const trailPrice = trailPercent === null ? decimalText(order.metadata[TRAIL_PRICE]) : null;
    if (trailPercent === null && trailPrice === null) throw new BrokerRejectedError('an emulated trailing_stop needs trail_percent or trail_price');
    const stop = firstStopOf({ side, price: mark, trail: trailPercent !== null ? { percent: trailPercent } : { price: trailPrice! }, instrument });
    if (stop.lte(0)) throw new BrokerRejectedError(`the trail leaves no stop above 0 below the price ${mark.toFixed()}`);
    // From a mark the price has left, a stop may already be reached.
    refuseTriggeredStop(side, stop, price);
    return { orderType, stopPrice: stop.toFixed(), hwm: mark.toFixed(), limitPrice: null, trailPercent, trailPrice };
  }
  // An OCO's take-profit (its own, or a bracket's exit): it fires when a trade reaches its limit,
  // which is its trigger's stop; no refusal for a limit already reached (it sells there at once).
  if (orderType === 'limit') {
    if (order.limitPrice === null) throw new BrokerRejectedError('a take-profit needs its limit price');
    return { orderType, stopPrice: order.limitPrice, hwm: null, limitPrice: order.limitPrice, trailPercent: null, trailPrice: null };
  }
  if (order.stopPrice === null) throw new BrokerRejectedError(`a ${orderType} order needs a stop price`);
  if (orderType === 'stop_limit' && order.limitPrice === null) throw new BrokerRejectedError('a stop_limit order needs a limit price');
  refuseTriggeredStop(side, new ExactDecimal(order.stopPrice), price);
  return { orderType, stopPrice: order.stopPrice, hwm: null, limitPrice: orderType === 'stop_limit' ? order.limitPrice : null, trailPercent: null, trailPrice: null };
};

/** An emulated OCO's two legs as armed: its take-profit (the order itself) and its stop leg (`<id>:sl`). */
export interface TArmedOco {
  takeProfit: TArmed;
  stopLeg: TArmed & { orderType: Exclude<OrderTriggerRow['orderType'], 'limit'> };
}

/**
 * The two triggers an emulated OCO arms at `price` (DESIGN §6: a sell limit, the take-profit, and
 * its stop leg below it: a stop, a stop-limit with `stop_loss_limit`, or a trail). The take-profit
 * fires when the price reaches its limit and sends a limit there; the stop leg is armed as its own
 * type is. Throws BrokerRejectedError where a broker holding the OCO would refuse it.
 */
export const armOcoOf = (
  order: Pick<OrderRow, 'side' | 'limitPrice' | 'bracket'>,
  price: Decimal,
  instrument: Pick<InstrumentRow, 'assetClass' | 'tickRule' | 'tickSize'>,
): TArmedOco => {
  const bracket = order.bracket;
  const decimalOrNull = (value: number | null | undefined) => (value == null ? null : new ExactDecimal(value));
  const refusal = validateOco({
    side: order.side,
    limitPrice: order.limitPrice === null ? null : new ExactDecimal(order.limitPrice),
    price,
    bracket: {
      takeProfit: decimalOrNull(bracket?.take_profit),
      stopLoss: decimalOrNull(bracket?.stop_loss),
      stopLossLimit: decimalOrNull(bracket?.stop_loss_limit),
      trail: bracket?.trail_percent != null ? { percent: new ExactDecimal(bracket.trail_percent) } : bracket?.trail_price != null ? { price: new ExactDecimal(bracket.trail_price) } : undefined,
    },
  });
  if (refusal || !bracket || order.limitPrice === null) throw new BrokerRejectedError(refusal ?? 'an oco is a sell limit (the take-profit) with a stop leg');
  const takeProfit: TArmed = { orderType: 'limit', stopPrice: order.limitPrice, limitPrice: order.limitPrice, hwm: null, trailPercent: null, trailPrice: null };
  const trail = bracket.trail_percent != null ? { [TRAIL_PERCENT]: bracket.trail_percent } : bracket.trail_price != null ? { [TRAIL_PRICE]: bracket.trail_price } : null;
  const stopType = trail ? 'trailing_stop' : bracket.stop_loss_limit != null ? 'stop_limit' : 'stop';
  const stopLeg = armOf(
    { orderType: stopType, side: order.side, stopPrice: bracket.stop_loss == null ? null : String(bracket.stop_loss), limitPrice: bracket.stop_loss_limit == null ? null : String(bracket.stop_loss_limit), metadata: trail ?? {} },
    price,
    instrument,
  );
  return { takeProfit, stopLeg: { ...stopLeg, orderType: stopType } };
};
