// The day-start equity snapshot of an account and the daily P&L % measured on it: the risk
// manager's daily loss bound and the kill switch read the same snapshot through the same arithmetic
// (their lines differ: see kill-switch-lines.ts).
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';

/** An account's equity as it stood at its first evaluation of a UTC day ('YYYY-MM-DD'). */
export interface DayStartSnapshot {
  utcDate: string;
  equity: Decimal;
}

export const utcDateOf = (at: Date): string => at.toISOString().slice(0, 10);

export interface SnapshotOptions {
  /** The snapshot the caller keeps for this account, if any. */
  held: DayStartSnapshot | null | undefined;
  /** The account's equity now. */
  equity: Decimal;
  at: Date;
}

/**
 * The day-start snapshot in force at `at`: the held one while it is of the same UTC day, else a
 * new one of today's equity (this evaluation is the day's first). A result that is not `held`
 * is new and the caller stores it; the daily P&L resets at 00:00 UTC like the live daily limit.
 */
export const dayStartSnapshot = ({ held, equity, at }: SnapshotOptions): DayStartSnapshot => {
  const utcDate = utcDateOf(at);
  return held?.utcDate === utcDate ? held : { utcDate, equity };
};

/**
 * Daily P&L in percent: (equity − day-start equity − today's flows) / day-start equity × 100. The
 * flows (a paper reset's change of equity) are no result of the day's trading: a reset after a
 * winning day is no loss, and a reset cannot hide one. Null when the day-start equity is zero or
 * less, where no percentage means anything (an empty account).
 */
export const dailyPnlPct = ({ equity, dayStartEquity, flows }: { equity: Decimal; dayStartEquity: Decimal; flows: Decimal.Value }): Decimal | null => {
  const start = new ExactDecimal(dayStartEquity);
  if (start.lte(0)) return null;
  return dailyPnl({ equity, dayStartEquity: start, flows }).dividedBy(start).times(100);
};

/** The day's P&L in money: equity − day-start equity − today's flows. */
export const dailyPnl = ({ equity, dayStartEquity, flows }: { equity: Decimal.Value; dayStartEquity: Decimal.Value; flows: Decimal.Value }): Decimal =>
  new ExactDecimal(equity).minus(dayStartEquity).minus(flows);
