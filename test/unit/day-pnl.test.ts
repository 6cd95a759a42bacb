// The day so far in an account's metadata: exact decimals for money, fractions for percentages,
// null until the day's snapshot, and the kill switch's lines; and the agent steps a mode plans.
import { describe, expect, it } from 'vitest';
import { plannedAgentSteps } from '../../server/analysis/orchestrator.ts';
import { dayPnlOf } from '../../server/controls/day-pnl.ts';
import { dailyPnlPct } from '../../server/controls/day-start.ts';
import { ExactDecimal } from '../../server/decimal.ts';

const LINES = { day_pnl_alert_pct: -0.04, day_pnl_lock_pct: -0.05 };

describe('dayPnlOf', () => {
  it('is null without a snapshot, the lines still there', () => {
    expect(dayPnlOf({ equity: '100000', dayStartEquity: null, flows: '0' })).toEqual({ day_start_equity: null, day_flows: '0', day_pnl: null, day_pnl_pct: null, ...LINES });
  });

  it('subtracts exactly, with no binary float on the way (0.3 − 0.1 leaves 0.2)', () => {
    expect(dayPnlOf({ equity: '0.1', dayStartEquity: '0.3', flows: '0' })).toMatchObject({ day_start_equity: '0.3', day_pnl: '-0.2' });
    expect(dayPnlOf({ equity: '100000', dayStartEquity: '100000.30000000000000000001', flows: '0' }).day_pnl).toBe('-0.30000000000000000001');
  });

  it('gives the percentage as a fraction, on the lines exactly where the kill switch draws them', () => {
    expect(dayPnlOf({ equity: '96000', dayStartEquity: '100000', flows: '0' })).toEqual({ day_start_equity: '100000', day_flows: '0', day_pnl: '-4000', day_pnl_pct: -0.04, ...LINES });
    expect(dayPnlOf({ equity: '95000', dayStartEquity: '100000', flows: '0' }).day_pnl_pct).toBe(-0.05);
    expect(dayPnlOf({ equity: '110000', dayStartEquity: '100000', flows: '0' }).day_pnl_pct).toBe(0.1);
  });

  it('takes today’s flows (paper resets) out of the day’s P&L: a reset is no loss, and hides none', () => {
    // A winning day's 7000 handed back by a reset: nothing lost today.
    expect(dayPnlOf({ equity: '100000', dayStartEquity: '107000', flows: '-7000' })).toEqual({ day_start_equity: '107000', day_flows: '-7000', day_pnl: '0', day_pnl_pct: 0, ...LINES });
    // A loss of 6000, then a reset that puts 6000 back: still −6000.
    expect(dayPnlOf({ equity: '100000', dayStartEquity: '100000', flows: '6000' })).toMatchObject({ day_pnl: '-6000', day_pnl_pct: -0.06 });
    expect(dailyPnlPct({ equity: new ExactDecimal('0.3'), dayStartEquity: new ExactDecimal('1'), flows: '0.1' })?.toFixed()).toBe('-80');
  });

  it('has no percentage of an empty day-start account', () => {
    expect(dayPnlOf({ equity: '5', dayStartEquity: '0', flows: '0' })).toMatchObject({ day_start_equity: '0', day_pnl: '5', day_pnl_pct: null });
  });
});

describe('plannedAgentSteps', () => {
  it('plans 2 steps for quick, 4 for standard, and 4 + 2 per debate round for full', () => {
    expect(plannedAgentSteps('quick', 3)).toBe(2);
    expect(plannedAgentSteps('standard', 3)).toBe(4);
    expect(plannedAgentSteps('full', 1)).toBe(6);
    expect(plannedAgentSteps('full', 3)).toBe(10);
  });
});
