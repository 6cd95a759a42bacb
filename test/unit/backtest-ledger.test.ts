// The two ledgers of the backtest engine side by side on generated runs: the scaled-integer one
// (the fast path) must give the decimal one's fills, cash, round trips and equity marks to the
// last digit and bit, for every profile, whole and fractional units, fixed ticks and the KRX
// bands, and hand its exact state over when a value outgrows it.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { defaultProfileFor, type FeeProfile } from '../../server/brokers/fees.ts';
import { seededRandom } from '../../server/brokers/simulator/prices.ts';
import { runEngine, type EngineResult } from '../../server/backtest/engine.ts';
import { decimalLedger, FillLog, scaledLedger, UNSURE, type EngineFill, type Ledger, type LedgerSettings, type TEngineTick } from '../../server/backtest/ledger.ts';
import type { Bars, StrategyRun, TSignal } from '../../server/backtest/types.ts';

const random = seededRandom(0x1ed9e7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const usZero = defaultProfileFor('us_equity');
// A US profile with slippage and a commission, so that sizing and fee cuts are exercised at cents.
const usCosts: FeeProfile = { ...usZero, commissionRate: new Decimal('0.0025'), slippageRate: new Decimal('0.0005') };
const kr = defaultProfileFor('kr_equity');
const crypto = defaultProfileFor('crypto');

interface Setup {
  settings: LedgerSettings;
  /** Prices on this many places (KRW: 0), or undefined for any double. */
  places: number | undefined;
  level: number;
}

const setupOf = (): Setup => {
  const kind = pick(['us', 'usCosts', 'usWhole', 'kr', 'crypto', 'cryptoSmall'] as const);
  const size = pick([1, 1, 0.5, 0.37, 0.1]);
  const capital = pick(['10000', '1234.56', '25000000', '0.5']);
  const cents = pick([2, 2, 2, 3, undefined]);
  switch (kind) {
    case 'us':
      return { settings: { initialCapital: capital, size, profile: usZero, tickSize: new Decimal('0.01'), fractional: true }, places: cents, level: pick([3, 100, 2_000]) };
    case 'usCosts':
      return { settings: { initialCapital: capital, size, profile: usCosts, tickSize: new Decimal('0.01'), fractional: true }, places: cents, level: pick([3, 100, 2_000]) };
    case 'usWhole':
      return { settings: { initialCapital: capital, size, profile: usZero, tickSize: new Decimal('0.01'), fractional: false }, places: cents, level: pick([3, 100]) };
    case 'kr':
      return { settings: { initialCapital: pick(['10000000', '1000000', '123456789']), size, profile: kr, tickSize: 'krx_bands', fractional: false }, places: pick([0, 0, 1]), level: pick([1_900, 4_900, 19_500, 49_000, 190_000, 490_000, 1_500_000]) };
    case 'crypto':
      return { settings: { initialCapital: capital, size, profile: crypto, tickSize: new Decimal('0.01'), fractional: true }, places: cents, level: pick([0.5, 100, 60_000]) };
    case 'cryptoSmall':
      // Small enough to start on the scaled ledger at crypto's 14 places.
      return { settings: { initialCapital: pick(['50', '12.5']), size, profile: crypto, tickSize: new Decimal('0.0001'), fractional: true }, places: pick([4, 2]), level: pick([0.5, 3]) };
  }
};

/** A random walk around `level` with opens and closes on the grid of `places`. */
const barsOf = (n: number, level: number, places: number | undefined): Bars => {
  const onGrid = (price: number) => (places === undefined ? price : Math.max(10 ** -places, Math.round(price * 10 ** places) / 10 ** places));
  const open = new Float64Array(n);
  const close = new Float64Array(n);
  let price = level;
  for (let i = 0; i < n; i++) {
    open[i] = onGrid(price * (1 + (random() - 0.5) * 0.01));
    price *= 1 + (random() - 0.5) * 0.08;
    close[i] = onGrid(price);
  }
  return { length: n, dates: [], open, close, high: close.map((c, i) => Math.max(c, open[i]!)), low: close.map((c, i) => Math.min(c, open[i]!)), volume: new Float64Array(n).fill(1) };
};

/** A strategy that says buy or sell at random bars. */
const randomSignals = (n: number): StrategyRun => {
  const plan: TSignal[] = Array.from({ length: n }, () => pick(['buy', 'sell', 'hold', 'hold'] as const));
  return { indicators: {}, decide: ({ index }) => plan[index]! };
};

const fillText = (fill: EngineFill) => {
  const numbers = fill.numbers();
  // The numbers are the decimals rounded once, as Decimal's toNumber rounds them.
  expect(numbers).toEqual({ qty: fill.qty.toNumber(), price: fill.price.toNumber(), fee: fill.fee.toNumber() });
  return [fill.index, fill.side, fill.qty.toFixed(), fill.price.toFixed(), fill.fee.toFixed(), numbers];
};
const outcome = (result: EngineResult) => ({ equity: Array.from(result.equity), fills: result.fills.map(fillText), fillCount: result.fillCount, first: result.firstFills(5).map(fillText), trips: result.trips, finalCapital: result.finalCapital });

describe('the scaled ledger', () => {
  it('runs the engine to exactly the decimal ledger’s result on generated runs of every profile', () => {
    let scaledRuns = 0;
    let fills = 0;
    for (let run = 0; run < 300; run++) {
      const { settings, places, level } = setupOf();
      const n = 120;
      const bars = barsOf(n, level, places);
      const strategy = randomSignals(n);
      const fast = runEngine({ bars, strategy, ...settings });
      const exact = runEngine({ bars, strategy, ...settings, decimalOnly: true });
      expect(outcome(fast), `${settings.profile.name} ${String(settings.tickSize)} capital ${String(settings.initialCapital)} size ${settings.size}`).toEqual(outcome(exact));
      if (scaledLedger(settings)) scaledRuns++;
      fills += exact.fills.length;
    }
    // About half the runs start on the scaled ledger: crypto with five figures of capital, 25
    // million at 11 places, prices with 17 digits do not fit, and run in decimals from the start.
    expect(scaledRuns).toBeGreaterThan(100);
    expect(fills).toBeGreaterThan(5_000);
  });

  it('answers every fill it is sure of as the decimal ledger does, and hands over its exact state when a value outgrows it', () => {
    let handOvers = 0;
    let sure = 0;
    for (let run = 0; run < 200; run++) {
      const { settings, places, level } = setupOf();
      const scaled = scaledLedger(settings);
      if (!scaled) continue;
      const exact = decimalLedger(settings);
      const exactLog = new FillLog();
      const log = new FillLog();
      let current = scaled;
      let price = level;
      const grid = (value: number) => (places === undefined ? value : Math.max(10 ** -places, Math.round(value * 10 ** places) / 10 ** places));
      for (let step = 0; step < 200; step++) {
        const reference = grid(price);
        const buying = step % 2 === 0;
        if (!buying && exact.unitsNumber === 0) continue;
        const act = (ledger: Ledger, into: FillLog) => (buying ? ledger.buy(step, reference, into) : ledger.sell(step, reference, into));
        const want = act(exact, exactLog);
        let got = act(current, log);
        if (buying ? got === UNSURE : Number.isNaN(got)) {
          expect(current).toBe(scaled);
          handOvers++;
          current = decimalLedger(settings, current.state());
          got = act(current, log);
        } else if (current === scaled) sure++;
        // The same outcome (bought, nothing, or the round trip's cash result to the bit), the same fills.
        expect(got).toBe(want);
        expect([current.cashNumber, current.unitsNumber, current.finalCapital()]).toEqual([exact.cashNumber, exact.unitsNumber, exact.finalCapital()]);
        // Up 10 % on a sell, on average: a thousandfold over a hundred round trips.
        price *= buying ? 1 + random() * 0.2 : 1 - random() * 0.02;
      }
      expect(log.list().map(fillText)).toEqual(exactLog.list().map(fillText));
      expect(log.list(3).map(fillText)).toEqual(exactLog.list().slice(0, 3).map(fillText));
    }
    expect(sure).toBeGreaterThan(2_000);
    expect(handOvers).toBeGreaterThan(20);
  });

  it('does not start for settings it cannot hold: a tick given as a rule, crypto’s 14 places at five figures of capital', () => {
    const base: LedgerSettings = { initialCapital: '10000', size: 1, profile: usZero, tickSize: new Decimal('0.01'), fractional: true };
    expect(scaledLedger(base)).toBeDefined();
    const rule: TEngineTick = () => new Decimal('0.01');
    expect(scaledLedger({ ...base, tickSize: rule })).toBeUndefined();
    expect(scaledLedger({ ...base, profile: crypto })).toBeUndefined();
    expect(scaledLedger({ ...base, profile: crypto, initialCapital: '50' })).toBeDefined();
    expect(scaledLedger({ ...base, size: 0.1 + 0.2 })).toBeUndefined();
  });
});
