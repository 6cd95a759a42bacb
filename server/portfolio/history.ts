// The points of an account's portfolio history (DESIGN §6), from its day-start snapshots and
// flows: a point per UTC day whose end is known. A day ends where the next day starts, so a past
// day's equity and cash are the next day's start snapshot; today's point is the account as it is
// now. A day without a next snapshot (nothing evaluated the account that day: no point is
// invented for it) gives no point, and its flows count with the next point's.
import type { TPortfolioPoint } from '../../contracts/portfolio.ts';
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';
import type { StoredSnapshot } from './queries.ts';

const DAY_MS = 86_400_000;
const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);

export interface HistoryInputs {
  /** Snapshots of the days from `from` through the day after `to`. */
  snapshots: readonly StoredSnapshot[];
  /** Flows summed by day, decimal text. */
  flows: ReadonlyMap<string, string>;
  from: string;
  /** The last day (at most `today`). */
  to: string;
  today: string;
  /** The account now: today's point. */
  live: { equity: string; cash: string };
}

export interface HistoryPoints {
  /** The equity before the first point; null without points. */
  baseValue: number | null;
  points: TPortfolioPoint[];
}

export const historyPoints = ({ snapshots, flows, from, to, today, live }: HistoryInputs): HistoryPoints => {
  const startOf = new Map(snapshots.map((snapshot) => [snapshot.day, snapshot]));
  const points: TPortfolioPoint[] = [];
  let baseValue: Decimal | undefined;
  let previous: Decimal | undefined;
  // Flows of the days since the last point, for a point that ends a gap.
  let pendingFlows: Decimal = new ExactDecimal(0);
  for (let day = from; day <= to; day = nextDay(day)) {
    pendingFlows = pendingFlows.plus(flows.get(day) ?? 0);
    const end = day === today ? live : startOf.get(nextDay(day));
    if (previous === undefined) {
      // The first point starts from its own day's snapshot: without one, nothing before it is known.
      const start = startOf.get(day);
      if (start === undefined) {
        pendingFlows = new ExactDecimal(0);
        continue;
      }
      previous = baseValue = new ExactDecimal(start.equity);
    }
    // A day without an end: the next point starts where this day did.
    if (end === undefined) continue;
    const equity = new ExactDecimal(end.equity);
    const pnl = equity.minus(previous).minus(pendingFlows);
    points.push({
      date: day,
      equity: equity.toNumber(),
      cash: end.cash === null ? null : new ExactDecimal(end.cash).toNumber(),
      flows: pendingFlows.toNumber(),
      pnl: pnl.toNumber(),
      pnl_pct: previous.gt(0) ? pnl.dividedBy(previous).toNumber() : null,
    });
    previous = equity;
    pendingFlows = new ExactDecimal(0);
  }
  return { baseValue: points.length > 0 && baseValue !== undefined ? baseValue.toNumber() : null, points };
};
