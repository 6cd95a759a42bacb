// The console's number formatting (client/console/src/format/): exact decimal rounding, prices to
// the instrument's tick, quantities to its lot, amounts in the currency's minor units, signed
// percentages (never "-0.00 %") and P&L with an arrow.
import { describe, expect, it } from 'vitest';
import { decimalsOf, fixed, upTo } from '../../client/console/src/format/decimal.ts';
import { price, priceDecimals, quantity, type InstrumentSteps } from '../../client/console/src/format/instrument.ts';
import { currencyDecimals, money } from '../../client/console/src/format/money.ts';
import { orderTerms } from '../../client/console/src/format/order-terms.ts';
import { direction, percent, percentDirection, pnl, pnlPercent, share } from '../../client/console/src/format/percent.ts';

const M = '\u2212';
const fixedTick = (tick_size: number, lot_size = 1): InstrumentSteps => ({ tick_rule: 'fixed', tick_size, lot_size });
const krx: InstrumentSteps = { tick_rule: 'krx_bands', tick_size: 100, lot_size: 1 };

describe('exact decimal rounding', () => {
  it('rounds the decimal the API sent, half away from zero, without float drift', () => {
    expect(fixed(1.005, 2)).toBe('1.01');
    expect(fixed(2.675, 2)).toBe('2.68');
    expect(fixed(-1.005, 2)).toBe(`${M}1.01`);
    expect(fixed(0.1 + 0.2, 2)).toBe('0.30');
    expect(fixed(1.45, 1)).toBe('1.5');
    expect(fixed(11_956.42764019, 2)).toBe('11,956.43');
  });

  it('groups large values and reads exponent forms', () => {
    expect(fixed(1_234_567_890.125, 2)).toBe('1,234,567,890.13');
    expect(fixed(1e21, 0)).toBe('1,000,000,000,000,000,000,000');
    expect(fixed(1e-7, 8)).toBe('0.00000010');
    expect(fixed(999.995, 2)).toBe('1,000.00');
  });

  it('drops the minus of what rounds to zero', () => {
    expect(fixed(-0.001, 2)).toBe('0.00');
    expect(fixed(-0, 2)).toBe('0.00');
  });

  it('counts the decimals of a step', () => {
    expect([0.01, 0.5, 1, 0.00000001, 10, 0.25].map(decimalsOf)).toEqual([2, 1, 0, 8, 0, 2]);
  });

  it('keeps at most the decimals asked for, trailing zeros dropped', () => {
    expect(upTo(0.01, 8)).toBe('0.01');
    expect(upTo(1.123456789, 8)).toBe('1.12345679');
    expect(upTo(100, 8)).toBe('100');
  });

  it('refuses what is no finite number', () => {
    expect(() => fixed(Number.NaN, 2)).toThrow(RangeError);
  });
});

describe('prices by instrument', () => {
  it('follows the tick: 0.01, 0.5, 1 and 0.00000001', () => {
    expect(price(65_000.5, 'USDT', fixedTick(0.01))).toBe('65,000.50 USDT');
    expect(price(187.25, 'USD', fixedTick(0.5))).toBe('187.3 USD');
    expect(price(70_123.4, 'USDT', fixedTick(1))).toBe('70,123 USDT');
    expect(price(0.000012345, 'USDT', fixedTick(0.00000001))).toBe('0.00001235 USDT');
  });

  it('shows KRX band prices in whole won, whatever the tick at the reference price', () => {
    expect(priceDecimals(krx)).toBe(0);
    expect(price(71_500, 'KRW', krx)).toBe('71,500 KRW');
    expect(price(1_999.6, 'KRW', krx)).toBe('2,000 KRW');
  });

  it("takes the currency's minor units without an instrument, and a dash without a value", () => {
    expect(price(100_000.332648, 'USDT')).toBe('100,000.33 USDT');
    expect(price(null, 'USD')).toBe('– USD');
    expect(price(undefined, 'KRW', krx)).toBe('– KRW');
  });
});

describe('quantities by instrument', () => {
  it("follows the lot's decimals", () => {
    expect(quantity(0.01, fixedTick(0.01, 0.0001))).toBe('0.0100');
    expect(quantity(10, fixedTick(0.01, 1))).toBe('10');
    expect(quantity(12_345.5, fixedTick(0.01, 0.5))).toBe('12,345.5');
  });

  it('shows up to 8 decimals without an instrument, and a dash without a value', () => {
    expect(quantity(0.123456789)).toBe('0.12345679');
    expect(quantity(1_000)).toBe('1,000');
    expect(quantity(null)).toBe('–');
    expect(quantity(undefined)).toBe('–');
  });
});

describe('amounts in the account currency', () => {
  it('uses the minor units: USD and USDT 2, KRW 0', () => {
    expect([currencyDecimals('USD'), currencyDecimals('USDT'), currencyDecimals('KRW')]).toEqual([2, 2, 0]);
    expect(money(100_000.332648, 'USDT')).toBe('100,000.33 USDT');
    expect(money(11_956.42764019, 'USD')).toBe('11,956.43 USD');
    expect(money(10_000_000.4, 'KRW')).toBe('10,000,000 KRW');
    expect(money(-1_234.5, 'USD')).toBe(`${M}1,234.50 USD`);
  });

  it('shows a dash without a value', () => {
    expect(money(null, 'USD')).toBe('– USD');
    expect(money(undefined, 'KRW')).toBe('– KRW');
  });
});

describe('signed percentages', () => {
  it('always carries a sign', () => {
    expect(percent(0.0125)).toBe('+1.25 %');
    expect(percent(-0.004)).toBe(`${M}0.40 %`);
    expect(percent(1.5)).toBe('+150.00 %');
    expect(percent(123.456789)).toBe('+12,345.68 %');
  });

  it('shows 0.00 % for what rounds to zero, never -0.00 %', () => {
    expect(percent(-0.00001)).toBe('0.00 %');
    expect(percent(0.00004)).toBe('0.00 %');
    expect(percent(0)).toBe('0.00 %');
    expect(percent(-0)).toBe('0.00 %');
  });

  it('rounds the fraction exactly (no float multiplication)', () => {
    expect(percent(0.012345)).toBe('+1.23 %');
    expect(percent(0.0123451)).toBe('+1.23 %');
    expect(percent(0.00125)).toBe('+0.13 %');
  });

  it('shows a dash without a value', () => {
    expect(percent(null)).toBe('–');
    expect(percent(undefined)).toBe('–');
  });
});

describe('shares of a whole', () => {
  it('a win rate or a confidence has no sign', () => {
    expect(share(0.6)).toBe('60.00 %');
    expect(share(0)).toBe('0.00 %');
    expect(share(1)).toBe('100.00 %');
    expect(share(0.33335)).toBe('33.34 %');
    expect(share(null)).toBe('–');
  });
});

describe('P&L without colour', () => {
  it('has a sign and an arrow', () => {
    expect(pnl(12.5, 'USDT')).toBe('▲ +12.50 USDT');
    expect(pnl(-3, 'USD')).toBe(`▼ ${M}3.00 USD`);
    expect(pnl(-1_500.4, 'KRW')).toBe(`▼ ${M}1,500 KRW`);
    expect(pnl(-0.001, 'USD')).toBe('0.00 USD');
    expect(pnl(null, 'USD')).toBe('– USD');
  });

  it('names the direction its colour follows, as rounded to the currency', () => {
    expect([direction(1, 'USD'), direction(-1, 'USD'), direction(-0.004, 'USD'), direction(0.4, 'KRW')]).toEqual(['gain', 'loss', 'flat', 'flat']);
  });

  it('puts the arrow beside a P&L percentage too, none on what rounds to zero', () => {
    expect(pnlPercent(0.0125)).toBe('▲ +1.25 %');
    expect(pnlPercent(-0.175)).toBe(`▼ ${M}17.50 %`);
    expect(pnlPercent(-0.00001)).toBe('0.00 %');
    expect([percentDirection(0.01), percentDirection(-0.01), percentDirection(-0.00001)]).toEqual(['gain', 'loss', 'flat']);
  });
});

describe('order terms', () => {
  const order = { currency: 'USDT', limit_price: null, stop_price: null } as const;

  it('says the type once, with its prices', () => {
    expect(orderTerms({ ...order, order_type: 'market' })).toBe('market');
    expect(orderTerms({ ...order, order_type: 'limit', limit_price: 2_000 })).toBe('limit 2,000.00 USDT');
    expect(orderTerms({ ...order, order_type: 'stop', stop_price: 80_000 })).toBe('stop 80,000.00 USDT');
    expect(orderTerms({ ...order, order_type: 'stop_limit', stop_price: 80_000, limit_price: 79_500.5 })).toBe('stop 80,000.00 USDT, limit 79,500.50 USDT');
    // A trailing stop names its current stop as a trailing one; before its broker sets it, its type.
    expect(orderTerms({ ...order, order_type: 'trailing_stop', stop_price: 49_980 })).toBe('trailing stop 49,980.00 USDT');
    expect(orderTerms({ ...order, order_type: 'trailing_stop' })).toBe('trailing stop');
  });

  it("formats the prices by the instrument's tick", () => {
    expect(orderTerms({ ...order, order_type: 'limit', limit_price: 187.25, currency: 'USD' }, fixedTick(0.5))).toBe('limit 187.3 USD');
    expect(orderTerms({ ...order, order_type: 'stop_limit', stop_price: 70_000, limit_price: 69_900, currency: 'KRW' }, krx)).toBe('stop 70,000 KRW, limit 69,900 KRW');
  });
});
