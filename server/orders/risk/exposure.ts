// A position as the risk rules judge it, from the broker's snapshot of the account: the quantity
// held and the symbol's working orders. In real mode these are the broker's own figures (its
// buying power already nets its open orders); the rules never reserve anything a second time.
// The order emulator's untriggered orders, which no broker nets, are added by the risk gate
// (emulator/held.ts).
import type { BrokerOrder, BrokerSnapshot } from '../../brokers/types.ts';
import { costAt, reservePriceOf, remainingOf, type WorkingOrder } from '../../brokers/funds.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../../decimal.ts';
import type { RiskAttempt } from '../risk.ts';

/** A broker's order as funds.ts and sizing.ts read it. */
export const workingOrderOf = (order: BrokerOrder): WorkingOrder => ({
  id: order.brokerOrderId,
  symbol: order.symbol,
  side: order.side,
  orderType: order.orderType,
  qty: order.qty,
  filledQty: order.filledQty,
  limitPrice: order.limitPrice,
  stopPrice: order.stopPrice,
  parentId: order.parentId,
  bracket: order.bracket
    ? {
        stop_loss: order.bracket.stopLoss,
        ...(order.bracket.trail ? ('percent' in order.bracket.trail ? { trail_percent: order.bracket.trail.percent } : { trail_price: order.bracket.trail.price }) : {}),
      }
    : null,
  metadata: order.metadata,
});

/**
 * The RiskAttempt fields of a position (heldQty, position) from the snapshot. `except` names the
 * order a replace changes: its own hold on the position is released.
 */
export const positionOf = (snapshot: Pick<BrokerSnapshot, 'positions' | 'openOrders'>, symbol: string, except?: string): Pick<RiskAttempt, 'heldQty' | 'position'> => {
  const held = snapshot.positions.find((position) => position.symbol === symbol);
  return {
    heldQty: new ExactDecimal(held?.qty ?? 0),
    position: { symbol, working: snapshot.openOrders.filter((order) => order.symbol === symbol).map(workingOrderOf), except },
  };
};

/**
 * The buying power a replace of `order` is judged against: the account's, with the order's own
 * reservation given back (at the broker's price for it: a market buy at `price`).
 */
export const buyingPowerWithout = (assetClass: TAssetClass, buyingPower: string, order: BrokerOrder, price: Decimal): Decimal => {
  const working = workingOrderOf(order);
  const reserve = reservePriceOf(working, price);
  const remaining = remainingOf(working);
  if (order.side !== 'buy' || !reserve || remaining.lte(0)) return new ExactDecimal(buyingPower);
  return new ExactDecimal(buyingPower).plus(costAt(assetClass, remaining, reserve));
};
