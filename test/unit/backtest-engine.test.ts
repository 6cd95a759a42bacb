// The backtest engine on hand-made series: fills at the next open through the shared fill model
// (slippage, tick, fees, all computed by hand below), the final close-out, the equity marks, and
// that a strategy gets nothing from the future whatever it asks.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { profileByName } from '../../server/brokers/fees.ts';
import { runEngine } from '../../server/backtest/engine.ts';
import { smaCrossover } from '../../server/backtest/strategies/sma-crossover.ts';
import type { Bars, BarView, Indicator, StrategyRun, TSignal } from '../../server/backtest/types.ts';

const barsOf = (rows: readonly [open: number, close: number][]): Bars => ({
  length: rows.length,
  dates: rows.map((_, i) => `2024-01-${String(i + 1).padStart(2, '0')}`),
  open: Float64Array.from(rows.map(([open]) => open)),
  high: Float64Array.from(rows.map(([open, close]) => Math.max(open, close))),
  low: Float64Array.from(rows.map(([open, close]) => Math.min(open, close))),
  close: Float64Array.from(rows.map(([, close]) => close)),
  volume: new Float64Array(rows.length).fill(1_000),
});

/** A strategy that says what it is told at given bars. */
const scripted = (plan: Record<number, TSignal>): StrategyRun => ({ indicators: {}, decide: ({ index }) => plan[index] ?? 'hold' });

const crypto = profileByName('crypto_default')!;
const usZero = profileByName('us_broker_zero')!;

describe('runEngine', () => {
  it('buys at the next open and sells at the next open, priced by the fill model (slippage, tick, fees)', () => {
    const bars = barsOf([
      [99, 99],
      [99, 100], // signal buy at this close
      [100, 104], // bought at 100 × 1.0005 = 100.05
      [105, 108], // signal sell at this close
      [110, 111], // sold at 110 × 0.9995 = 109.945, down to the tick: 109.94
    ]);
    const result = runEngine({ bars, strategy: scripted({ 1: 'buy', 3: 'sell' }), size: 1, initialCapital: '1000', profile: crypto, tickSize: new Decimal('0.01'), fractional: true });
    // qty = 1000 / (100.05 × 1.001), cut to 9 decimals = 9.985017481
    // buy:  notional 999.00099897405, fee 0.99900099897405, cash left 0.00000002697595
    // sell: notional 9.985017481 × 109.94 = 1097.75282186114, fee 1.09775282186114
    expect(result.fills.map(({ index, side, qty, price, fee }) => ({ index, side, qty: qty.toFixed(), price: price.toFixed(), fee: fee.toFixed() }))).toEqual([
      { index: 2, side: 'buy', qty: '9.985017481', price: '100.05', fee: '0.99900099897405' },
      { index: 4, side: 'sell', qty: '9.985017481', price: '109.94', fee: '1.09775282186114' },
    ]);
    expect(result.finalCapital).toBe('1096.65506906625481');
    expect(result.trips).toHaveLength(1);
    expect(result.trips[0]!.pnl).toBeCloseTo(96.65506906625481, 9);
    // Marks at every close: flat cash, then the units at each close, then the cash after the sell.
    expect(result.equity[0]).toBe(1000);
    expect(result.equity[1]).toBe(1000);
    expect(result.equity[2]).toBeCloseTo(0.00000002697595 + 9.985017481 * 104, 9);
    expect(result.equity[4]).toBeCloseTo(1096.655069066255, 9);
  });

  it('closes a position still open at the last close and counts it; a signal on the last bar does nothing', () => {
    const bars = barsOf([
      [10, 10],
      [10, 11],
      [12, 13],
    ]);
    const result = runEngine({ bars, strategy: scripted({ 0: 'buy', 2: 'sell' }), size: 1, initialCapital: '100', profile: usZero, tickSize: new Decimal('0.01'), fractional: true });
    // Bought 10 units at the open of bar 1 (10.00), sold at the last close (13): 130.
    expect(result.fills.map((fill) => [fill.index, fill.side, fill.qty.toFixed(), fill.price.toFixed()])).toEqual([
      [1, 'buy', '10', '10'],
      [2, 'sell', '10', '13'],
    ]);
    expect(result.finalCapital).toBe('130');
    expect(result.trips).toEqual([{ entryIndex: 1, exitIndex: 2, pnl: 30 }]);
    expect(Array.from(result.equity)).toEqual([100, 110, 130]);
  });

  it('keeps every round trip of a long whipsaw, in order, and the cash results the metrics read are theirs', () => {
    // Buy on every fourth close and sell two closes later: 500 round trips over 2,000 bars.
    const bars = barsOf(Array.from({ length: 2_000 }, (_, i) => [100 + (i % 7), 100 + (i % 5)] as [number, number]));
    const plan: Record<number, TSignal> = {};
    for (let i = 0; i < 2_000; i += 4) Object.assign(plan, { [i]: 'buy', [i + 2]: 'sell' });
    const result = runEngine({ bars, strategy: scripted(plan), size: 1, initialCapital: '10000', profile: crypto, tickSize: new Decimal('0.01'), fractional: true });
    expect(result.trips).toHaveLength(500);
    expect(result.trips.map((trip) => [trip.entryIndex, trip.exitIndex])).toEqual(Array.from({ length: 500 }, (_, k) => [4 * k + 1, Math.min(4 * k + 3, 1_999)]));
    expect(Array.from(result.tripPnls)).toEqual(result.trips.map((trip) => trip.pnl));
    // Every trip pays the fees both ways, so none is a zero.
    expect(result.tripPnls.every((pnl) => pnl !== 0)).toBe(true);
  });

  it('buys whole shares only where units are not fractional, and spends only `size` of the cash', () => {
    const bars = barsOf([
      [30, 30],
      [30, 30],
    ]);
    const whole = runEngine({ bars, strategy: scripted({ 0: 'buy' }), size: 0.5, initialCapital: '1000', profile: usZero, tickSize: new Decimal('0.01'), fractional: false });
    // Half of 1,000 is 500: 16 whole shares at 30 (480).
    expect([whole.fills[0]!.side, whole.fills[0]!.qty.toFixed(), whole.fills[0]!.price.toFixed()]).toEqual(['buy', '16', '30']);
  });

  it('gives a strategy nothing from the future, whatever it asks', () => {
    const bars = barsOf([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    // An indicator computed over the whole series (its value at i is close[i] + 100).
    const plus100: Indicator = { name: 'plus100', compute: (input) => input.close.map((value) => value + 100) };
    const reads: number[][] = [];
    const peeker: StrategyRun<'x'> = {
      indicators: { x: plus100 },
      decide: (view: BarView<'x'>) => {
        reads.push([view.close(0), view.close(-1), view.close(0.5), view.close(view.index + 1), view.ind.x(0), view.ind.x(-1), view.ind.x(-2), view.open(-3)]);
        return 'hold';
      },
    };
    runEngine({ bars, strategy: peeker, size: 1, initialCapital: '100', profile: usZero, tickSize: new Decimal('0.01'), fractional: true });
    expect(reads.map((row) => row[0])).toEqual([1, 2, 3, 4]);
    expect(reads.map((row) => row[4])).toEqual([101, 102, 103, 104]);
    for (const row of reads) for (const future of [row[1], row[2], row[3], row[5], row[6], row[7]]) expect(future).toBeNaN();
  });

  it('runs a registered strategy: sma_crossover trades on its strict crosses only', () => {
    // fast 1 (the close itself) against slow 2 on closes 5, 4, 6, 7, 3, 2 (opens equal the closes):
    // bar 2 crosses above (4 < 4.5, then 6 > 5): bought at bar 3's open, 7;
    // bar 4 crosses below (7 > 6.5, then 3 < 5): sold at bar 5's open, 2.
    const closes = [5, 4, 6, 7, 3, 2];
    const bars = barsOf(closes.map((close) => [close, close] as [number, number]));
    const strategy = smaCrossover.create(smaCrossover.params.parse({ fast: 1, slow: 2 }));
    const result = runEngine({ bars, strategy, size: 1, initialCapital: '60', profile: usZero, tickSize: new Decimal('0.01'), fractional: true });
    expect(result.fills.map((fill) => [fill.index, fill.side, fill.price.toFixed()])).toEqual([
      [3, 'buy', '7'],
      [5, 'sell', '2'],
    ]);
    // 60 / 7 = 8.571428571 units (9 decimals, cut), 0.000000003 left; sold at 2: 17.142857142 + 0.000000003.
    expect(result.finalCapital).toBe('17.142857145');
  });
});

describe('runEngine: warm-up and strategy switches', () => {
  const always = (signal: TSignal): StrategyRun => ({ indicators: {}, decide: ({ inPosition }) => (signal === 'buy' ? (inPosition ? 'hold' : 'buy') : signal) });
  const five = barsOf([
    [10, 10],
    [11, 11],
    [12, 12],
    [13, 13],
    [14, 14],
  ]);

  it('takes no signal on the warm-up bars: the first fill is at the open after the first traded close, and the curve starts after the warm-up', () => {
    const result = runEngine({ bars: five, warmup: 2, strategy: always('buy'), size: 1, initialCapital: '1200', profile: usZero, tickSize: new Decimal('0.01'), fractional: true });
    expect(result.equity).toHaveLength(3);
    expect(result.equity[0]).toBe(1200);
    // Decided at the close of bar 2 (the first after the warm-up), bought at bar 3's open: index 1 of the curve.
    expect(result.fills.map(({ index, side, price }) => ({ index, side, price: price.toNumber() }))).toEqual([
      { index: 1, side: 'buy', price: 13 },
      { index: 2, side: 'sell', price: 14 },
    ]);
  });

  it('lets a later strategy decide from the close before its first bar, with the position as it is', () => {
    // The first strategy buys and holds; the one from bar 3 on sells what it holds at that bar's open.
    const result = runEngine({ bars: five, strategy: always('buy'), switches: [{ at: 3, strategy: always('sell'), warmup: 0 }], size: 1, initialCapital: '1000', profile: usZero, tickSize: new Decimal('0.01'), fractional: true });
    expect(result.fills.map(({ index, side }) => ({ index, side }))).toEqual([
      { index: 1, side: 'buy' },
      { index: 3, side: 'sell' },
    ]);
    expect(result.trips).toHaveLength(1);
  });
});
