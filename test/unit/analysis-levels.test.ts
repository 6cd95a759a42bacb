// The prices a report suggests lie on the instrument's tick grid (DESIGN §6): the buys rounded
// down, the stop loss and the take profit (sells) rounded up, for the heuristic's levels and an
// LLM's alike.
import { describe, expect, it } from 'vitest';
import { decisionAgent, riskAgent, technicalAgent } from '../../server/analysis/agents/index.ts';
import { levelsOnGrid } from '../../server/analysis/agents/levels.ts';
import { runAgents, type TraceStep } from '../../server/analysis/orchestrator.ts';
import type { AnalysisBar, AnalysisInput, LlmClient } from '../../server/analysis/types.ts';
import { roundToKrxTick } from '../../server/instruments/ticks.ts';

const KRX = { rule: 'krx_bands', size: 1 } as const;
const CENTS = { rule: 'fixed', size: '0.01' } as const;

/** Daily closes from 2026-01-01 on, each bar 1 % either side of its close. */
const barsFrom = (closes: readonly number[]): AnalysisBar[] =>
  closes.map((close, i) => ({ date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10), open: close, high: close * 1.01, low: close * 0.99, close, volume: 1_000_000 }));
/** A KRX stock near 100,000 won, drifting up with a wiggle: levels fall in the 100-won band. */
const krxStock: AnalysisInput = {
  assetClass: 'kr_equity',
  symbol: '005930',
  currency: 'KRW',
  bars: barsFrom(Array.from({ length: 120 }, (_, i) => 90_000 * 1.001 ** i * (1 + 0.013 * Math.sin(i)))),
  tick: KRX,
};
const onKrxGrid = (price: number) => roundToKrxTick(price, 'down').toNumber() === price;

describe('levelsOnGrid', () => {
  it('puts KRX levels on the band’s tick: the ideal buy of 94,914 is 94,900, the stop and the target go up', () => {
    expect(levelsOnGrid({ ideal_buy: 94_914, secondary_buy: 93_050.5, stop_loss: 90_010, take_profit: 101_234 }, KRX)).toEqual({
      ideal_buy: 94_900,
      secondary_buy: 93_000,
      stop_loss: 90_100,
      take_profit: 101_300,
    });
    // Each price takes the tick of its own band: 4,999.2 (tick 5), 1,999.4 (tick 1), 5,012 (tick 10).
    expect(levelsOnGrid({ ideal_buy: 4_999.2, secondary_buy: 1_999.4, stop_loss: 1_500.5, take_profit: 5_012 }, KRX)).toEqual({
      ideal_buy: 4_995,
      secondary_buy: 1_999,
      stop_loss: 1_501,
      take_profit: 5_020,
    });
  });

  it('keeps the stop below the buys: a stop that rounding up would lift to a buy goes down instead', () => {
    expect(levelsOnGrid({ ideal_buy: 10.205, secondary_buy: 10.101, stop_loss: 10.095, take_profit: 11.001 }, CENTS)).toEqual({
      ideal_buy: 10.2,
      secondary_buy: 10.1,
      stop_loss: 10.09,
      take_profit: 11.01,
    });
  });

  it('leaves what is no price alone, and a buy below the first tick at the first tick', () => {
    expect(levelsOnGrid({ ideal_buy: 0.004, secondary_buy: null, stop_loss: -1, take_profit: Number.NaN }, CENTS)).toEqual({
      ideal_buy: 0.01,
      secondary_buy: null,
      stop_loss: -1,
      take_profit: Number.NaN,
    });
  });
});

describe('the decision’s levels', () => {
  it('are on the KRX grid in the heuristic’s decision, and its reasoning names those prices', () => {
    const technical = technicalAgent.heuristic(krxStock);
    const decision = decisionAgent.heuristic({ input: krxStock, technical, intel: null, risk: riskAgent.heuristic({ input: krxStock, technical }), debate: [] });
    const levels = [decision.ideal_buy, decision.secondary_buy, decision.stop_loss, decision.take_profit];
    for (const level of levels) expect(onKrxGrid(level!), String(level)).toBe(true);
    // Prices around 100,000 won: the 100-won band.
    expect(levels.every((level) => level! % 100 === 0)).toBe(true);
    expect(decision.reasoning).toContain(`ideal buy ${decision.ideal_buy!.toFixed(2)} `);
  });

  it('are on the grid when an LLM answers off it: the report and its trace keep the grid’s prices', async () => {
    const offGrid = { ideal_buy: 94_914, secondary_buy: 93_050, stop_loss: 90_010, take_profit: 101_234 };
    const answers: Record<string, unknown> = {
      technical: { signal: 'buy', confidence: 0.6, reasoning: 'trend up', indicators: {}, trend: 'up', momentum: 'positive' },
      decision: { signal: 'buy', confidence: 0.6, score: 0.5, ...offGrid, currency: 'KRW', reasoning: 'levels from the close' },
    };
    const llm: LlmClient = {
      provider: 'openai',
      model: 'fake',
      complete: ({ system }) =>
        Promise.resolve({ text: JSON.stringify(system.startsWith('You are the decider') ? answers.decision : answers.technical), tokensInput: 1, tokensOutput: 1, latencyMs: 0, model: 'fake', costUsd: 0, attempts: 1 }),
    };
    const steps: TraceStep[] = [];
    const outcome = await runAgents({
      input: krxStock,
      mode: 'quick',
      debateRounds: 0,
      llm,
      intel: null,
      caps: { tokensPerCall: 1_000, tokensPerReport: 10_000, reportTimeoutMs: 60_000, callTimeoutMs: 60_000 },
      onStep: (step) => {
        steps.push(step);
        return Promise.resolve();
      },
    });
    const onGrid = { ideal_buy: 94_900, secondary_buy: 93_000, stop_loss: 90_100, take_profit: 101_300 };
    expect(outcome.decision).toMatchObject(onGrid);
    expect(JSON.parse(steps.find((step) => step.agentName === 'decision')!.content)).toMatchObject(onGrid);
  });
});
