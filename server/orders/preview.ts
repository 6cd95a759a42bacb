// The ticket's preview: what placing an order would cost, answered without placing anything. It
// reads what the placement reads (the instrument, the broker's last price, the account's buying
// power) and prices the order with the fills' own arithmetic (order-estimate.ts). Nothing is
// written, no gate counts it, and no order or intent is made.
import type { TOrderPreview, TPlaceOrderRequest } from '../../contracts/orders.ts';
import { checkLot } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { viaBrokerRead, type BrokerOfAccount } from './broker-calls.ts';
import { estimateOrder } from './order-estimate.ts';
import { firstStopOf, trailRequestOf } from './trailing.ts';

export interface PreviewDeps {
  instruments: Pick<Instruments, 'resolve'>;
  forUser: BrokerOfAccount;
}

const decimalOrUndefined = (value: number | undefined) => (value === undefined ? undefined : new ExactDecimal(value));

export const createPreview = ({ instruments, forUser }: PreviewDeps) => {
  /**
   * The estimate of one order request. Refuses as the placement would before any gate: a lot the
   * instrument does not trade (422 VALIDATION_ERROR), no key (403 BROKER_NOT_CONFIGURED), an
   * unregistered symbol (422 BROKER_REJECTED, the broker's refusal of the order).
   */
  const preview = async ({ user, request }: { user: { id: number }; request: TPlaceOrderRequest }): Promise<TOrderPreview> => {
    const assetClass = request.asset_class;
    const mode = request.live_mode ? 'live' : 'paper';
    const instrument = await instruments.resolve({ symbol: request.symbol, assetClass });
    const qty = new ExactDecimal(request.qty);
    if (instrument) {
      const lot = checkLot(qty, new ExactDecimal(instrument.lotSize), instrument.fractional);
      if (lot) throw new AppError('VALIDATION_ERROR', `qty: ${lot}`, { errors: [{ path: 'qty', message: lot }] });
    }
    const broker = await forUser({ userId: user.id, assetClass, mode });
    if (!instrument) throw new AppError('BROKER_REJECTED', `The broker refused the order: unknown symbol ${request.symbol}`);
    // A live broker's buying power is its own figure (margin, settlement, its holds), and reading
    // the account at every keystroke would spend the broker's request budget: only paper answers it.
    const [lastPrice, account] = await Promise.all([
      viaBrokerRead(() => broker.quote(instrument.symbol)),
      mode === 'paper' ? viaBrokerRead(() => broker.account()) : Promise.resolve(undefined),
    ]);
    const last = new ExactDecimal(lastPrice);
    // A trailing stop is priced as the stop its trail would start at now.
    const trail = trailRequestOf(request);
    const estimate = estimateOrder({
      assetClass,
      side: request.side,
      qty,
      limitPrice: decimalOrUndefined(request.limit_price),
      stopPrice: trail ? firstStopOf({ side: request.side, price: last, trail, instrument }) : decimalOrUndefined(request.stop_price),
      lastPrice: last,
      buyingPower: account && new ExactDecimal(account.buyingPower),
    });
    return {
      asset_class: assetClass,
      symbol: instrument.symbol,
      side: request.side,
      qty: qty.toNumber(),
      order_type: request.order_type,
      mode,
      currency: account?.currency ?? instrument.currency,
      last_price: Number(lastPrice),
      reference_price: estimate.referencePrice.toNumber(),
      notional: estimate.notional.toNumber(),
      commission: estimate.commission.toNumber(),
      tax: estimate.tax.toNumber(),
      fee: estimate.fee.toNumber(),
      cash_effect: estimate.cashEffect.toNumber(),
      buying_power_before: account ? Number(account.buyingPower) : null,
      buying_power_after: estimate.buyingPowerAfter?.toNumber() ?? null,
      fee_profile: estimate.feeProfile,
    };
  };

  return { preview };
};
