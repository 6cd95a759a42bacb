// The seeded universe (counts, canonical symbols, sane ticks and lots) and the KRX tick table and
// tick rounding it rests on, at every band edge.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { normaliseSymbol } from '../../contracts/symbols.ts';
import { krxTickOfNumber, krxTickSize, roundToKrxTick, roundToTick } from '../../server/instruments/ticks.ts';
import { INSTRUMENT_UNIVERSE } from '../../server/instruments/universe.ts';

const of = (assetClass: string) => INSTRUMENT_UNIVERSE.filter((i) => i.asset_class === assetClass);
const POSITIVE_DECIMAL = /^(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/;

describe('instrument universe', () => {
  it('holds at least 10 crypto pairs, 30 US stocks and ETFs and 20 KRX stocks', () => {
    expect(of('crypto').length).toBeGreaterThanOrEqual(10);
    expect(of('us_equity').length).toBeGreaterThanOrEqual(30);
    expect(of('kr_equity').length).toBeGreaterThanOrEqual(20);
    expect(of('crypto').length + of('us_equity').length + of('kr_equity').length).toBe(INSTRUMENT_UNIVERSE.length);
  });

  it('includes the names everyone looks for first', () => {
    const symbols = new Set(INSTRUMENT_UNIVERSE.map((i) => i.symbol));
    for (const symbol of ['BTC/USDT', 'ETH/USDT', 'AAPL', 'MSFT', 'BRK.B', 'SPY', 'QQQ', '005930', '000660']) expect(symbols).toContain(symbol);
  });

  it('has no symbol twice', () => {
    const keys = INSTRUMENT_UNIVERSE.map((i) => i.symbol);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(INSTRUMENT_UNIVERSE.map((i) => [i.symbol, i] as const))('%s is stored in its normalised form', (symbol, instrument) => {
    expect(normaliseSymbol(symbol, instrument.asset_class)).toEqual({ ok: true, assetClass: instrument.asset_class, symbol });
    expect(normaliseSymbol(symbol)).toEqual({ ok: true, assetClass: instrument.asset_class, symbol });
  });

  it.each(INSTRUMENT_UNIVERSE.map((i) => [i.symbol, i] as const))('%s has positive decimals on its own grids', (_, instrument) => {
    for (const value of [instrument.reference_price, instrument.tick_size, instrument.lot_size]) {
      expect(value).toMatch(POSITIVE_DECIMAL);
      expect(new Decimal(value).greaterThan(0)).toBe(true);
    }
    expect(new Decimal(instrument.reference_price).mod(instrument.tick_size).isZero()).toBe(true);
    expect(instrument.name.length).toBeGreaterThan(0);
  });

  it('quotes each class in its currency on its exchanges, with the lot rules of each market', () => {
    for (const i of of('crypto')) {
      expect([i.exchange, i.currency, i.fractional]).toEqual(['BINANCE', 'USDT', true]);
      expect(i.symbol.endsWith('/USDT')).toBe(true);
      expect(new Decimal(i.lot_size).lessThanOrEqualTo(1)).toBe(true);
    }
    for (const i of of('us_equity')) {
      expect(['NASDAQ', 'NYSE', 'NYSE ARCA']).toContain(i.exchange);
      expect([i.currency, i.tick_size, i.lot_size, i.fractional]).toEqual(['USD', '0.01', '1', true]);
    }
    for (const i of of('kr_equity')) {
      expect([i.exchange, i.currency, i.lot_size, i.fractional]).toEqual(['KRX', 'KRW', '1', false]);
      expect(i.symbol).toMatch(/^[0-9]{6}$/);
    }
  });

  it('gives KRX stocks the tick of their price band', () => {
    for (const i of of('kr_equity')) expect(i.tick_size).toBe(krxTickSize(i.reference_price).toFixed());
  });
});

describe('KRX tick table', () => {
  // Each band's last price, the band edge, and the tick on either side.
  it.each([
    [1, '1'],
    [1_999, '1'],
    [2_000, '5'],
    [4_995, '5'],
    [5_000, '10'],
    [19_990, '10'],
    [20_000, '50'],
    [49_950, '50'],
    [50_000, '100'],
    [199_900, '100'],
    [200_000, '500'],
    [499_500, '500'],
    [500_000, '1000'],
    [3_000_000, '1000'],
  ])('at %d KRW the tick is %s', (price, tick) => {
    expect(krxTickSize(price).toFixed()).toBe(tick);
    expect(krxTickSize(String(price)).toFixed()).toBe(tick);
    expect(String(krxTickOfNumber(price))).toBe(tick);
  });

  it('takes the band of a price just below an edge', () => {
    expect(krxTickSize('1999.99').toFixed()).toBe('1');
    expect(krxTickSize('499999.5').toFixed()).toBe('500');
  });

  it.each([0, -1, 'abc', Number.NaN, Number.POSITIVE_INFINITY])('refuses %s', (price) => {
    expect(() => krxTickSize(price)).toThrow(RangeError);
  });
});

describe('roundToTick', () => {
  it.each([
    ['100.005', '0.01', 'half_up', '100.01'],
    ['100.004999', '0.01', 'half_up', '100'],
    ['100.009', '0.01', 'down', '100'],
    ['100.001', '0.01', 'up', '100.01'],
    ['100.01', '0.01', 'up', '100.01'],
    ['100.01', '0.01', 'down', '100.01'],
    ['0.123456789', '0.00001', 'half_up', '0.12346'],
    ['0.3', '0.1', 'down', '0.3'], // no binary-float residue: 0.3 stays 0.3
    ['1234', '5', 'half_up', '1235'],
    ['1232.5', '5', 'half_up', '1235'],
    ['1232.4', '5', 'half_up', '1230'],
    ['97000.125', '0.25', 'half_up', '97000.25'],
  ] as const)('%s on %s (%s) → %s', (price, tick, mode, expected) => {
    expect(roundToTick(price, tick, mode).toFixed()).toBe(expected);
  });

  it.each([0, -0.01, 'x'])('refuses a tick of %s', (tick) => {
    expect(() => roundToTick('1', tick, 'half_up')).toThrow(RangeError);
  });
});

describe('roundToKrxTick', () => {
  it.each([
    ['1999.4', 'half_up', '1999'],
    ['1999.6', 'half_up', '2000'], // onto the edge, which is on the coarser grid too
    ['2003', 'down', '2000'],
    ['2003', 'up', '2005'],
    ['4997', 'half_up', '4995'],
    ['4998', 'up', '5000'],
    ['19995', 'half_up', '20000'],
    ['49990', 'up', '50000'],
    ['50050', 'half_up', '50100'],
    ['199950', 'down', '199900'],
    ['200200', 'half_up', '200000'],
    ['200250', 'half_up', '200500'],
    ['499700', 'up', '500000'],
    ['500400', 'half_up', '500000'],
    ['500500', 'half_up', '501000'],
  ] as const)('%s (%s) → %s', (price, mode, expected) => {
    const rounded = roundToKrxTick(price, mode);
    expect(rounded.toFixed()).toBe(expected);
    expect(rounded.mod(krxTickSize(rounded)).isZero()).toBe(true);
  });
});
