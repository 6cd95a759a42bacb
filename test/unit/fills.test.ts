// Fill arithmetic: execution price with slippage and tick rounding, fees and KRX tax, cash, the
// position a fill leaves (avg entry, partial and full closes) and the lot-size rule. Exact values.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { defaultProfileFor } from '../../server/brokers/fees.ts';
import {
  FRACTIONAL_SHARE_DECIMALS,
  type Position,
  applyFill,
  checkLot,
  computeFill,
  decimalOfScaled,
  executionPrice,
  scaledFillModel,
  scaledOfNumber,
} from '../../server/brokers/fills.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { seededRandom } from '../../server/brokers/simulator/prices.ts';
import { KRX_TICK_BANDS, krxTickSize } from '../../server/instruments/ticks.ts';

const d = (value: Decimal.Value) => new Decimal(value);
// US stocks as a broker with 5 bp of slippage and no commission would price them: the shipped
// us_broker_zero profile has no slippage, which would leave the slippage rules untested here.
const us = { ...defaultProfileFor('us_equity'), slippageRate: new Decimal('0.0005') };
const kr = defaultProfileFor('kr_equity');
const crypto = defaultProfileFor('crypto');

/** The decimal strings of a fill's amounts, for exact comparison. */
const amounts = (fill: ReturnType<typeof computeFill>) => ({
  price: fill.price.toFixed(),
  notional: fill.notional.toFixed(),
  commission: fill.commission.toFixed(),
  tax: fill.tax.toFixed(),
  fee: fill.fee.toFixed(),
  cashDelta: fill.cashDelta.toFixed(),
});

const positionOf = (position: Position) => ({
  qty: position.qty.toFixed(),
  avgEntryPrice: position.avgEntryPrice.toFixed(),
  realizedPnl: position.realizedPnl.toFixed(),
});

describe('executionPrice', () => {
  it('moves the price against the taker: buys pay up, sells receive less', () => {
    expect(executionPrice({ side: 'buy', referencePrice: d(100), tickSize: d('0.01'), profile: us }).toFixed()).toBe('100.05');
    expect(executionPrice({ side: 'sell', referencePrice: d(100), tickSize: d('0.01'), profile: us }).toFixed()).toBe('99.95');
  });

  it('rounds buys up and sells down to the tick', () => {
    // 100.003 × 1.0005 = 100.0530015 and 100.003 × 0.9995 = 99.9529985
    expect(executionPrice({ side: 'buy', referencePrice: d('100.003'), tickSize: d('0.01'), profile: us }).toFixed()).toBe('100.06');
    expect(executionPrice({ side: 'sell', referencePrice: d('100.003'), tickSize: d('0.01'), profile: us }).toFixed()).toBe('99.95');
    // KRX: 70,000 won sits in the 100-won tick band; 70,035 → 70,100 and 69,965 → 69,900.
    expect(executionPrice({ side: 'buy', referencePrice: d(70000), tickSize: d(100), profile: kr }).toFixed()).toBe('70100');
    expect(executionPrice({ side: 'sell', referencePrice: d(70000), tickSize: d(100), profile: kr }).toFixed()).toBe('69900');
  });

  it('takes a price-dependent tick at the slipped price, so a KRX fill across a band edge stays on the grid', () => {
    // The KRX bands around 50,000 won: a 50-won tick below, a 100-won tick from 50,000.
    const krxBand = (price: Decimal) => d(price.lt(50000) ? 50 : 100);
    // 49,990 × 1.0005 = 50,014.995: in the 100-won band, so 50,100 (a fixed 50 would give 50,050, off the grid).
    expect(executionPrice({ side: 'buy', referencePrice: d(49990), tickSize: krxBand, profile: kr }).toFixed()).toBe('50100');
    // 50,010 × 0.9995 = 49,984.995: in the 50-won band, so 49,950.
    expect(executionPrice({ side: 'sell', referencePrice: d(50010), tickSize: krxBand, profile: kr }).toFixed()).toBe('49950');
  });

  it('never fills beyond a limit price, whatever the slippage and the grid', () => {
    expect(executionPrice({ side: 'buy', referencePrice: d(100), tickSize: d('0.01'), profile: us, limitPrice: d('100.02') }).toFixed()).toBe('100.02');
    expect(executionPrice({ side: 'sell', referencePrice: d(100), tickSize: d('0.01'), profile: us, limitPrice: d('99.99') }).toFixed()).toBe('99.99');
    // A limit the slipped price does not reach changes nothing.
    expect(executionPrice({ side: 'buy', referencePrice: d(100), tickSize: d('0.01'), profile: us, limitPrice: d(101) }).toFixed()).toBe('100.05');
  });

  it('refuses a sell that rounds down to zero, a zero tick and a non-positive reference', () => {
    expect(() => executionPrice({ side: 'sell', referencePrice: d('0.005'), tickSize: d('0.01'), profile: us })).toThrow(/rounds to zero/);
    expect(() => executionPrice({ side: 'buy', referencePrice: d(100), tickSize: d(0), profile: us })).toThrow(/tick size/);
    expect(() => executionPrice({ side: 'buy', referencePrice: d(-1), tickSize: d('0.01'), profile: us })).toThrow(/reference price/);
  });
});

describe('computeFill', () => {
  it('prices a US buy with zero commission: cash is −notional', () => {
    const fill = computeFill({ side: 'buy', qty: d(10), referencePrice: d(100), tickSize: d('0.01'), profile: us });
    expect(amounts(fill)).toEqual({ price: '100.05', notional: '1000.5', commission: '0', tax: '0', fee: '0', cashDelta: '-1000.5' });
  });

  it('prices a crypto buy with the 0.1 % taker fee', () => {
    const fill = computeFill({ side: 'buy', qty: d('0.1'), referencePrice: d(60000), tickSize: d('0.01'), profile: crypto });
    // 60000 × 1.0005 = 60030; 0.1 × 60030 = 6003; fee 6.003
    expect(amounts(fill)).toEqual({ price: '60030', notional: '6003', commission: '6.003', tax: '0', fee: '6.003', cashDelta: '-6009.003' });
  });

  it('prices a crypto sell: cash is notional − fee', () => {
    const fill = computeFill({ side: 'sell', qty: d('0.3'), referencePrice: d('0.2'), tickSize: d('0.0001'), profile: crypto });
    // 0.2 × 0.9995 = 0.1999; 0.3 × 0.1999 = 0.05997; fee 0.00005997
    expect(amounts(fill)).toEqual({ price: '0.1999', notional: '0.05997', commission: '0.00005997', tax: '0', fee: '0.00005997', cashDelta: '0.05991003' });
  });

  it('adds the KRX transaction tax on a sell, commission and tax cut to whole won', () => {
    const fill = computeFill({ side: 'sell', qty: d(10), referencePrice: d(70000), tickSize: d(100), profile: kr });
    // 699,000 × 0.015 % = 104.85 → 104; 699,000 × 0.20 % = 1,398
    expect(amounts(fill)).toEqual({ price: '69900', notional: '699000', commission: '104', tax: '1398', fee: '1502', cashDelta: '697498' });
  });

  it('charges no KRX tax on a buy', () => {
    const fill = computeFill({ side: 'buy', qty: d(10), referencePrice: d(70000), tickSize: d(100), profile: kr });
    // 701,000 × 0.015 % = 105.15 → 105
    expect(amounts(fill)).toEqual({ price: '70100', notional: '701000', commission: '105', tax: '0', fee: '105', cashDelta: '-701105' });
  });

  it('keeps a product exact beyond decimal.js’s default 20 significant digits', () => {
    const fill = computeFill({ side: 'buy', qty: d('1234567.12345678'), referencePrice: d('65432.1'), tickSize: d('0.01'), profile: crypto });
    // 65432.1 × 1.0005 = 65464.81605 → 65464.82
    expect(fill.price.toFixed()).toBe('65464.82');
    expect(fill.notional.toFixed()).toBe('80820714515.0158804796');
  });

  it('refuses a zero quantity', () => {
    expect(() => computeFill({ side: 'buy', qty: d(0), referencePrice: d(1), tickSize: d('0.01'), profile: us })).toThrow(/fill quantity/);
  });
});

describe('applyFill', () => {
  const buy = (qty: Decimal.Value, price: Decimal.Value, fee: Decimal.Value = 0) => ({ side: 'buy' as const, qty: d(qty), price: d(price), fee: d(fee) });
  const sell = (qty: Decimal.Value, price: Decimal.Value, fee: Decimal.Value = 0) => ({ side: 'sell' as const, qty: d(qty), price: d(price), fee: d(fee) });

  it('opens a position at the fill price with the buy fee realised', () => {
    expect(positionOf(applyFill(undefined, buy(10, 100, 1)))).toEqual({ qty: '10', avgEntryPrice: '100', realizedPnl: '-1' });
  });

  it('weights the average entry by quantity, fees excluded', () => {
    const first = applyFill(undefined, buy(10, 100, 1));
    // (10 × 100 + 30 × 104) / 40 = 103
    expect(positionOf(applyFill(first, buy(30, 104, 3)))).toEqual({ qty: '40', avgEntryPrice: '103', realizedPnl: '-4' });
  });

  it('closes part of a long: the average stays, the gain less the fee is realised', () => {
    let position = applyFill(undefined, buy(10, 100, 1));
    position = applyFill(position, buy(30, 104, 3));
    position = applyFill(position, sell(15, 110, 2));
    // −4 + 15 × (110 − 103) − 2 = 99
    expect(positionOf(position)).toEqual({ qty: '25', avgEntryPrice: '103', realizedPnl: '99' });
    position = applyFill(position, sell(25, 100, 1));
    // 99 + 25 × (100 − 103) − 1 = 23; a closed position has no entry price
    expect(positionOf(position)).toEqual({ qty: '0', avgEntryPrice: '0', realizedPnl: '23' });
    // The next buy starts a fresh average and keeps the realised P&L.
    expect(positionOf(applyFill(position, buy(2, 50)))).toEqual({ qty: '2', avgEntryPrice: '50', realizedPnl: '23' });
  });

  it('adds 0.1 + 0.2 to exactly 0.3 and sells it all', () => {
    let position = applyFill(undefined, buy('0.1', 10));
    position = applyFill(position, buy('0.2', 10));
    expect(position.qty.toFixed()).toBe('0.3');
    expect(positionOf(applyFill(position, sell('0.3', 10)))).toEqual({ qty: '0', avgEntryPrice: '0', realizedPnl: '0' });
  });

  it('leaves exactly 0.2 sellable after selling 0.1 of 0.3', () => {
    let position = applyFill(undefined, buy('0.3', 10));
    position = applyFill(position, sell('0.1', 10));
    expect(position.qty.toFixed()).toBe('0.2');
    position = applyFill(position, sell('0.2', 10));
    expect(position.qty.isZero()).toBe(true);
  });

  it('refuses a sell beyond the held quantity, and a sell with nothing held', () => {
    const position = applyFill(undefined, buy('0.3', 10));
    expect(() => applyFill(position, sell('0.30000001', 10))).toThrow(/exceeds the held quantity 0.3/);
    expect(() => applyFill(undefined, sell(1, 10))).toThrow(/exceeds the held quantity 0/);
  });

  it('rounds a non-terminating average far below any tick', () => {
    let position = applyFill(undefined, buy(1, 1));
    position = applyFill(position, buy(1, 1));
    position = applyFill(position, buy(1, 2));
    expect(position.avgEntryPrice.toFixed()).toMatch(/^1\.3{30,}$/);
    expect(position.avgEntryPrice.times(3).minus(4).abs().lt('1e-30')).toBe(true);
  });

  it('reconciles with cash: equity change = realised + unrealised after every fill', () => {
    const tickSize = d('0.01');
    // Quantities whose sums divide exactly (0.8), so the identity holds to the last digit.
    const start = new ExactDecimal(100000);
    let cash = start;
    let position: Position | undefined;
    const steps = [
      { side: 'buy', qty: '0.5', price: '60000' },
      { side: 'buy', qty: '0.3', price: '61234.56' },
      { side: 'sell', qty: '0.35', price: '63000.01' },
      { side: 'sell', qty: '0.45', price: '58000' },
    ] as const;
    for (const step of steps) {
      const fill = computeFill({ side: step.side, qty: d(step.qty), referencePrice: d(step.price), tickSize, profile: crypto });
      cash = cash.plus(fill.cashDelta);
      position = applyFill(position, fill);
      const mark = d(step.price);
      const equity = cash.plus(position.qty.times(mark));
      const unrealized = position.qty.times(mark.minus(position.avgEntryPrice));
      expect(equity.minus(start).toFixed()).toBe(position.realizedPnl.plus(unrealized).toFixed());
    }
    expect(position?.qty.isZero()).toBe(true);
    expect(cash.minus(start).toFixed()).toBe(position?.realizedPnl.toFixed());
  });
});

describe('checkLot', () => {
  it('accepts whole lots and quantities on the fractional step', () => {
    expect(checkLot(d(10), d(1), false)).toBeUndefined();
    expect(checkLot(d('0.0003'), d('0.0001'), true)).toBeUndefined();
    // 0.3 % 0.1 in binary floats is 0.09999999999999998
    expect(checkLot(d('0.3'), d('0.1'), true)).toBeUndefined();
  });

  it('takes any fraction of a US share down to 9 decimal places (lot 1, fractional)', () => {
    expect(checkLot(d('0.5'), d(1), true)).toBeUndefined();
    expect(checkLot(d('1.123456789'), d(1), true)).toBeUndefined();
    expect(checkLot(d('1.1234567891'), d(1), true)).toBe('qty 1.1234567891 has more than 9 decimal places');
  });

  it('refuses a fraction where the instrument trades whole units', () => {
    expect(checkLot(d('10.5'), d(1), false)).toBe('qty 10.5 must be a whole number: this instrument does not trade fractions');
  });

  it('refuses a quantity off the lot size', () => {
    expect(checkLot(d(12), d(5), false)).toBe('qty 12 must be a multiple of the lot size 5');
    expect(checkLot(d('0.00035'), d('0.0001'), true)).toBe('qty 0.00035 must be a multiple of the lot size 0.0001');
  });

  it('refuses zero and negative quantities', () => {
    expect(checkLot(d(0), d(1), false)).toBe('qty must be greater than 0');
    expect(checkLot(d(-1), d(1), true)).toBe('qty must be greater than 0');
  });
});

// The scaled-integer twin of executionPrice and computeFill (the backtest engine's fast path)
// against the decimal functions on many generated fills: every answer it gives must be the
// decimal one to the last digit, and it must answer (not decline) for ordinary prices.
describe('the scaled fill model', () => {
  const random = seededRandom(0xf111);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (low: number, high: number) => low + random() * (high - low);
  const usZero = defaultProfileFor('us_equity');
  const profiles = [usZero, us, kr, crypto];
  const krxBands = { bands: KRX_TICK_BANDS };

  /** A reference price as the bars hold it: on a grid of `places`, or any double. */
  const referenceOf = (magnitude: number, places: number | undefined): number => {
    const raw = between(0.2, 1) * magnitude;
    return places === undefined ? raw : Math.max(1, Math.round(raw * 10 ** places)) / 10 ** places;
  };

  /** The decimal path's answer, or the message it throws. */
  const attempt = <T>(run: () => T): T | string => {
    try {
      return run();
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('reads a number as the decimal decimal.js reads from it, or declines', () => {
    const specials = [0.1, 0.2, 0.1 + 0.2, 100.37, 1e-7, 123.456789012, 1234567.891, 2 ** 52, 9007199254740991, 0.000001, 5e-324, 1e21, 99.99999999999999];
    let read = 0;
    for (let i = 0; i < 20_000; i++) {
      const value = i < specials.length ? specials[i]! : i % 2 === 0 ? referenceOf(10 ** Math.floor(between(-4, 9)), Math.floor(between(0, 10))) : between(0, 1e6);
      const scaled = scaledOfNumber(value);
      if (!scaled) continue;
      read++;
      expect(decimalOfScaled(scaled.units, scaled.scale).toFixed(), `${value}`).toBe(new ExactDecimal(value).toFixed());
    }
    // Grid prices (half the cases) are read unless they carry 16 digits; a random double's 17 are declined.
    expect(read).toBeGreaterThan(9_000);
    expect(scaledOfNumber(0.1 + 0.2)).toBeUndefined();
    expect(scaledOfNumber(0)).toBeUndefined();
    expect(scaledOfNumber(-1)).toBeUndefined();
  });

  it('gives executionPrice and computeFill exactly, for every profile, fixed ticks and the KRX bands, whole and fractional quantities', () => {
    const grids = [d('0.01'), d('0.0001'), d('0.00001'), d('0.5'), d(1), d(5), d(100), krxBands] as const;
    let priced = 0;
    let filled = 0;
    let declined = 0;
    for (let i = 0; i < 30_000; i++) {
      const profile = pick(profiles);
      const grid = pick(grids);
      const model = scaledFillModel(profile, grid)!;
      expect(model).toBeDefined();
      const tickSize = 'bands' in grid ? krxTickSize : grid;
      const side = random() < 0.5 ? 'buy' : 'sell';
      // KRX prices sit around the band edges; others anywhere from a cent to a million.
      const magnitude = 'bands' in grid ? pick([2_000, 5_000, 20_000, 50_000, 200_000, 500_000, 2_000_000]) * between(0.98, 1.2) : 10 ** Math.floor(between(-3, 7));
      const places = pick([0, 1, 2, 3, 4, 6, 8, undefined]);
      const reference = referenceOf(magnitude, places);
      const fast = model.price(side, reference);
      const slow = attempt(() => executionPrice({ side, referencePrice: new ExactDecimal(reference), tickSize, profile }));
      if (Number.isNaN(fast)) {
        // Declined: the decimal path throws (a sell under one tick), or an integer would pass 2^53:
        // a reference with 17 digits (any double), or a million with 8 places times the slippage.
        if (typeof slow !== 'string' && places !== undefined) declined++;
        continue;
      }
      priced++;
      expect(typeof slow).not.toBe('string');
      const price = slow as Decimal;
      expect(decimalOfScaled(fast, model.priceScale).toFixed(), `${side} ${reference} on ${'bands' in grid ? 'KRX' : grid.toFixed()} (${profile.name})`).toBe(price.toFixed());

      const fractional = !('bands' in grid) && random() < 0.7;
      const qtyScale = fractional ? FRACTIONAL_SHARE_DECIMALS : 0;
      const qtyUnits = Math.max(1, Math.floor(between(0, 1) ** 3 * (fractional ? 1e13 : 1e5)));
      const amounts = model.fill(side, qtyUnits, qtyScale, fast);
      const exact = computeFill({ side, qty: decimalOfScaled(qtyUnits, qtyScale), referencePrice: new ExactDecimal(reference), tickSize, profile }, price);
      if (!amounts) continue;
      filled++;
      const scale = model.moneyScale(qtyScale);
      const text = (units: number) => decimalOfScaled(units, scale).toFixed();
      expect({ notional: text(amounts.notional), commission: text(amounts.commission), tax: text(amounts.tax), fee: text(amounts.fee), cashDelta: text(amounts.cashDelta) }).toEqual({
        notional: exact.notional.toFixed(),
        commission: exact.commission.toFixed(),
        tax: exact.tax.toFixed(),
        fee: exact.fee.toFixed(),
        cashDelta: exact.cashDelta.toFixed(),
      });
    }
    expect(priced).toBeGreaterThan(20_000);
    expect(declined).toBeLessThan(priced / 20);
    // Large quantities at large prices pass 2^53 at 9 + 2 places and are declined: about a third.
    expect(filled).toBeGreaterThan(10_000);
  });

  it('declines what it cannot hold exactly instead of rounding it', () => {
    const model = scaledFillModel(crypto, d('0.01'))!;
    // 1e12 units at 9 places times a price of 60,000.00 is beyond 2^53 at 11 places.
    expect(model.fill('buy', 1e12, FRACTIONAL_SHARE_DECIMALS, model.price('buy', 60_000))).toBeUndefined();
    // A sell slipped below one tick: executionPrice throws, the model declines.
    expect(model.price('sell', 0.005)).toBeNaN();
    // A tick with more places than a double can scale, or a rule given as a function: no model.
    expect(scaledFillModel(crypto, d('1e-30'))).toBeUndefined();
  });
});
