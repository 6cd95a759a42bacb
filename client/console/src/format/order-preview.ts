// The ticket's preview in words: what sending the ticket will do, in one sentence the trader reads
// before pressing the button ("Buy 0.01 BTC/USDT at market, about 500.50 USDT with fees; buying
// power 99,499.50 USDT after.").
import type { TOrderPreview } from '@trading-service/client';
import { price, quantity, type InstrumentSteps } from './instrument.ts';
import { money } from './money.ts';
import { orderTerms } from './order-terms.ts';

/** The prices the ticket names: the preview answers the estimate, the request its own prices. */
export interface TicketPrices {
  readonly limit_price?: number | undefined;
  readonly stop_price?: number | undefined;
}

/** What the order costs (a buy) or brings (a sell), fees included: the cash effect without its sign. */
export const estimatedAmount = (preview: Pick<TOrderPreview, 'cash_effect'>): number => Math.abs(preview.cash_effect);

/** The buying power clause: after the order, short of it, or the broker's own (a live account). */
const buyingPowerClause = (preview: TOrderPreview): string => {
  if (preview.buying_power_before === null || preview.buying_power_after === null) return ' (live: the broker’s buying power applies)';
  if (preview.buying_power_after < 0) return `; more than the buying power of ${money(preview.buying_power_before, preview.currency)}: it would be refused`;
  return `; buying power ${money(preview.buying_power_after, preview.currency)} after`;
};

export const confirmationText = (preview: TOrderPreview, prices: TicketPrices, instrument?: InstrumentSteps): string => {
  const side = preview.side === 'buy' ? 'Buy' : 'Sell';
  const terms = orderTerms({ order_type: preview.order_type, limit_price: prices.limit_price ?? null, stop_price: prices.stop_price ?? null, currency: preview.currency }, instrument);
  const fees = preview.side === 'buy' ? 'with fees' : 'after fees';
  return `${side} ${quantity(preview.qty, instrument)} ${preview.symbol} at ${terms}, about ${money(estimatedAmount(preview), preview.currency)} ${fees}${buyingPowerClause(preview)}.`;
};

/** The last price as the preview shows it, a newer tick's when one came. */
export const lastPriceText = (preview: Pick<TOrderPreview, 'last_price' | 'currency'>, tick: number | undefined, instrument?: InstrumentSteps): string =>
  price(tick ?? preview.last_price, preview.currency, instrument);
