// The ticket preview's sentence (client/console/src/format/order-preview.ts): what sending the
// ticket will do, with the estimate in the account's currency and the buying power it leaves.
import { describe, expect, it } from 'vitest';
import { EXAMPLE_ORDER_PREVIEW } from '../../contracts/examples/orders.ts';
import type { TOrderPreview } from '../../contracts/orders.ts';
import type { InstrumentSteps } from '../../client/console/src/format/instrument.ts';
import { confirmationText, lastPriceText } from '../../client/console/src/format/order-preview.ts';

const btc: InstrumentSteps = { tick_rule: 'fixed', tick_size: 0.01, lot_size: 0.00001 };
const krx: InstrumentSteps = { tick_rule: 'krx_bands', tick_size: 100, lot_size: 1 };

/** The document's example: a market buy of 0.01 BTC at 50,000 USDT with 10,000 USDT of buying power. */
const marketBuy: TOrderPreview = EXAMPLE_ORDER_PREVIEW;

describe('the confirmation sentence', () => {
  it('says a market buy, its cost with fees and the buying power after', () => {
    expect(confirmationText(marketBuy, {}, btc)).toBe('Buy 0.01000 BTC/USDT at market, about 500.50 USDT with fees; buying power 9,499.50 USDT after.');
  });

  it('names a limit and says a sale brings its proceeds after fees, in whole won', () => {
    const sell: TOrderPreview = { ...marketBuy, asset_class: 'kr_equity', symbol: '005930', side: 'sell', qty: 10, order_type: 'limit', currency: 'KRW', cash_effect: 699493, buying_power_before: 1000000, buying_power_after: 1699493 };
    expect(confirmationText(sell, { limit_price: 70100 }, krx)).toBe('Sell 10 005930 at limit 70,100 KRW, about 699,493 KRW after fees; buying power 1,699,493 KRW after.');
  });

  it('says when the buy is more than the buying power, and leaves a live account’s to its broker', () => {
    expect(confirmationText({ ...marketBuy, buying_power_before: 400, buying_power_after: -100.5 }, {}, btc)).toBe(
      'Buy 0.01000 BTC/USDT at market, about 500.50 USDT with fees; more than the buying power of 400.00 USDT: it would be refused.',
    );
    expect(confirmationText({ ...marketBuy, mode: 'live', buying_power_before: null, buying_power_after: null }, {}, btc)).toBe(
      'Buy 0.01000 BTC/USDT at market, about 500.50 USDT with fees (live: the broker’s buying power applies).',
    );
  });

  it('shows the last price to the tick, a newer tick’s when one came', () => {
    expect(lastPriceText(marketBuy, undefined, btc)).toBe('50,000.00 USDT');
    expect(lastPriceText(marketBuy, 50012.5, btc)).toBe('50,012.50 USDT');
  });
});
