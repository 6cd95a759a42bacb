// What an order would cost if it filled at the price the ticket names, by the same fill arithmetic
// and fee profile as the simulator's fills (brokers/fills.ts, brokers/fees.ts): no rate is read
// or rounded here, so the estimate and the fill cannot drift apart.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import { defaultProfileFor, type TFeeProfileName } from '../brokers/fees.ts';
import { computeFill, type TOrderSide } from '../brokers/fills.ts';
import { expectedPriceOf } from '../brokers/funds.ts';

export interface EstimateInput {
  assetClass: TAssetClass;
  side: TOrderSide;
  qty: Decimal;
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
 * The price an order is expected at, as a working buy reserves it (funds.ts' expectedPriceOf):
 * the limit (a limit, a stop-limit), else the stop (a stop), else the last price (a market
 * order). The request's schema admits only the prices of its order type.
 */
export const referencePriceOf = ({ limitPrice, stopPrice, lastPrice }: Pick<EstimateInput, 'limitPrice' | 'stopPrice' | 'lastPrice'>): Decimal =>
  expectedPriceOf(limitPrice, stopPrice, lastPrice) ?? lastPrice;

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
