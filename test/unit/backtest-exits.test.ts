// The backtest exits (stop-loss, take-profit, trailing stop) on hand-made daily bars: every exit
// price, fill and cash below is worked out by hand in the comments and asserted to the digit.
// Bars are [open, high, low, close]; a scripted strategy says `buy` at bar 0's close, so the
// entry fills at bar 1's open.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { ZBacktestRequest, ZSweepRequest, ZWalkForwardRequest } from '../../contracts/backtest.ts';
import { profileByName } from '../../server/brokers/fees.ts';
import { runEngine, type EngineInput, type EngineResult } from '../../server/backtest/engine.ts';
import { END, ExitWatch, SIGNAL, STOP_LOSS, TAKE_PROFIT, TRAIL, type ExitRules } from '../../server/backtest/exits.ts';
import { exitEchoOf, exitRulesOf } from '../../server/backtest/run-specs.ts';
import { runJob, type BacktestJob } from '../../server/backtest/task.ts';
import type { Bars, StrategyRun, TSignal } from '../../server/backtest/types.ts';

type TRow = readonly [open: number, high: number, low: number, close: number];

const barsOf = (rows: readonly TRow[]): Bars => ({
  length: rows.length,
  dates: rows.map((_, i) => `2024-01-${String(i + 1).padStart(2, '0')}`),
  open: Float64Array.from(rows.map(([open]) => open)),
  high: Float64Array.from(rows.map(([, high]) => high)),
  low: Float64Array.from(rows.map(([, , low]) => low)),
  close: Float64Array.from(rows.map(([, , , close]) => close)),
  volume: new Float64Array(rows.length).fill(1_000),
});

/** A strategy that says what it is told at given bars. */
const scripted = (plan: Record<number, TSignal>): StrategyRun => ({ indicators: {}, decide: ({ index }) => plan[index] ?? 'hold' });

// crypto_default: slippage 0.05 %, taker fee 0.1 %; us_broker_zero: no slippage, no fee.
const crypto = profileByName('crypto_default')!;
const usZero = profileByName('us_broker_zero')!;
const CENT = new Decimal('0.01');

const run = (rows: readonly TRow[], exits: ExitRules | undefined, more: Partial<EngineInput> = {}): EngineResult =>
  runEngine({ bars: barsOf(rows), strategy: scripted({ 0: 'buy' }), size: 1, initialCapital: '1000', profile: usZero, tickSize: CENT, fractional: true, exits, ...more });

const fillsOf = (result: EngineResult) => result.fills.map(({ index, side, qty, price, fee }) => ({ index, side, qty: qty.toFixed(), price: price.toFixed(), fee: fee.toFixed() }));
const reasonsOf = (result: EngineResult) => Array.from(result.tripExits);

describe('backtest exits: the trailing stop', () => {
  // crypto_default on a 0.01 grid, 1,000 of cash, trail_pct 5. The entry fills at bar 1's open:
  // 100 × 1.0005 = 100.05; qty = 1000 / (100.05 × 1.001) cut to 9 places = 9.985017481; notional
  // 999.00099897405, fee 0.99900099897405, cash left 0.00000002697595.
  // The trail for bar i is (the highest of the entry's fill and the highs of bars 1..i-1) × 0.95,
  // rounded down onto the grid (never tighter than asked):
  //   bar 1 (the entry's): seed 100.05 → 95.0475 → 95.04; low 99 stays above.
  //   bar 2: high-water 103 (bar 1's high) → 97.85; low 100 stays above.
  //   bar 3: high-water 106 → 100.70; low 104 above.
  //   bar 4: high-water 110 → 104.50; low 105 above.
  //   bar 5: high-water 112.4 → 106.78; low 107.5 above. Its own high, 116, would have made the
  //          stop 110.20, which its low reaches: the trail never moves within the bar it checks.
  //   bar 6: high-water 116 → 110.20; low 111 above.
  //   bar 7: 110.20 again (bar 6's high 115 is below 116); opens at 112, above the stop, and its
  //          low 109 reaches it: sold at the stop, 110.20.
  // The sell: 110.20 × (1 − 0.0005) = 110.14490, down to the grid: 110.14;
  //   notional 9.985017481 × 110.14 = 1099.74982535734, fee 1.09974982535734,
  //   cash 0.00000002697595 + 1099.74982535734 − 1.09974982535734 = 1098.65007555895861.
  // Bars 8 and 9 are flat at that cash.
  const rows: TRow[] = [
    [100, 101, 99, 100], // 0: buy at the close
    [100, 103, 99, 102], // 1: bought at 100.05
    [102, 106, 100, 105], // 2
    [105, 110, 104, 109], // 3
    [109, 112.4, 105, 111], // 4
    [111, 116, 107.5, 115], // 5
    [114, 115, 111, 112], // 6
    [112, 113, 109, 110], // 7: the trail at 110.20 is reached
    [110, 111, 108, 109], // 8
    [109, 110, 107, 108], // 9
  ];

  it('sells at the trail of the highs before the bar, on the grid, through the fill model', () => {
    const result = run(rows, { trailPct: 5 }, { profile: crypto });
    expect(fillsOf(result)).toEqual([
      { index: 1, side: 'buy', qty: '9.985017481', price: '100.05', fee: '0.99900099897405' },
      { index: 7, side: 'sell', qty: '9.985017481', price: '110.14', fee: '1.09974982535734' },
    ]);
    expect(result.finalCapital).toBe('1098.65007555895861');
    expect(result.trips.map((trip) => [trip.entryIndex, trip.exitIndex])).toEqual([[1, 7]]);
    expect(reasonsOf(result)).toEqual([TRAIL]);
    // The marks after the exit are the cash; before it, the units at each close.
    expect(result.equity[7]).toBe(1098.6500755589586);
    expect(result.equity[8]).toBe(1098.6500755589586);
    expect(result.equity[9]).toBe(1098.6500755589586);
    expect(result.equity[6]).toBe(0.00000002697595 + 9.985017481 * 112);
  });

  it('gives the same fills and cash on the decimal ledger', () => {
    const scaled = run(rows, { trailPct: 5 }, { profile: crypto });
    const decimal = run(rows, { trailPct: 5 }, { profile: crypto, decimalOnly: true });
    expect(fillsOf(decimal)).toEqual(fillsOf(scaled));
    expect(decimal.finalCapital).toBe(scaled.finalCapital);
    expect(Array.from(decimal.equity)).toEqual(Array.from(scaled.equity));
  });

  it('shows the sell’s reason in the job’s fills', () => {
    const bars = barsOf(rows);
    const job: BacktestJob = { bars, warmup: 0, initialCapital: '1000', profileName: 'crypto_default', fractional: true, exits: exitRulesOf({ trail_pct: 5 }), runs: [{ strategyName: 'buy_and_hold', params: { size: 1 }, size: 1 }] };
    const [outcome] = runJob(job);
    // A job fills on the grid that keeps the bars' prices exact (whole numbers here, and the
    // slippage's 4 places: 0.0001), so nothing is rounded: the trail, 110.2, sells at
    // 110.2 × 0.9995 = 110.1449. buy_and_hold buys again at bar 7's close, after the exit: at
    // bar 8's open, 110 × 1.0005 = 110.055; closed at the last close, 108 × 0.9995 = 107.946.
    expect(outcome!.fills.map((fill) => [fill.index, fill.side, fill.price, fill.reason])).toEqual([
      [1, 'buy', 100.05, undefined],
      [7, 'sell', 110.1449, 'trail'],
      [8, 'buy', 110.055, undefined],
      [9, 'sell', 107.946, 'end'],
    ]);
  });
});

describe('backtest exits: stops, take-profits and the pessimistic rule', () => {
  // us_broker_zero on a 0.01 grid: no slippage, no fee. 1,000 of cash buys 10 units at bar 1's open, 100.

  it('fills a stop at the open when the bar opens below it (a gap), and enters again on a later signal', () => {
    // stop_loss_pct 10: stop 90. Bar 2 opens at 85, below it: sold at 85 → cash 850.
    // The strategy buys again at bar 3's close: 850 / 80 = 10.625 units at bar 4's open, 80;
    // the stop is then 72, never reached; closed at the last close, 84: 892.5.
    const result = runEngine({
      bars: barsOf([
        [100, 100, 100, 100],
        [100, 101, 95, 96],
        [85, 86, 80, 81],
        [81, 82, 79, 80],
        [80, 85, 78, 84],
      ]),
      strategy: scripted({ 0: 'buy', 3: 'buy' }),
      ...{ size: 1, initialCapital: '1000', profile: usZero, tickSize: CENT, fractional: true },
      exits: { stopLossPct: 10 },
    });
    expect(fillsOf(result).map(({ index, side, qty, price }) => [index, side, qty, price])).toEqual([
      [1, 'buy', '10', '100'],
      [2, 'sell', '10', '85'],
      [4, 'buy', '10.625', '80'],
      [4, 'sell', '10.625', '84'],
    ]);
    expect(reasonsOf(result)).toEqual([STOP_LOSS, END]);
    expect(result.finalCapital).toBe('892.5');
    expect(Array.from(result.equity)).toEqual([1000, 960, 850, 850, 892.5]);
  });

  it('fills the stop when one bar reaches both the stop and the take-profit', () => {
    // stop_loss_pct 5 (95), take_profit_pct 10 (110): bar 2 (open 100) reaches 111 and 94. Sold at the stop, 95: 950.
    const result = run(
      [
        [100, 100, 100, 100],
        [100, 102, 99, 101],
        [100, 111, 94, 105],
        [105, 106, 104, 105],
      ],
      { stopLossPct: 5, takeProfitPct: 10 },
    );
    expect(fillsOf(result).map(({ index, side, price }) => [index, side, price])).toEqual([
      [1, 'buy', '100'],
      [2, 'sell', '95'],
    ]);
    expect(reasonsOf(result)).toEqual([STOP_LOSS]);
    expect(result.finalCapital).toBe('950');
  });

  it('fills the take-profit at the open when the bar opens beyond it, even if its low then reaches the stop', () => {
    // stop 95, take-profit 110: bar 2 opens at 112 (the open is the bar's first price, so the
    // take-profit is reached first, no guess needed) and then falls to 90. Sold at 112: 1,120.
    const result = run(
      [
        [100, 100, 100, 100],
        [100, 102, 99, 101],
        [112, 113, 90, 91],
      ],
      { stopLossPct: 5, takeProfitPct: 10 },
    );
    expect(fillsOf(result).map(({ index, side, price }) => [index, side, price])).toEqual([
      [1, 'buy', '100'],
      [2, 'sell', '112'],
    ]);
    expect(reasonsOf(result)).toEqual([TAKE_PROFIT]);
    expect(result.finalCapital).toBe('1120');
  });

  it('exits on the entry’s bar, the trail there being the seed’s alone', () => {
    // trail_pct 3: bought at 100 on bar 1, whose trail is 100 × 0.97 = 97 (its own high, 105,
    // would have made it 101.85). Its low, 96, reaches 97: sold there on the same bar: 970.
    const result = run(
      [
        [100, 100, 100, 100],
        [100, 105, 96, 104],
        [104, 106, 103, 105],
      ],
      { trailPct: 3 },
    );
    expect(fillsOf(result).map(({ index, side, price }) => [index, side, price])).toEqual([
      [1, 'buy', '100'],
      [1, 'sell', '97'],
    ]);
    expect(reasonsOf(result)).toEqual([TRAIL]);
    expect(result.finalCapital).toBe('970');
    expect(Array.from(result.equity)).toEqual([1000, 970, 970]);
  });

  it('takes the higher of stop_loss_pct and trail_pct, whichever it is', () => {
    const rows: TRow[] = [
      [100, 100, 100, 100],
      [100, 101, 99, 100],
      [99, 99.5, 94, 95],
    ];
    // stop_loss_pct 10 (90) below trail_pct 5 (bar 2: high-water 101 → 95.95): the trail holds, sold at 95.95.
    const trail = run(rows, { stopLossPct: 10, trailPct: 5 });
    expect([fillsOf(trail)[1]!.price, reasonsOf(trail), trail.finalCapital]).toEqual(['95.95', [TRAIL], '959.5']);
    // stop_loss_pct 3 (97) above the same trail (95.95): the stop-loss holds, sold at 97.
    const stop = run(rows, { stopLossPct: 3, trailPct: 5 });
    expect([fillsOf(stop)[1]!.price, reasonsOf(stop), stop.finalCapital]).toEqual(['97', [STOP_LOSS], '970']);
  });

  it('fills a take-profit at its price, as a limit, and at the open when the bar opens above it', () => {
    // crypto_default: bought at 100.05 (see the trail's case), cash left 0.00000002697595.
    // take_profit_pct 10: 100.05 × 1.1 = 110.055, up to the grid: 110.06 (never below what was asked).
    const entry: TRow[] = [
      [100, 101, 99, 100],
      [100, 103, 99, 102],
    ];
    // Bar 2 opens at 105 and reaches 112: sold at 110.06. The slipped 110.06 × 0.9995 = 110.00497
    // would round down to 110.00, but a take-profit is a sell limit: never below 110.06.
    // notional 9.985017481 × 110.06 = 1098.95102395886, fee 1.09895102395886,
    // cash 0.00000002697595 + 1098.95102395886 − 1.09895102395886 = 1097.85207296187709.
    const atPrice = run([...entry, [105, 112, 104, 111]], { takeProfitPct: 10 }, { profile: crypto });
    expect(fillsOf(atPrice)[1]).toEqual({ index: 2, side: 'sell', qty: '9.985017481', price: '110.06', fee: '1.09895102395886' });
    expect(atPrice.finalCapital).toBe('1097.85207296187709');
    // Bar 2 opens at 115, above it: sold at the open, 115 × 0.9995 = 114.9425 → 114.94;
    // notional 1147.67790926614, fee 1.14767790926614, cash 1146.53023138384981.
    const gap = run([...entry, [115, 116, 114, 115]], { takeProfitPct: 10 }, { profile: crypto });
    expect(fillsOf(gap)[1]).toEqual({ index: 2, side: 'sell', qty: '9.985017481', price: '114.94', fee: '1.14767790926614' });
    expect(gap.finalCapital).toBe('1146.53023138384981');
    expect(reasonsOf(atPrice)).toEqual(reasonsOf(gap));
    // The decimal ledger prices the limit the same.
    const decimal = run([...entry, [105, 112, 104, 111]], { takeProfitPct: 10 }, { profile: crypto, decimalOnly: true });
    expect(fillsOf(decimal)).toEqual(fillsOf(atPrice));
    expect(decimal.finalCapital).toBe(atPrice.finalCapital);
  });

  it('puts every level on the grid away from the position: stops down, take-profits up', () => {
    // From a fill at 100.05 on a 0.01 grid: stop_loss_pct 5 → 95.0475 → 95.04; trail_pct 3 →
    // 97.0485 → 97.04 (the higher: the effective stop); take_profit_pct 10 → 110.055 → 110.06.
    const watch = new ExitWatch({ stopLossPct: 5, takeProfitPct: 10, trailPct: 3 }, crypto, CENT);
    watch.arm(100.05);
    expect([watch.stop, watch.stopReason, watch.target]).toEqual([97.04, TRAIL, 110.06]);
    // A high of 103 raises the trail to 99.91; a lower high then changes nothing.
    watch.passed(103);
    watch.passed(102);
    expect([watch.stop, watch.stopReason]).toEqual([99.91, TRAIL]);
    // On the KRX band table (ticks of 100 won from 50,000 to 200,000): 61,100 × 0.97 = 59,267 → 59,200; × 1.1 = 67,210 → 67,300.
    const krx = new ExitWatch({ stopLossPct: 3, takeProfitPct: 10 }, profileByName('kr_broker_default')!, 'krx_bands');
    krx.arm(61_100);
    expect([krx.stop, krx.stopReason, krx.target]).toEqual([59_200, STOP_LOSS, 67_300]);
  });
});

describe('backtest exits: a run without them', () => {
  // A whipsaw over 400 bars: buy every fourth close, sell two closes later.
  const rows: TRow[] = Array.from({ length: 400 }, (_, i) => [100 + (i % 7), 108 + (i % 3), 95 - (i % 4), 100 + (i % 5)] as const);
  const plan: Record<number, TSignal> = {};
  for (let i = 0; i < 400; i += 4) Object.assign(plan, { [i]: 'buy', [i + 2]: 'sell' });
  const input = { bars: barsOf(rows), strategy: scripted(plan), size: 1, initialCapital: '10000', profile: crypto, tickSize: CENT, fractional: true };
  const whole = (result: EngineResult) => ({ equity: Array.from(result.equity), fills: fillsOf(result), trips: result.trips, tripPnls: Array.from(result.tripPnls), reasons: reasonsOf(result), finalCapital: result.finalCapital });

  it('is the same run with no exits, empty exits or null exits, to the digit', () => {
    const plain = whole(runEngine(input));
    expect(whole(runEngine({ ...input, exits: {} }))).toEqual(plain);
    expect(whole(runEngine({ ...input, exits: exitRulesOf({ stop_loss_pct: null, take_profit_pct: null, trail_pct: null }) }))).toEqual(plain);
    expect(plain.trips).toHaveLength(100);
    // Every trip ended on the strategy's sell (the last one's signal at bar 398 fills at bar 399's open).
    expect(new Set(plain.reasons)).toEqual(new Set([SIGNAL]));
    // With an exit the same run differs (the lows reach a 3 % stop): the comparison can fail.
    expect(whole(runEngine({ ...input, exits: { stopLossPct: 3 } })).finalCapital).not.toBe(plain.finalCapital);
  });

  it('gives the same job outcome without the fields as with them null', () => {
    const job: BacktestJob = { bars: barsOf(rows), warmup: 0, initialCapital: '10000', profileName: 'crypto_default', fractional: true, runs: [{ strategyName: 'sma_crossover', params: { fast: 3, slow: 7, size: 1 }, size: 1 }] };
    const [plain] = runJob(job);
    const [nulls] = runJob({ ...job, exits: exitRulesOf(ZBacktestRequest.parse({ ...REQUEST, stop_loss_pct: null, take_profit_pct: null, trail_pct: null })) });
    expect(nulls).toEqual(plain);
    expect(plain!.fills.length).toBeGreaterThan(10);
  });
});

const REQUEST = {
  symbol: 'AAPL',
  asset_class: 'us_equity',
  strategy_name: 'sma_crossover',
  strategy_params: { fast: 20, slow: 50 },
  start_date: '2025-01-02',
  end_date: '2025-12-31',
  initial_capital: 10000,
  profile_name: 'us_broker_zero',
};

describe('backtest exits: the request', () => {
  it('parses a request without exits exactly as before', () => {
    expect(ZBacktestRequest.parse(REQUEST)).toEqual({ ...REQUEST, timeframe: '1d' });
    expect(exitEchoOf(ZBacktestRequest.parse(REQUEST))).toEqual({ stop_loss_pct: null, take_profit_pct: null, trail_pct: null });
  });

  it('takes the three exits within their bounds, on every request that runs', () => {
    const exits = { stop_loss_pct: 99.5, take_profit_pct: 1000, trail_pct: 50 };
    expect(ZBacktestRequest.parse({ ...REQUEST, ...exits })).toMatchObject(exits);
    expect(ZSweepRequest.parse({ ...REQUEST, ...exits, grid: { fast: [10, 20] } })).toMatchObject(exits);
    expect(ZWalkForwardRequest.parse({ ...REQUEST, ...exits, grid: { fast: [10] }, train_bars: 60, test_bars: 20 })).toMatchObject(exits);
    expect(exitRulesOf(ZBacktestRequest.parse({ ...REQUEST, ...exits }))).toEqual({ stopLossPct: 99.5, takeProfitPct: 1000, trailPct: 50 });
  });

  it.each([
    ['trail_pct', 0],
    ['trail_pct', 51],
    ['trail_pct', -1],
    ['trail_pct', '5'],
    ['stop_loss_pct', 0],
    ['stop_loss_pct', 100],
    ['take_profit_pct', 0],
    ['take_profit_pct', 1000.5],
    ['take_profit_pct', Number.POSITIVE_INFINITY],
    ['trailing_pct', 5],
  ])('refuses %s %s', (key, value) => {
    const body = { ...REQUEST, [key]: value };
    expect(ZBacktestRequest.safeParse(body).success).toBe(false);
    expect(ZSweepRequest.safeParse({ ...body, grid: { fast: [10] } }).success).toBe(false);
    expect(ZWalkForwardRequest.safeParse({ ...body, grid: { fast: [10] }, train_bars: 60, test_bars: 20 }).success).toBe(false);
  });
});
