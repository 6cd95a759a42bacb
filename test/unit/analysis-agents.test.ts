// Analysis agents: indicator values against hand-computed ones, and each agent's heuristic on
// synthetic bars (trend, short history, noise, no bars): schema-valid, deterministic, and with
// prompts that name the symbol and the JSON fields they ask for.
import { describe, expect, it } from 'vitest';
import {
  bearAgent,
  bullAgent,
  decisionAgent,
  intelAgent,
  PROMPT_VERSION,
  riskAgent,
  technicalAgent,
  type DecisionContext,
  type TTechnicalOutput,
} from '../../server/analysis/agents/index.ts';
import {
  annualisedVolatility,
  atr,
  averageDailyValue,
  bollinger,
  ema,
  macd,
  maxDrawdown,
  periodReturn,
  rsi,
  sma,
} from '../../server/analysis/agents/indicators.ts';
import type { AnalysisBar, AnalysisInput } from '../../server/analysis/types.ts';

// --- synthetic bars ---

const dateOf = (i: number): string => new Date(Date.UTC(2025, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);

/** Bars from closes: high and low 1% around the close, a fixed volume. */
const barsFrom = (closes: readonly number[], volume = 1_000_000): AnalysisBar[] =>
  closes.map((close, i) => ({ date: dateOf(i), open: close, high: close * 1.01, low: close * 0.99, close, volume }));

/** A steady drift with a small wiggle, so the averages line up but RSI is not pinned at 100. */
const trending = (length: number, dailyDrift: number): number[] =>
  Array.from({ length }, (_, i) => 100 * (1 + dailyDrift) ** i * (1 + 0.01 * Math.sin(i)));

/** A deterministic random walk with daily moves of up to ±`amplitude` (a linear congruential generator). */
const noisy = (length: number, amplitude: number, seed = 7): number[] => {
  let state = seed;
  const next = (): number => {
    state = (state * 1_664_525 + 1_013_904_223) % 4_294_967_296;
    return state / 4_294_967_296;
  };
  const closes: number[] = [];
  let price = 100;
  for (let i = 0; i < length; i++) {
    price *= 1 + (next() * 2 - 1) * amplitude;
    closes.push(price);
  }
  return closes;
};

const inputOf = (bars: AnalysisBar[], overrides: Partial<AnalysisInput> = {}): AnalysisInput => ({
  assetClass: 'us_equity',
  symbol: 'ACME',
  currency: 'USD',
  bars,
  // The registry's grids: KRX's bands for Korean stocks, cents otherwise.
  tick: overrides.assetClass === 'kr_equity' ? { rule: 'krx_bands', size: 1 } : { rule: 'fixed', size: '0.01' },
  ...overrides,
});

const uptrend = inputOf(barsFrom(trending(250, 0.004)));
const downtrend = inputOf(barsFrom(trending(250, -0.004)));

/** Every agent of a full run over one input, heuristics only. */
const runAll = (input: AnalysisInput) => {
  const technical = technicalAgent.heuristic(input);
  const intel = intelAgent.heuristic({ input, items: null });
  const risk = riskAgent.heuristic({ input, technical });
  const bull = bullAgent.heuristic({ input, technical, intel, risk, round: 1, transcript: [] });
  const bear = bearAgent.heuristic({ input, technical, intel, risk, round: 1, transcript: [bull] });
  const decisionContext: DecisionContext = { input, technical, intel, risk, debate: [bull, bear] };
  const decision = decisionAgent.heuristic(decisionContext);
  return { technical, intel, risk, bull, bear, decision, decisionContext };
};

describe('indicators', () => {
  it('sma is the mean of the last period values, null when short', () => {
    expect(sma([1, 2, 3, 4, 5], 3)).toBe(4);
    expect(sma([1, 2, 3, 4, 5], 5)).toBe(3);
    expect(sma([1, 2], 3)).toBeNull();
  });

  it('ema is seeded with the first mean, then alpha = 2 / (period + 1)', () => {
    // Seed mean(2, 4, 6) = 4; alpha 0.5: 4 + 0.5 × (8 − 4) = 6; 6 + 0.5 × (12 − 6) = 9.
    expect(ema([2, 4, 6, 8, 12], 3)).toBe(9);
    expect(ema([2, 4], 3)).toBeNull();
  });

  it("rsi follows Wilder's smoothing on a hand-worked sequence", () => {
    // Changes +1, −0.5, +1 | −0.5, +1. Seed: gain 2/3, loss 1/6. Then gain 4/9, loss 5/18;
    // then gain 17/27, loss 5/27: RS 3.4, RSI = 100 − 100 / 4.4.
    expect(rsi([10, 11, 10.5, 11.5, 11, 12], 3)).toBeCloseTo(100 - 100 / 4.4, 10);
    expect(rsi([10, 11, 10.5], 3)).toBeNull();
    expect(rsi([5, 6, 7, 8], 3)).toBe(100);
    expect(rsi([5, 5, 5, 5], 3)).toBe(50);
  });

  it("rsi14's first value on the textbook sequence (StockCharts' 70.53 rounds its averages first)", () => {
    const closes = [44.34, 44.09, 44.15, 43.61, 44.33, 44.83, 45.1, 45.42, 45.84, 46.08, 45.89, 46.03, 45.61, 46.28, 46.28];
    // Gains 0.06 + 0.72 + 0.50 + 0.27 + 0.32 + 0.42 + 0.24 + 0.14 + 0.67 = 3.34; losses 0.25 + 0.54 + 0.19 + 0.42 = 1.40.
    expect(rsi(closes)).toBeCloseTo(100 - 100 / (1 + 3.34 / 1.4), 9);
    expect(rsi(closes)).toBeCloseTo(70.46, 2);
    expect(rsi(closes.slice(0, 14))).toBeNull();
  });

  it("atr is Wilder's average of true ranges from the second bar", () => {
    const highs = [10, 11, 12, 11, 13];
    const lows = [8, 9, 10, 10, 10.5];
    const closes = [9, 10, 11.5, 10.5, 12.5];
    // True ranges 2, 2, 1.5 (the gap from 11.5 down to 10), 2.5; seed (2 + 2 + 1.5) / 3 = 11/6,
    // then 11/6 + (2.5 − 11/6) / 3 = 37/18.
    expect(atr(highs, lows, closes, 3)).toBeCloseTo(37 / 18, 12);
    expect(atr(highs.slice(0, 3), lows.slice(0, 3), closes.slice(0, 3), 3)).toBeNull();
  });

  it('max drawdown is the deepest fall from a running peak, a negative fraction', () => {
    expect(maxDrawdown([100, 120, 90, 110, 60, 130])).toBe(-0.5);
    expect(maxDrawdown([1, 2, 3])).toBe(0);
    expect(maxDrawdown([1])).toBeNull();
  });

  it('volatility annualises the sample deviation of log returns, by 365 for crypto', () => {
    const returns = [Math.log(110 / 100), Math.log(99 / 110)];
    const mean = (returns[0]! + returns[1]!) / 2;
    const sampleVariance = ((returns[0]! - mean) ** 2 + (returns[1]! - mean) ** 2) / 1;
    expect(annualisedVolatility([100, 110, 99], 'us_equity')).toBeCloseTo(Math.sqrt(sampleVariance * 252), 12);
    expect(annualisedVolatility([100, 110, 99], 'crypto')).toBeCloseTo(Math.sqrt(sampleVariance * 365), 12);
    expect(annualisedVolatility([100, 110], 'us_equity')).toBeNull();
  });

  it('macd, bollinger, traded value and returns', () => {
    expect(macd(Array.from({ length: 33 }, () => 10))).toBeNull();
    expect(macd(Array.from({ length: 34 }, () => 10))).toEqual({ line: 0, signal: 0, histogram: 0 });
    const m = macd(trending(120, 0.01))!;
    expect(m.line).toBeGreaterThan(0);
    expect(m.histogram).toBeCloseTo(m.line - m.signal, 12);

    const band = bollinger([1, 2, 3, 4, 5], 5, 2)!;
    expect(band.middle).toBe(3);
    expect(band.upper).toBeCloseTo(3 + 2 * Math.SQRT2, 12);
    expect(band.lower).toBeCloseTo(3 - 2 * Math.SQRT2, 12);
    expect(band.percentB).toBeCloseTo((5 - band.lower) / (band.upper - band.lower), 12);

    expect(averageDailyValue([10, 20, 30], [1, 2, 3], 2)).toBe((40 + 90) / 2);
    expect(averageDailyValue([10], [1], 2)).toBeNull();
    expect(periodReturn([100, 105, 110], 2)).toBeCloseTo(0.1, 12);
    expect(periodReturn([100, 105], 2)).toBeNull();
  });
});

describe('technical agent', () => {
  it('reads a steady uptrend as buy, trend up', () => {
    const out = technicalAgent.heuristic(uptrend);
    expect(technicalAgent.schema.parse(out)).toEqual(out);
    expect(out.signal).toBe('buy');
    expect(out.trend).toBe('up');
    expect(out.momentum).toBe('positive');
    expect(out.confidence).toBeGreaterThan(0.5);
    expect(out.reasoning).toMatch(/Close \d+\.\d{2} is above SMA20/);
    expect(out.reasoning).toContain(`SMA200 ${out.indicators.sma200!.toFixed(2)}`);
  });

  it('reads a steady downtrend as sell, trend down', () => {
    const out = technicalAgent.heuristic(downtrend);
    expect(technicalAgent.schema.safeParse(out).success).toBe(true);
    expect(out.signal).toBe('sell');
    expect(out.trend).toBe('down');
    expect(out.momentum).toBe('negative');
  });

  it('holds at confidence 0 on a short history and says so', () => {
    const out = technicalAgent.heuristic(inputOf(uptrend.bars.slice(0, 20)));
    expect(technicalAgent.schema.safeParse(out).success).toBe(true);
    expect(out).toMatchObject({ signal: 'hold', confidence: 0, trend: 'sideways', momentum: 'neutral' });
    expect(out.reasoning).toMatch(/too short/);
    expect(out.reasoning).toContain('20 daily bars');
    expect(out.indicators.sma20).not.toBeNull();
    expect(out.indicators.sma50).toBeNull();

    const none = technicalAgent.heuristic(inputOf([]));
    expect(none).toMatchObject({ signal: 'hold', confidence: 0 });
    expect(technicalAgent.schema.safeParse(none).success).toBe(true);
  });
});

describe('intel agent', () => {
  it('stays neutral without a source and says none is configured', () => {
    const out = intelAgent.heuristic({ input: uptrend, items: null });
    expect(intelAgent.schema.parse(out)).toEqual(out);
    expect(out).toMatchObject({ signal: 'hold', confidence: 0, sources: [] });
    expect(out.reasoning).toMatch(/no news or fundamentals source is configured/i);
  });

  it('stays neutral when the source finds nothing', () => {
    const out = intelAgent.heuristic({ input: uptrend, items: [] });
    expect(out).toMatchObject({ signal: 'hold', confidence: 0, sources: [] });
    expect(out.reasoning).toMatch(/no items/);
  });

  it('lists the headlines it saw and holds at low confidence; the prompt quotes them', () => {
    const items = [{ headline: 'ACME beats estimates', url: 'https://example.test/a' }, { headline: 'ACME opens a plant', summary: 'In Ohio.' }];
    const out = intelAgent.heuristic({ input: uptrend, items });
    expect(intelAgent.schema.safeParse(out).success).toBe(true);
    expect(out.signal).toBe('hold');
    expect(out.confidence).toBeGreaterThan(0);
    expect(out.confidence).toBeLessThanOrEqual(0.2);
    expect(out.sources).toEqual(['ACME beats estimates', 'ACME opens a plant']);
    const { system, user } = intelAgent.prompt({ input: uptrend, items });
    expect(user).toContain('ACME beats estimates');
    expect(user).toContain('In Ohio.');
    expect(system).toMatch(/only the items/i);
  });
});

describe('risk agent', () => {
  it('flags high volatility on a noisy series and vetoes a buy', () => {
    const input = inputOf(barsFrom(noisy(250, 0.06)));
    const bullish: TTechnicalOutput = { signal: 'buy', confidence: 0.9, reasoning: 'assumed', indicators: {}, trend: 'up', momentum: 'positive' };
    const risk = riskAgent.heuristic({ input, technical: bullish });
    expect(riskAgent.schema.parse(risk)).toEqual(risk);
    expect(risk.flags).toContain('high_volatility');
    expect(risk.volatility).toBeGreaterThan(0.45);
    expect(risk.risk_level).toBe('high');
    expect(risk.veto_buy).toBe(true);
    expect(risk.reasoning).toContain('high_volatility');

    const decision = decisionAgent.heuristic({ input, technical: bullish, intel: null, risk, debate: [] });
    expect(decision.score).toBeGreaterThanOrEqual(0.2);
    expect(decision.signal).toBe('hold');
    expect(decision.reasoning).toMatch(/veto/);
  });

  it('is low on a calm uptrend, and vetoes a downtrend with negative momentum', () => {
    const calm = runAll(uptrend).risk;
    expect(calm).toMatchObject({ risk_level: 'low', veto_buy: false, flags: [] });
    expect(calm.atr_stop).toBeCloseTo(uptrend.bars.at(-1)!.close - 2 * calm.atr!, 10);

    const falling = runAll(downtrend).risk;
    expect(falling.flags).toContain('downtrend');
    expect(falling.veto_buy).toBe(true);
  });

  it('flags low liquidity by the asset class threshold and a short history', () => {
    const thin = inputOf(barsFrom(trending(40, 0.001), 100));
    const risk = riskAgent.heuristic({ input: thin, technical: technicalAgent.heuristic(thin) });
    expect(risk.flags).toEqual(expect.arrayContaining(['low_liquidity', 'short_history']));
    // 100 shares at ~100 USD is thin; the same value in won is thinner still against 1e9 KRW.
    const won = inputOf(barsFrom(trending(80, 0.001).map((c) => c * 700), 10_000), { assetClass: 'kr_equity', currency: 'KRW' });
    expect(riskAgent.heuristic({ input: won, technical: technicalAgent.heuristic(won) }).flags).toContain('low_liquidity');
  });
});

describe('debate agents', () => {
  it('argue their own side from the facts and answer the other side later', () => {
    const { technical, intel, risk, bull, bear } = runAll(uptrend);
    expect(bullAgent.schema.parse(bull)).toEqual(bull);
    expect(bearAgent.schema.parse(bear)).toEqual(bear);
    expect(bull.stance).toBe('bull');
    expect(bear.stance).toBe('bear');
    expect(bull.confidence).toBeGreaterThan(bear.confidence);
    expect(bull.argument).toMatch(/trend is up/);
    expect(bear.argument).toMatch(/the bull's point/);

    const second = bullAgent.heuristic({ input: uptrend, technical, intel, risk, round: 2, transcript: [bull, bear] });
    expect(second.argument).toMatch(/the bear's point|The bear has no fact/);
    expect(second.argument).not.toBe(bull.argument);

    const down = runAll(downtrend);
    expect(down.bear.confidence).toBeGreaterThan(down.bull.confidence);
  });
});

describe('decision agent', () => {
  it('buys a calm uptrend with ordered levels in the input currency', () => {
    const { decision } = runAll(uptrend);
    expect(decisionAgent.schema.parse(decision)).toEqual(decision);
    expect(decision.signal).toBe('buy');
    expect(decision.score).toBeGreaterThan(0);
    expect(decision.score).toBeLessThanOrEqual(1);
    expect(decision.currency).toBe('USD');
    const close = uptrend.bars.at(-1)!.close;
    const { ideal_buy, secondary_buy, stop_loss, take_profit } = decision;
    expect(secondary_buy!).toBeLessThan(ideal_buy!);
    expect(ideal_buy!).toBeLessThan(close);
    expect(close).toBeLessThan(take_profit!);
    expect(stop_loss!).toBeLessThan(secondary_buy!);
    for (const level of [ideal_buy, secondary_buy, stop_loss, take_profit]) expect(level).toBe(Math.round(level! * 100) / 100);
  });

  it('sells a downtrend', () => {
    expect(runAll(downtrend).decision.signal).toBe('sell');
  });

  it('rounds won prices to whole won and keeps decimals below 1', () => {
    const won = inputOf(barsFrom(trending(250, 0.004).map((c) => c * 700), 1e6), { assetClass: 'kr_equity', currency: 'KRW' });
    const decision = runAll(won).decision;
    expect(decision.currency).toBe('KRW');
    for (const level of [decision.ideal_buy, decision.secondary_buy, decision.stop_loss, decision.take_profit]) expect(Number.isInteger(level)).toBe(true);

    const penny = inputOf(barsFrom(trending(250, 0.004).map((c) => c / 1000), 1e10), { assetClass: 'crypto', currency: 'USDT', tick: { rule: 'fixed', size: '0.00001' } });
    const small = runAll(penny).decision;
    expect(small.ideal_buy!).toBeGreaterThan(0);
    expect(small.secondary_buy!).toBeLessThan(small.ideal_buy!);
    expect(small.ideal_buy!).not.toBe(Math.round(small.ideal_buy! * 100) / 100);
  });

  it('holds with null levels when there are no bars', () => {
    const input = inputOf([]);
    const technical = technicalAgent.heuristic(input);
    const decision = decisionAgent.heuristic({ input, technical, intel: null, risk: riskAgent.heuristic({ input, technical }), debate: [] });
    expect(decisionAgent.schema.parse(decision)).toEqual(decision);
    expect(decision).toMatchObject({ signal: 'hold', confidence: 0, score: 0, ideal_buy: null, secondary_buy: null, stop_loss: null, take_profit: null, currency: 'USD' });
    expect(decision.reasoning).toMatch(/No daily bars/);
  });

  it('draws levels from the bars there are when ATR14 is out of reach', () => {
    const input = inputOf(uptrend.bars.slice(0, 5));
    const technical = technicalAgent.heuristic(input);
    const decision = decisionAgent.heuristic({ input, technical, intel: null, risk: null, debate: [] });
    expect(decision.signal).toBe('hold');
    expect(decision.stop_loss!).toBeLessThan(decision.secondary_buy!);
    expect(decision.secondary_buy!).toBeLessThan(decision.ideal_buy!);
  });
});

describe('prompts and determinism', () => {
  it('name the symbol and the JSON fields asked for', () => {
    const { technical, intel, risk, bull, decisionContext } = runAll(uptrend);
    const debateContext = { input: uptrend, technical, intel, risk, round: 2, transcript: [bull] };
    const prompts: [string, { system: string; user: string }, string[]][] = [
      ['technical', technicalAgent.prompt(uptrend), ['signal', 'confidence', 'reasoning', 'indicators', 'trend', 'momentum']],
      ['intel', intelAgent.prompt({ input: uptrend, items: null }), ['signal', 'confidence', 'reasoning', 'sources']],
      ['risk', riskAgent.prompt({ input: uptrend, technical }), ['risk_level', 'veto_buy', 'flags', 'volatility', 'max_drawdown', 'atr', 'atr_stop', 'reasoning']],
      ['bull', bullAgent.prompt(debateContext), ['stance', 'argument', 'confidence']],
      ['bear', bearAgent.prompt(debateContext), ['stance', 'argument', 'confidence']],
      ['decision', decisionAgent.prompt(decisionContext), ['signal', 'confidence', 'score', 'ideal_buy', 'secondary_buy', 'stop_loss', 'take_profit', 'currency', 'reasoning']],
    ];
    for (const [name, { system, user }, fields] of prompts) {
      expect(user, name).toContain('ACME');
      for (const field of fields) expect(system, `${name}: ${field}`).toContain(`"${field}"`);
    }
    const technicalUser = technicalAgent.prompt(uptrend).user;
    expect(technicalUser).toContain('us_equity');
    expect(technicalUser).toContain('USD');
    expect(technicalUser).toContain(uptrend.bars.at(-1)!.date);
    expect(technicalUser).toContain('rsi14');
    // Only the last 30 closes travel, not the whole history.
    expect(technicalUser).not.toContain(String(uptrend.bars[0]!.close));
    expect(PROMPT_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
  });

  it('give the same output for the same input', () => {
    for (const input of [uptrend, downtrend, inputOf(barsFrom(noisy(120, 0.05))), inputOf([])]) {
      const first = runAll(input);
      const second = runAll(structuredClone(input));
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
      expect(technicalAgent.prompt(input)).toEqual(technicalAgent.prompt(structuredClone(input)));
    }
  });
});
