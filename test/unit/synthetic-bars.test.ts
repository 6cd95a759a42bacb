// Synthetic demo bars: deterministic per seed and symbol, valid by validateBars, ending on the
// reference price, on the tick grid, on the right days for each asset class.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { krxTickOfNumber, krxTickSize } from '../../server/instruments/ticks.ts';
import { type Instrument, INSTRUMENT_UNIVERSE } from '../../server/instruments/universe.ts';
import { validateBars } from '../../server/marketdata/bars.ts';
import { syntheticBars } from '../../server/marketdata/synthetic.ts';
import { isTradingDay } from '../../server/markets/calendar.ts';
import { addDays } from '../../server/markets/zoned.ts';

const TO = '2026-11-20';
const barsFor = (instrument: Instrument, seed: number | string = 7, from = '2015-01-01') =>
  syntheticBars({ symbol: instrument.symbol, assetClass: instrument.asset_class, referencePrice: instrument.reference_price, tickSize: instrument.tick_size, from, to: TO, seed });

const find = (symbol: string) => {
  const instrument = INSTRUMENT_UNIVERSE.find((i) => i.symbol === symbol);
  if (!instrument) throw new Error(`${symbol} is not in the universe`);
  return instrument;
};

const decimalsOf = (text: string) => (text.includes('.') ? text.length - text.indexOf('.') - 1 : 0);

/** Whether the decimal string `price` is a whole multiple of `tick`, in exact integer arithmetic. */
const isOnGrid = (price: string, tick: string) => {
  const scale = decimalsOf(tick);
  if (decimalsOf(price) > scale) return false;
  const units = (text: string) => BigInt(text.replace('.', '') + '0'.repeat(scale - decimalsOf(text)));
  return units(price) % units(tick) === 0n;
};

const weekdayOf = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();

describe('determinism', () => {
  it('gives the same bars for the same seed and symbol', () => {
    expect(barsFor(find('BTC/USDT'), 1)).toEqual(barsFor(find('BTC/USDT'), 1));
    expect(barsFor(find('005930'), 'demo')).toEqual(barsFor(find('005930'), 'demo'));
  });

  it('gives other bars for another seed or another symbol', () => {
    const btc = barsFor(find('BTC/USDT'), 1);
    expect(barsFor(find('BTC/USDT'), 2).map((b) => b.close)).not.toEqual(btc.map((b) => b.close));
    const eth = { ...find('BTC/USDT'), symbol: 'ETH/USDT' }; // same price and tick: only the symbol differs
    expect(barsFor(eth, 1).map((b) => b.close)).not.toEqual(btc.map((b) => b.close));
  });
});

describe('every instrument of the universe', () => {
  const series = INSTRUMENT_UNIVERSE.map((instrument) => [instrument.symbol, instrument, barsFor(instrument)] as const);

  it.each(series)('%s: every bar passes validateBars', (_, __, bars) => {
    const result = validateBars(bars);
    expect(result.ok ? [] : result.errors).toEqual([]);
    // Already canonical and in date order: validation hands back the very same bars (compared as text: 4,000 deep equals are slow).
    expect(result.ok && JSON.stringify(result.bars) === JSON.stringify(bars)).toBe(true);
  });

  it.each(series)('%s: ends on the reference price, on the last day', (_, instrument, bars) => {
    expect(bars.at(-1)?.close).toBe(instrument.reference_price);
    const lastDay = instrument.asset_class === 'crypto' ? TO : '2026-11-20'; // a Friday
    expect(bars.at(-1)?.date).toBe(lastDay);
  });

  it.each(series)('%s: puts every price on the tick grid and every volume above 0', (_, instrument, bars) => {
    const offGrid: string[] = [];
    for (const bar of bars) {
      for (const price of [bar.open, bar.high, bar.low, bar.close]) {
        const tick = instrument.asset_class === 'kr_equity' ? String(krxTickOfNumber(Number(price))) : instrument.tick_size;
        if (!isOnGrid(price, tick)) offGrid.push(`${bar.date}: ${price} is off the ${tick} grid`);
      }
      if (!/^[1-9][0-9]*$/.test(bar.volume)) offGrid.push(`${bar.date}: volume ${bar.volume}`);
    }
    expect(offGrid).toEqual([]);
  });

  it.each(series)('%s: stays within a plausible range of its reference', (_, instrument, bars) => {
    const reference = Number(instrument.reference_price);
    const lows = bars.map((b) => Number(b.low));
    const highs = bars.map((b) => Number(b.high));
    expect(Math.min(...lows)).toBeGreaterThan(0);
    expect(Math.max(...highs)).toBeLessThan(reference * 5);
  });
});

describe('calendar', () => {
  it('gives crypto a bar on every calendar day', () => {
    const bars = barsFor(find('ETH/USDT'), 1, '2024-01-01');
    const days = (Date.parse(`${TO}T00:00:00Z`) - Date.parse('2024-01-01T00:00:00Z')) / 86_400_000 + 1;
    expect(bars).toHaveLength(days);
    expect(bars[0]?.date).toBe('2024-01-01');
    expect(bars.some((b) => weekdayOf(b.date) === 0)).toBe(true);
  });

  it.each(['AAPL', '005930'])('gives %s a bar on each of its exchange’s trading days only: no weekend, no holiday', (symbol) => {
    const instrument = find(symbol);
    const bars = barsFor(instrument, 1, '2024-01-01');
    const tradingDays: string[] = [];
    for (let date = '2024-01-01'; date <= TO; date = addDays(date, 1)) if (isTradingDay(instrument.asset_class, date)) tradingDays.push(date);
    expect(bars.map((b) => b.date)).toEqual(tradingDays);
    expect(bars.every((b) => weekdayOf(b.date) >= 1 && weekdayOf(b.date) <= 5)).toBe(true);
  });

  it('leaves out NYSE and KRX holidays (Juneteenth and July 4 2024; Seollal, January 27 and May 1 2025)', () => {
    const dates = (symbol: string, from: string, to: string) => syntheticBars({ symbol, assetClass: find(symbol).asset_class, referencePrice: find(symbol).reference_price, from, to, seed: 1 }).map((b) => b.date);
    const us = dates('AAPL', '2024-06-17', '2024-07-05');
    expect(us).not.toContain('2024-06-19');
    expect(us).not.toContain('2024-07-04');
    expect(us).toContain('2024-07-05');
    const kr = dates('005930', '2025-01-24', '2025-05-02');
    for (const closed of ['2025-01-27', '2025-01-28', '2025-01-29', '2025-01-30', '2025-05-01']) expect(kr).not.toContain(closed);
    expect(kr.slice(0, 2)).toEqual(['2025-01-24', '2025-01-31']);
  });

  it('crosses month ends and a leap day', () => {
    const dates = syntheticBars({ symbol: 'X/USDT', assetClass: 'crypto', referencePrice: '1', from: '2024-02-27', to: '2024-03-02', seed: 1 }).map((b) => b.date);
    expect(dates).toEqual(['2024-02-27', '2024-02-28', '2024-02-29', '2024-03-01', '2024-03-02']);
  });

  it('starts at 2015-01-01 when no start is given', () => {
    expect(syntheticBars({ symbol: 'BTC/USDT', assetClass: 'crypto', referencePrice: '100', to: '2015-01-03', seed: 1 }).map((b) => b.date)).toEqual([
      '2015-01-01',
      '2015-01-02',
      '2015-01-03',
    ]);
  });

  it('gives nothing for a range with no trading day', () => {
    expect(syntheticBars({ symbol: 'AAPL', assetClass: 'us_equity', referencePrice: '100', from: '2024-01-06', to: '2024-01-07', seed: 1 })).toEqual([]);
    expect(syntheticBars({ symbol: 'AAPL', assetClass: 'us_equity', referencePrice: '100', from: '2024-01-09', to: '2024-01-08', seed: 1 })).toEqual([]);
  });
});

describe('edges of the inputs', () => {
  it('keeps a reference price of a single tick valid', () => {
    const bars = syntheticBars({ symbol: 'TINY/USDT', assetClass: 'crypto', referencePrice: '0.00001', tickSize: '0.00001', from: '2024-01-01', to: '2024-12-31', seed: 1 });
    expect(validateBars(bars).ok).toBe(true);
    expect(bars.at(-1)?.close).toBe('0.00001');
  });

  it('ends on a reference price that is off the tick grid, exactly as given', () => {
    const bars = syntheticBars({ symbol: 'ODD', assetClass: 'us_equity', referencePrice: '10.005', from: '2024-01-01', to: '2024-03-29', seed: 1 });
    expect(bars.at(-1)?.close).toBe('10.005');
    expect(validateBars(bars).ok).toBe(true);
  });

  it.each([
    ['1.234', 0.001],
    ['1.23e-4', 0.000001],
    ['250', 1],
  ])('derives a crypto tick from the reference price %s when none is given', (referencePrice, tick) => {
    const bars = syntheticBars({ symbol: 'NEW/USDT', assetClass: 'crypto', referencePrice, from: '2024-01-01', to: '2024-06-30', seed: 1 });
    const closes = bars.map((b) => Number(b.close));
    for (const close of closes) expect(Math.abs(close / tick - Math.round(close / tick))).toBeLessThan(1e-6);
    expect(new Set(closes).size).toBeGreaterThan(10); // the grid is fine enough for the price to move
    expect(validateBars(bars).ok).toBe(true);
  });

  it('follows the KRX bands as a KRX price crosses them', () => {
    const bars = syntheticBars({ symbol: '000001', assetClass: 'kr_equity', referencePrice: '20000', from: '2015-01-01', to: TO, seed: 3 });
    const ticks = new Set(bars.map((b) => krxTickSize(b.close).toFixed()));
    expect(ticks.size).toBeGreaterThan(1);
    for (const bar of bars) for (const price of [bar.open, bar.high, bar.low, bar.close]) expect(new Decimal(price).mod(krxTickSize(price)).isZero()).toBe(true);
  });

  it.each([
    ['a zero reference price', { referencePrice: '0' }],
    ['a negative reference price', { referencePrice: '-5' }],
    ['a bad date', { to: '2024-02-30' }],
    ['a zero tick', { tickSize: '0' }],
    ['a reference price that is no number', { referencePrice: 'abc' }],
    ['a tick that is no number', { tickSize: 'x' }],
  ])('refuses %s', (_, override) => {
    expect(() => syntheticBars({ symbol: 'X/USDT', assetClass: 'crypto', referencePrice: '1', from: '2024-01-01', to: '2024-02-01', seed: 1, ...override })).toThrow(
      RangeError,
    );
  });
});
