// Backtest strategies: the registry, each strategy's params (strict, bounded, with defaults), and
// each strategy buying and selling at the expected bars of a small hand-made series, driven by a
// tiny loop here that plays the engine's part (one position at a time, flat or long).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findStrategy, STRATEGIES } from '../../server/backtest/strategies/index.ts';
import type { Bars, BarView, Lookback, StrategyDefinition, TSignal } from '../../server/backtest/types.ts';

const NAMES = ['buy_and_hold', 'sma_crossover', 'ema_crossover', 'rsi_reversion', 'bollinger_reversion', 'macd_crossover', 'donchian_breakout'];

const strategyNamed = (name: string): StrategyDefinition => {
  const strategy = findStrategy(name);
  if (!strategy) throw new Error(`no strategy ${name}`);
  return strategy;
};

/** Bars from closes; open is the close, high and low default to it. */
const barsOf = (close: number[], fields: { high?: number[]; low?: number[] } = {}): Bars => ({
  length: close.length,
  dates: close.map((_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10)),
  open: Float64Array.from(close),
  high: Float64Array.from(fields.high ?? close),
  low: Float64Array.from(fields.low ?? close),
  close: Float64Array.from(close),
  volume: new Float64Array(close.length).fill(1000),
});

/** A deterministic random walk for the long runs. */
const walkOf = (length: number): Bars => {
  const close: number[] = [];
  let price = 100;
  for (let i = 0; i < length; i++) {
    price *= 1 + 0.03 * Math.sin(i * 0.37) * Math.cos(i * 0.11);
    close.push(price);
  }
  return barsOf(close, { high: close.map((c) => c * 1.01), low: close.map((c) => c * 0.99) });
};

/**
 * The engine's part, cut down: computes the strategy's indicators once, walks the bars with a view
 * that reads back in time only, and flips flat/long on each buy/sell. Fails if the strategy buys
 * while long or sells while flat.
 */
const play = (name: string, given: Record<string, unknown>, bars: Bars) => {
  const strategy = strategyNamed(name);
  const run = strategy.create(strategy.params.parse(given));
  const cursor = { index: 0, inPosition: false };
  const lookbackOf = (values: Float64Array): Lookback => (back = 0) => {
    const j = cursor.index - back;
    return back >= 0 && j >= 0 ? (values[j] ?? NaN) : NaN;
  };
  const ind: Record<string, Lookback> = {};
  for (const [key, indicator] of Object.entries(run.indicators)) ind[key] = lookbackOf(indicator.compute(bars));
  const view: BarView<string> = {
    get index() {
      return cursor.index;
    },
    get inPosition() {
      return cursor.inPosition;
    },
    open: lookbackOf(bars.open),
    high: lookbackOf(bars.high),
    low: lookbackOf(bars.low),
    close: lookbackOf(bars.close),
    volume: lookbackOf(bars.volume),
    ind,
  };
  const trades: { buys: number[]; sells: number[] } = { buys: [], sells: [] };
  for (cursor.index = 0; cursor.index < bars.length; cursor.index++) {
    const signal: TSignal = run.decide(view);
    if (signal === 'buy') {
      expect(cursor.inPosition, `${name} bought at ${cursor.index} while long`).toBe(false);
      trades.buys.push(cursor.index);
      cursor.inPosition = true;
    } else if (signal === 'sell') {
      expect(cursor.inPosition, `${name} sold at ${cursor.index} while flat`).toBe(true);
      trades.sells.push(cursor.index);
      cursor.inPosition = false;
    } else {
      expect(signal).toBe('hold');
    }
  }
  return trades;
};

describe('the registry', () => {
  it('lists the seven strategies in order, each under a lower-case snake name', () => {
    expect(STRATEGIES.map((strategy) => strategy.name)).toEqual(NAMES);
    for (const strategy of STRATEGIES) {
      expect(strategy.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(strategy.description.length).toBeGreaterThan(10);
      expect([...strategy.assetClasses].sort()).toEqual(['crypto', 'kr_equity', 'us_equity']);
    }
  });

  it('finds each strategy by its exact name and nothing else', () => {
    for (const strategy of STRATEGIES) expect(findStrategy(strategy.name)).toBe(strategy);
    expect(findStrategy('SMA_CROSSOVER')).toBeUndefined();
    expect(findStrategy('sma-crossover')).toBeUndefined();
    expect(findStrategy('')).toBeUndefined();
    expect(findStrategy('toString')).toBeUndefined();
    expect(findStrategy('__proto__')).toBeUndefined();
    expect(findStrategy('constructor')).toBeUndefined();
  });
});

describe('params', () => {
  const DEFAULTS: Record<string, Record<string, number>> = {
    buy_and_hold: { size: 1 },
    sma_crossover: { fast: 10, slow: 30, size: 1 },
    ema_crossover: { fast: 12, slow: 26, size: 1 },
    rsi_reversion: { period: 14, oversold: 30, overbought: 70, size: 1 },
    bollinger_reversion: { period: 20, k: 2, size: 1 },
    macd_crossover: { fast: 12, slow: 26, signal: 9, size: 1 },
    donchian_breakout: { entry: 20, exit: 10, size: 1 },
  };

  it.each(NAMES)('%s fills every default from {}', (name) => {
    expect(strategyNamed(name).params.parse({})).toEqual(DEFAULTS[name]);
  });

  it.each(NAMES)('%s refuses an unknown key', (name) => {
    const result = strategyNamed(name).params.safeParse({ fastt: 5 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it.each(NAMES)('%s describes every parameter, with its default and bounds, for GET /api/strategy/list', (name) => {
    const schema = z.toJSONSchema(strategyNamed(name).params, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, Record<string, unknown>> };
    const properties = Object.entries(schema.properties);
    expect(properties.map(([key]) => key).sort()).toEqual(Object.keys(DEFAULTS[name] ?? {}).sort());
    for (const [key, property] of properties) {
      expect(property.description, `${name}.${key}`).toEqual(expect.any(String));
      expect(property.default, `${name}.${key}`).toBe(DEFAULTS[name]?.[key]);
      expect(property.maximum, `${name}.${key}`).toEqual(expect.any(Number));
      expect(property.minimum ?? property.exclusiveMinimum, `${name}.${key}`).toEqual(expect.any(Number));
    }
  });

  it.each(NAMES)('%s takes a size in (0, 1] and refuses 0 and more than 1', (name) => {
    const { params } = strategyNamed(name);
    expect(params.parse({ size: 0.25 })).toMatchObject({ size: 0.25 });
    expect(params.safeParse({ size: 0 }).success).toBe(false);
    expect(params.safeParse({ size: 1.01 }).success).toBe(false);
    expect(params.safeParse({ size: '1' }).success).toBe(false);
  });

  it('bounds every period to whole bars from 1 (or 2) to 500', () => {
    const refused = (name: string, given: Record<string, unknown>) => expect(strategyNamed(name).params.safeParse(given).success, JSON.stringify({ name, given })).toBe(false);
    for (const given of [{ fast: 0 }, { fast: 2.5 }, { slow: 501 }, { slow: 1, fast: 1 }]) refused('sma_crossover', given);
    for (const given of [{ fast: 0 }, { slow: 501 }]) refused('ema_crossover', given);
    for (const given of [{ period: 1 }, { period: 501 }, { period: 14.5 }]) refused('rsi_reversion', given);
    for (const given of [{ period: 1 }, { period: 501 }]) refused('bollinger_reversion', given);
    for (const given of [{ signal: 0 }, { signal: 501 }, { slow: 600 }]) refused('macd_crossover', given);
    for (const given of [{ entry: 0 }, { exit: 0 }, { entry: 501 }, { exit: 3.5 }]) refused('donchian_breakout', given);
    expect(strategyNamed('sma_crossover').params.parse({ fast: 1, slow: 500 })).toMatchObject({ fast: 1, slow: 500 });
  });

  it('bounds the RSI levels to 0..100 and the Bollinger width to (0, 10]', () => {
    const rsiParams = strategyNamed('rsi_reversion').params;
    expect(rsiParams.safeParse({ oversold: -1 }).success).toBe(false);
    expect(rsiParams.safeParse({ overbought: 101 }).success).toBe(false);
    expect(rsiParams.parse({ oversold: 0, overbought: 100 })).toMatchObject({ oversold: 0, overbought: 100 });
    const bollingerParams = strategyNamed('bollinger_reversion').params;
    expect(bollingerParams.safeParse({ k: 0 }).success).toBe(false);
    expect(bollingerParams.safeParse({ k: 10.5 }).success).toBe(false);
    expect(bollingerParams.parse({ k: 1.5 })).toMatchObject({ k: 1.5 });
  });

  it.each([
    ['sma_crossover', { fast: 30, slow: 30 }, 'slow'],
    ['sma_crossover', { fast: 40 }, 'slow'],
    ['ema_crossover', { fast: 26, slow: 12 }, 'slow'],
    ['macd_crossover', { fast: 26 }, 'slow'],
    ['rsi_reversion', { oversold: 70, overbought: 70 }, 'overbought'],
  ] as const)('%s refuses %j, naming %s', (name, given, path) => {
    const result = strategyNamed(name).params.safeParse(given);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ code: 'custom', path: [path] })]);
  });
});

describe('signals on hand-made series', () => {
  it('buy_and_hold buys on the first bar and never sells', () => {
    expect(play('buy_and_hold', {}, barsOf([10, 11, 9, 12, 8]))).toEqual({ buys: [0], sells: [] });
  });

  it('sma_crossover buys when the fast SMA crosses above the slow one and sells when it crosses below', () => {
    // closes   10  10  10   9    8    9    11    12    11    9    8
    // sma(2)    -  10  10  9.5  8.5  8.5   10   11.5  11.5  10   8.5
    // sma(3)    -   -  10  9.67  9  8.67  9.33 10.67 11.33 10.67 9.33
    // fast-slow: tie at 2 (no cross), below from 3, above at 6 (buy), below again at 9 (sell).
    const bars = barsOf([10, 10, 10, 9, 8, 9, 11, 12, 11, 9, 8]);
    expect(play('sma_crossover', { fast: 2, slow: 3 }, bars)).toEqual({ buys: [6], sells: [9] });
  });

  it('sma_crossover does not trade when the averages touch, or pass each other through a tie', () => {
    // sma(2) - sma(3) at i is (c[i-1] + c[i] - 2 c[i-2]) / 6; on these closes:
    //   2: 0, 3: -1/6, 4: 0 (touch), 5: -1/6, 6: 0 (tie), 7: +14/6 (above, but through the tie)
    const bars = barsOf([10, 10, 10, 9, 11, 6, 16, 10]);
    expect(play('sma_crossover', { fast: 2, slow: 3 }, bars)).toEqual({ buys: [], sells: [] });
  });

  it('ema_crossover buys when the fast EMA crosses above the slow one and sells when it crosses below', () => {
    // closes     4  4  4   2    2     6      8       4        2
    // ema(1)     the closes themselves
    // ema(3)     -  -  4   3   2.5  4.25  6.125  5.0625  3.53125   (alpha 0.5)
    // fast-slow: 0 at 2, -1 at 3, -0.5 at 4, +1.75 at 5 (buy), +1.875 at 6, -1.0625 at 7 (sell).
    const bars = barsOf([4, 4, 4, 2, 2, 6, 8, 4, 2]);
    expect(play('ema_crossover', { fast: 1, slow: 3 }, bars)).toEqual({ buys: [5], sells: [7] });
  });

  it('rsi_reversion buys below the oversold level and sells above the overbought level', () => {
    // closes 10 9 8 9 10 11 10; changes -1 -1 +1 +1 +1 -1; RSI(2), Wilder alpha 1/2:
    //   2: gain 0, loss 1 -> RSI 0 (< 30: buy)
    //   3: gain 0.5, loss 0.5 -> 50
    //   4: gain 0.75, loss 0.25 -> 75 (> 70: sell)
    //   5: gain 0.875, loss 0.125 -> 87.5 (flat, not oversold: hold)
    //   6: gain 0.4375, loss 0.5625 -> 43.75
    const bars = barsOf([10, 9, 8, 9, 10, 11, 10]);
    expect(play('rsi_reversion', { period: 2 }, bars)).toEqual({ buys: [2], sells: [4] });
  });

  it('bollinger_reversion buys below the lower band and sells above the middle band', () => {
    // period 3, k 1; closes 10 10 10 7 8 10 10:
    //   2: [10 10 10] middle 10, std 0, lower 10: close 10 is not below it
    //   3: [10 10 7] middle 9, std sqrt(2), lower 7.59: close 7 below (buy)
    //   4: [10 7 8] middle 8.33: close 8 is not above (hold)
    //   5: [7 8 10] middle 8.33: close 10 above (sell)
    //   6: [8 10 10] middle 9.33, std 0.94, lower 8.39: close 10 not below
    const bars = barsOf([10, 10, 10, 7, 8, 10, 10]);
    expect(play('bollinger_reversion', { period: 3, k: 1 }, bars)).toEqual({ buys: [3], sells: [5] });
  });

  it('macd_crossover buys when the MACD line crosses above its signal and sells when it crosses below', () => {
    // closes [2, 4, 6, 10, 4, 8, 12, 6]; macd(1, 3) = [-, -, 2, 3, -1.5, 1.25, 2.625, -1.6875];
    // signal(3) = [-, -, -, -, 7/6, 29/24, 23/12, 11/96] (see the indicator tests).
    // macd - signal: 4: -2.67, 5: +0.04 (buy), 6: +0.71, 7: -1.80 (sell).
    const bars = barsOf([2, 4, 6, 10, 4, 8, 12, 6]);
    expect(play('macd_crossover', { fast: 1, slow: 3, signal: 3 }, bars)).toEqual({ buys: [5], sells: [7] });
  });

  it('donchian_breakout buys above the previous entry bars\' highest high and sells below the previous exit bars\' lowest low', () => {
    // closes 10 11 10 12 13 11 10 9, highs close + 0.5, lows close - 0.5; entry 3, exit 2:
    //   3: highest high of bars 0..2 is 11.5: close 12 above (buy)
    //   4: lowest low of bars 2..3 is 9.5: close 13 not below
    //   5: lowest low of bars 3..4 is 11.5: close 11 below (sell)
    //   6, 7: highest high of the 3 bars before is 13.5: no new entry
    const close = [10, 11, 10, 12, 13, 11, 10, 9];
    const bars = barsOf(close, { high: close.map((c) => c + 0.5), low: close.map((c) => c - 0.5) });
    expect(play('donchian_breakout', { entry: 3, exit: 2 }, bars)).toEqual({ buys: [3], sells: [5] });
  });

  it('donchian_breakout does not buy a close equal to the channel top', () => {
    const bars = barsOf([10, 11, 10, 11, 11]);
    expect(play('donchian_breakout', { entry: 3, exit: 2 }, bars)).toEqual({ buys: [], sells: [] });
  });
});

describe('long runs', () => {
  it.each(NAMES)('%s with its defaults alternates buy and sell over 3,000 bars and trades at least once', (name) => {
    // play() fails on a buy while long or a sell while flat.
    const { buys, sells } = play(name, {}, walkOf(3000));
    expect(buys.length).toBeGreaterThan(0);
    expect(buys.length - sells.length).toBeGreaterThanOrEqual(0);
    expect(buys.length - sells.length).toBeLessThanOrEqual(1);
    sells.forEach((sell, i) => expect(sell).toBeGreaterThan(buys[i] ?? Infinity));
  });

  it.each(NAMES)('%s never trades before its indicators are defined', (name) => {
    // Ten bars are fewer than any default lookback but buy_and_hold's: nothing but that buy.
    expect(play(name, {}, walkOf(10))).toEqual(name === 'buy_and_hold' ? { buys: [0], sells: [] } : { buys: [], sells: [] });
  });
});
