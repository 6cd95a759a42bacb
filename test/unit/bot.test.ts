// The bot's pure parts: which bar an instant falls in, the bars ticks build, the decision at a
// closed bar (the backtest's rule: the same strategy, nothing after the bar) and a buy's size.
import { describe, expect, it } from 'vitest';
import { findStrategy } from '../../server/backtest/strategies/index.ts';
import { runEngine } from '../../server/backtest/engine.ts';
import { profileByName } from '../../server/brokers/fees.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { barStartOf, createBarBuilder, toBars, type BuiltBar } from '../../server/bot/bars.ts';
import { buyQuantity, decideAtClose } from '../../server/bot/decide.ts';

const at = (iso: string) => new Date(iso);

describe('bars', () => {
  it('starts a 1-minute bar at its UTC minute and a daily bar at the exchange’s local date', () => {
    expect(barStartOf('1m', 'crypto', at('2026-03-10T15:04:59.999Z')).toISOString()).toBe('2026-03-10T15:04:00.000Z');
    // 01:00 UTC is still the 9th in New York and already 10:00 on the 10th in Seoul.
    expect(barStartOf('1d', 'us_equity', at('2026-03-10T01:00:00Z')).toISOString()).toBe('2026-03-09T00:00:00.000Z');
    expect(barStartOf('1d', 'kr_equity', at('2026-03-10T01:00:00Z')).toISOString()).toBe('2026-03-10T00:00:00.000Z');
    expect(barStartOf('1d', 'crypto', at('2026-03-10T23:59:59Z')).toISOString()).toBe('2026-03-10T00:00:00.000Z');
  });

  it('builds open, high, low and close from ticks, closes a bar on the first tick of a later one, and ignores late ticks', () => {
    const builder = createBarBuilder({ timeframe: '1m', assetClass: 'crypto' });
    expect(builder.add('100', at('2026-03-10T15:00:01Z'))).toBeUndefined();
    expect(builder.add('103.5', at('2026-03-10T15:00:20Z'))).toBeUndefined();
    expect(builder.add('99.25', at('2026-03-10T15:00:40Z'))).toBeUndefined();
    expect(builder.add('101', at('2026-03-10T15:00:59Z'))).toBeUndefined();
    const closed = builder.add('102', at('2026-03-10T15:02:00Z'));
    expect(closed).toEqual({ start: at('2026-03-10T15:00:00Z'), open: '100', high: '103.5', low: '99.25', close: '101' });
    // A tick of the closed minute arrives late: the closed bar stays as it was.
    expect(builder.add('500', at('2026-03-10T15:00:30Z'))).toBeUndefined();
    expect(builder.current()).toEqual({ start: at('2026-03-10T15:02:00Z'), open: '102', high: '102', low: '102', close: '102' });
  });

  it('after restored history, ticks of bars already stored are not built again', () => {
    const builder = createBarBuilder({ timeframe: '1m', assetClass: 'crypto', after: at('2026-03-10T15:05:00Z') });
    expect(builder.add('1', at('2026-03-10T15:05:30Z'))).toBeUndefined();
    expect(builder.current()).toBeUndefined();
    builder.add('2', at('2026-03-10T15:06:10Z'));
    expect(builder.current()?.open).toBe('2');
  });
});

describe('the decision at a closed bar', () => {
  const closes = [10, 9, 8, 9, 11, 12, 12, 11, 9, 8, 8, 10, 13, 12, 9, 7];
  const history: BuiltBar[] = closes.map((close, i) => ({ start: new Date(Date.UTC(2026, 2, 10, 15, i)), open: String(close), high: String(close), low: String(close), close: String(close) }));

  it('gives the signals the backtest engine acts on, bar for bar, with the same strategy and params', () => {
    const definition = findStrategy('sma_crossover')!;
    const params = definition.params.parse({ fast: 2, slow: 3 });
    // The engine fills a signal at the next bar's open (this run ends flat: no close-out fill).
    const engine = runEngine({ bars: toBars(history), strategy: definition.create(params), size: 1, initialCapital: 10_000, profile: profileByName('crypto_default')!, tickSize: new ExactDecimal('0.01'), fractional: true });
    const engineSignals = engine.fills.map((fill) => `${fill.index - 1}:${fill.side}`);
    const botSignals: string[] = [];
    let inPosition = false;
    const strategy = definition.create(params);
    for (let i = 1; i <= history.length; i++) {
      // Only the bars closed so far: the bot cannot see the next one, and neither does the engine.
      const signal = decideAtClose(strategy, toBars(history.slice(0, i)), inPosition);
      if (signal !== 'hold') {
        botSignals.push(`${i - 1}:${signal}`);
        inPosition = signal === 'buy';
      }
    }
    expect(botSignals).toEqual(['4:buy', '7:sell', '11:buy', '14:sell']);
    expect(botSignals).toEqual(engineSignals);
  });

  it('holds without history, buys only when flat and sells only when long', () => {
    const strategy = findStrategy('sma_crossover')!.create({ fast: 1, slow: 2, size: 1 });
    expect(decideAtClose(strategy, toBars([]), false)).toBe('hold');
    const rising = toBars(history.slice(0, 5)); // 10 9 8 9 11: crossed above at 9
    expect(decideAtClose(strategy, toBars(history.slice(0, 4)), false)).toBe('buy');
    expect(decideAtClose(strategy, toBars(history.slice(0, 4)), true)).toBe('hold');
    expect(decideAtClose(strategy, rising, true)).toBe('hold');
  });
});

describe('a buy’s size', () => {
  const base = { buyingPower: '100000', equity: '100000', price: '50000', size: 1, defaultStopPct: '5', maxRiskPerTradePct: '2', lotSize: '0.00001', fractional: true };
  it('spends at most what the risk rule allows (2 % at a 5 % stop is 40 % of equity), less headroom, in whole lots', () => {
    expect(buyQuantity(base).toFixed()).toBe('0.784');
    expect(buyQuantity({ ...base, size: 0.1 }).toFixed()).toBe('0.196');
    expect(buyQuantity({ ...base, buyingPower: '1000' }).toFixed()).toBe('0.0196');
  });
  it('buys whole shares where the instrument has no fractions, and nothing when nothing fits', () => {
    expect(buyQuantity({ ...base, price: '70000', lotSize: '1', fractional: false }).toFixed()).toBe('0');
    expect(buyQuantity({ ...base, price: '7000', lotSize: '1', fractional: false }).toFixed()).toBe('5');
    expect(buyQuantity({ ...base, price: '0' }).toFixed()).toBe('0');
  });
});
