// The portfolio history's points from snapshots and flows (server/portfolio/history.ts): a past
// day ends at the next day's start, today at the account now; a day without an end gives no point
// and its flows move to the next; pnl leaves the flows out.
import { describe, expect, it } from 'vitest';
import { ExactDecimal } from '../../server/decimal.ts';
import { historyPoints } from '../../server/portfolio/history.ts';

const snapshot = (day: string, equity: string, cash: string | null = null) => ({ day, equity, cash });
const live = { equity: '1000', cash: '400' };
/** a / b as the service computes it: in decimals, then a number. */
const ratio = (a: string, b: string) => new ExactDecimal(a).dividedBy(b).toNumber();

describe('historyPoints', () => {
  it('gives nothing before the first snapshot', () => {
    expect(historyPoints({ snapshots: [], flows: new Map(), from: '2026-01-01', to: '2026-01-05', today: '2026-01-05', live })).toEqual({ baseValue: null, points: [] });
  });

  it('ends each past day at the next start and today at the account now, with exact sums', () => {
    const { baseValue, points } = historyPoints({
      snapshots: [snapshot('2026-01-02', '100.1', '100.1'), snapshot('2026-01-03', '100.3', '50.2'), snapshot('2026-01-04', '90.2')],
      flows: new Map([['2026-01-03', '-10']]),
      from: '2026-01-01',
      to: '2026-01-04',
      today: '2026-01-04',
      live: { equity: '90.3', cash: '0.1' },
    });
    expect(baseValue).toBe(100.1);
    expect(points).toEqual([
      { date: '2026-01-02', equity: 100.3, cash: 50.2, flows: 0, pnl: 0.2, pnl_pct: ratio('0.2', '100.1') },
      // 100.3 − 10 of flow = 90.3: the day lost 0.1.
      { date: '2026-01-03', equity: 90.2, cash: null, flows: -10, pnl: -0.1, pnl_pct: ratio('-0.1', '100.3') },
      { date: '2026-01-04', equity: 90.3, cash: 0.1, flows: 0, pnl: 0.1, pnl_pct: ratio('0.1', '90.2') },
    ]);
  });

  it('skips a day without an end, its flows counted with the next point', () => {
    const { points } = historyPoints({
      snapshots: [snapshot('2026-01-01', '100'), snapshot('2026-01-02', '110'), snapshot('2026-01-04', '80')],
      flows: new Map([['2026-01-02', '-20']]),
      from: '2026-01-01',
      to: '2026-01-05',
      today: '2026-01-09',
      live,
    });
    // 2026-01-02 has no end (no snapshot on the 3rd); the 3rd ends at the 4th's start; the 4th and 5th have no end.
    expect(points.map(({ date, equity, flows, pnl }) => ({ date, equity, flows, pnl }))).toEqual([
      { date: '2026-01-01', equity: 110, flows: 0, pnl: 10 },
      { date: '2026-01-03', equity: 80, flows: -20, pnl: -10 },
    ]);
  });

  it('starts from the first day that has a start, and has no percentage over an empty account', () => {
    const { baseValue, points } = historyPoints({
      snapshots: [snapshot('2026-01-02', '0'), snapshot('2026-01-03', '50')],
      flows: new Map([['2026-01-01', '999']]),
      from: '2026-01-01',
      to: '2026-01-02',
      today: '2026-01-09',
      live,
    });
    expect(baseValue).toBe(0);
    expect(points).toEqual([{ date: '2026-01-02', equity: 50, cash: null, flows: 0, pnl: 50, pnl_pct: null }]);
  });
});
