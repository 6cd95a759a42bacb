// The ccxt adapter's native OCO, its pure parts: which exchanges hold one, Binance's orderList/oco
// parameters for our oco (prices on the market's tick toward the safe side, the quantity on its
// step, the legs' client ids), what is refused before any call, the stop leg's name and its limit
// leg's, and the legs read from the exchange's answer.
import { describe, expect, it } from 'vitest';
import { ccxtNativeOrderClassesOf, ocoLegsOf, ocoLimitLegClientOrderId, ocoStopLegClientOrderId, toBinanceOcoParams } from '../../server/brokers/ccxt/oco.ts';
import type { CcxtMarketView } from '../../server/brokers/ccxt/mapping.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerOrderRequest } from '../../server/brokers/types.ts';

const BTC: CcxtMarketView = { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', precision: { amount: 0.00001, price: 0.01 } };
const ids = { limit: 'x-1', stop: 'x-1:sl' };
const oco = (over: Partial<BrokerOrderRequest> = {}): BrokerOrderRequest => ({
  clientOrderId: 'x-1',
  symbol: 'BTC/USDT',
  side: 'sell',
  qty: '0.123456',
  orderType: 'limit',
  timeInForce: 'gtc',
  limitPrice: '55000.001',
  bracket: { takeProfit: null, stopLoss: '48000.004', stopLossLimit: null },
  orderClass: 'oco',
  ...over,
});

describe('a native OCO through ccxt', () => {
  it('is held natively by Binance only (decided by exchange id: ccxt names no OCO capability)', () => {
    expect([...ccxtNativeOrderClassesOf('binance')]).toEqual(['oco']);
    for (const other of ['binanceus', 'kraken', 'okx']) expect(ccxtNativeOrderClassesOf(other).size).toBe(0);
  });

  it('sends a sell list: LIMIT_MAKER above (our id), STOP_LOSS below (<id>:sl), the sell prices rounded up to the tick, the quantity down to the step', () => {
    expect(toBinanceOcoParams(oco(), BTC, true, ids)).toEqual({
      symbol: 'BTCUSDT',
      side: 'SELL',
      quantity: '0.12345',
      aboveType: 'LIMIT_MAKER',
      abovePrice: '55000.01',
      aboveClientOrderId: 'x-1',
      belowType: 'STOP_LOSS',
      belowStopPrice: '48000.01',
      belowClientOrderId: 'x-1:sl',
    });
  });

  it('makes the stop leg a STOP_LOSS_LIMIT (GTC) with a stop_loss_limit', () => {
    const params = toBinanceOcoParams(oco({ bracket: { takeProfit: null, stopLoss: '48000', stopLossLimit: '47900' } }), BTC, true, ids);
    expect(params).toMatchObject({ belowType: 'STOP_LOSS_LIMIT', belowStopPrice: '48000', belowPrice: '47900', belowTimeInForce: 'GTC' });
  });

  it('refuses before any call a buy, a missing stop leg or limit, and an ioc/fok', () => {
    for (const bad of [oco({ side: 'buy' }), oco({ bracket: null }), oco({ limitPrice: null }), oco({ orderType: 'market' }), oco({ timeInForce: 'ioc' }), oco({ timeInForce: 'fok' })]) {
      expect(() => toBinanceOcoParams(bad, BTC, true, ids)).toThrow(BrokerRejectedError);
    }
  });

  it('names the stop leg as a bracket stop child and finds its limit leg back from the name alone', () => {
    expect(ocoStopLegClientOrderId('x-1')).toBe('x-1:sl');
    expect(ocoLimitLegClientOrderId('x-1:sl')).toBe('x-1');
    for (const other of ['x-1', ':sl', 'x-1:tp']) expect(ocoLimitLegClientOrderId(other)).toBeUndefined();
  });

  it('reads both legs from the answer by the client ids sent; an answer without either leaves the outcome unknown (unavailable, not a refusal)', () => {
    const answer = { orderListId: 9, orderReports: [{ orderId: 2, clientOrderId: 'x-1:sl' }, { orderId: 3, clientOrderId: 'x-1' }] };
    expect(ocoLegsOf(answer, ids)).toEqual({ orderListId: '9', limit: { orderId: 3, clientOrderId: 'x-1' }, stop: { orderId: 2, clientOrderId: 'x-1:sl' } });
    expect(() => ocoLegsOf({ orderListId: 9, orderReports: [answer.orderReports[1]] }, ids)).toThrow(BrokerUnavailableError);
    expect(() => ocoLegsOf(undefined, ids)).toThrow(BrokerUnavailableError);
  });
});
