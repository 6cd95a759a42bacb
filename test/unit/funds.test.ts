// The rules of funds.ts: what working buys hold of the cash (at which price, with which fee),
// and what working sells hold of a position (an OCO pair once).
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { buyingPowerOf, inWorkingSells, RESERVE_PRICE_KEY, reservedCash, reservePriceOf, sellableOf, type WorkingOrder } from '../../server/brokers/funds.ts';

let ids = 0;
const working = (fields: Partial<WorkingOrder> & Pick<WorkingOrder, 'side' | 'qty'>): WorkingOrder => ({
  id: `o${++ids}`,
  symbol: 'AAA',
  orderType: 'limit',
  filledQty: '0',
  limitPrice: null,
  stopPrice: null,
  parentId: null,
  metadata: {},
  ...fields,
});

describe('reserve price of a working buy', () => {
  it('is the limit, a stop-limit limit, a stop, a market order its checked price, else the fallback', () => {
    expect(reservePriceOf(working({ side: 'buy', qty: '1', limitPrice: '10' }))?.toFixed()).toBe('10');
    expect(reservePriceOf(working({ side: 'buy', qty: '1', orderType: 'stop', stopPrice: '12', metadata: { stop_limit_price: 12.5 } }))?.toFixed()).toBe('12.5');
    expect(reservePriceOf(working({ side: 'buy', qty: '1', orderType: 'stop', stopPrice: '12' }))?.toFixed()).toBe('12');
    expect(reservePriceOf(working({ side: 'buy', qty: '1', orderType: 'market', metadata: { [RESERVE_PRICE_KEY]: '11.01' } }))?.toFixed()).toBe('11.01');
    expect(reservePriceOf(working({ side: 'buy', qty: '1', orderType: 'market' }), new Decimal(9))?.toFixed()).toBe('9');
  });
});

describe('buying power', () => {
  it('is the cash less the remaining qty of working buys at their price plus the fee; sells hold none', () => {
    const orders = [
      working({ side: 'buy', qty: '10', filledQty: '4', limitPrice: '100' }),
      working({ side: 'buy', qty: '2', orderType: 'market', metadata: { [RESERVE_PRICE_KEY]: '50.03' } }),
      working({ side: 'sell', qty: '5', limitPrice: '200' }),
    ];
    // crypto's 0.1 % fee: 600 + 0.6, 100.06 + 0.10006.
    expect(reservedCash('crypto', orders).toFixed()).toBe('700.76006');
    expect(buyingPowerOf('crypto', '1000', orders).toFixed()).toBe('299.23994');
    expect(buyingPowerOf('crypto', '500', orders).toFixed()).toBe('0');
  });

  it('rounds the fee as fills do: whole won for KRW', () => {
    // 3 × 70,100 = 210,300; 0.015 % of it is 31.545, cut to 31 won.
    expect(reservedCash('kr_equity', [working({ side: 'buy', qty: '3', limitPrice: '70100' })]).toFixed()).toBe('210331');
  });
});

describe('quantity available to sell', () => {
  it("counts the two children of one bracket once, and never goes below zero", () => {
    const orders = [
      working({ side: 'sell', qty: '100', limitPrice: '110', parentId: 'entry' }),
      working({ side: 'sell', qty: '100', orderType: 'stop', stopPrice: '90', parentId: 'entry' }),
      working({ side: 'sell', qty: '30', limitPrice: '120' }),
      working({ side: 'sell', qty: '7', limitPrice: '120', symbol: 'BBB' }),
    ];
    expect(inWorkingSells(orders, 'AAA').toFixed()).toBe('130');
    const sellable = sellableOf('150', orders, 'AAA');
    expect([sellable.held, sellable.inWorkingSells, sellable.available].map((value) => value.toFixed())).toEqual(['150', '130', '20']);
    expect(sellableOf('100', orders, 'AAA').available.toFixed()).toBe('0');
    // A pair known by its sibling ids, and the order being replaced left out.
    const pair = [working({ id: 'tp', side: 'sell', qty: '5', ocoSiblingId: 'sl' }), working({ id: 'sl', side: 'sell', qty: '5', ocoSiblingId: 'tp' })];
    expect(inWorkingSells(pair, 'AAA').toFixed()).toBe('5');
    expect(inWorkingSells(orders, 'AAA', orders[2]!.id).toFixed()).toBe('100');
  });
});
