// What an order would cost if it filled at the price the ticket names, by the same fill arithmetic
// and fee profile as the simulator's fills (brokers/fills.ts, brokers/fees.ts): no rate is read
// or rounded here, so the estimate and the fill cannot drift apart.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import { defaultProfileFor, type TFeeProfileName } from '../brokers/fees.ts';
import { computeFill, type TOrderSide } from '../brokers/fills.ts';
import type { TOrderType } from './risk.ts';

export interface EstimateInput {
  assetClass: TAssetClass;
  side: TOrderSide;
  qty: Decimal;
  orderType: TOrderType;
  limitPrice: Decimal | undefined;
  stopPrice: Decimal | undefined;
  lastPrice: Decimal;
  /** The account's buying power now; undefined where it is not known (a live account). */
  buyingPower: Decimal | undefined;
}

export interface OrderEstimate {
  /** The price the estimate is taken at (referencePriceOf). */
  referencePrice: Decimal;
  notional: Decimal;
  commission: Decimal;
  tax: Decimal;
  fee: Decimal;
  /** The change of cash: a buy's −(notional + fee), a sell's notional − fee. */
  cashEffect: Decimal;
  /** buyingPower + cashEffect: below zero the buy would be refused for funds. */
  buyingPowerAfter: Decimal | undefined;
  feeProfile: TFeeProfileName;
}

/**
 * The price an order is expected at: the limit it will not pass (a limit or stop-limit), the stop
 * it triggers at (a stop), else the last price (a market order). The limit of a stop-limit wins
 * over its stop because it bounds what the order can cost once triggered.
 */
export const referencePriceOf = ({ orderType, limitPrice, stopPrice, lastPrice }: Pick<EstimateInput, 'orderType' | 'limitPrice' | 'stopPrice' | 'lastPrice'>): Decimal => {
  if ((orderType === 'limit' || orderType === 'stop_limit') && limitPrice) return limitPrice;
  if (orderType === 'stop' && stopPrice) return stopPrice;
  return lastPrice;
};

/**
 * The estimate of a fill of the whole quantity at the reference price. The price is given, so the
 * profile's slippage and the tick grid do not move it (as funds.ts' costAt prices a reserve): a
 * ticket's estimate is qty × price plus fees, and the fill may differ by the slippage.
 */
export const estimateOrder = (input: EstimateInput): OrderEstimate => {
  const referencePrice = referencePriceOf(input);
  const profile = defaultProfileFor(input.assetClass);
  const fill = computeFill({ side: input.side, qty: input.qty, referencePrice, tickSize: referencePrice, profile }, referencePrice);
  return {
    referencePrice,
    notional: fill.notional,
    commission: fill.commission,
    tax: fill.tax,
    fee: fill.fee,
    cashEffect: fill.cashDelta,
    buyingPowerAfter: input.buyingPower?.plus(fill.cashDelta),
    feeProfile: profile.name,
  };
};
