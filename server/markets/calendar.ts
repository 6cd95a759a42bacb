// Market sessions per asset class: whether a market is open at an instant, which session an order
// placed then belongs to, and when a day order expires. Pure: the instant is always passed in.
import type { TAssetClass } from '../../contracts/common.ts';
import { krxHoursOn, KRX_TIME_ZONE } from './krx.ts';
import { nyseHoursOn, NYSE_TIME_ZONE } from './nyse.ts';
import { addDays, instantAt, localDateTimeOf, parseLocalDate, type TLocalDate, type TLocalHours } from './zoned.ts';

export interface TMarketSession {
  /** True from the opening bell (inclusive) to the closing bell (exclusive). */
  open: boolean;
  /** The exchange-local date of the session `at` is in, or of the next one when closed. */
  sessionDate: TLocalDate;
  opensAt: Date;
  closesAt: Date;
}

export interface MarketInstant {
  assetClass: TAssetClass;
  at: Date;
}

interface ExchangeCalendar {
  timeZone: string;
  hoursOn: (date: TLocalDate) => TLocalHours | null;
}

/** A crypto "day" is the UTC day: its day orders expire at 00:00 UTC, like the daily limits. */
const CRYPTO_DAY: TLocalHours = { opens: '00:00', closes: '24:00' };

const calendars: Record<TAssetClass, ExchangeCalendar> = {
  crypto: { timeZone: 'UTC', hoursOn: () => CRYPTO_DAY },
  us_equity: { timeZone: NYSE_TIME_ZONE, hoursOn: nyseHoursOn },
  kr_equity: { timeZone: KRX_TIME_ZONE, hoursOn: krxHoursOn },
};

/** Longer than any run of closed days either exchange has had (Seollal plus a weekend is 5–6). */
const MAX_CLOSED_DAYS = 30;

/** The session `at` falls in, or the next one to open. */
export const marketSession = ({ assetClass, at }: MarketInstant): TMarketSession => {
  const { timeZone, hoursOn } = calendars[assetClass];
  let date = localDateTimeOf(at, timeZone).date;
  for (let step = 0; step <= MAX_CLOSED_DAYS; step += 1, date = addDays(date, 1)) {
    const hours = hoursOn(date);
    if (!hours) continue;
    const opensAt = instantAt({ date, time: hours.opens, timeZone });
    const closesAt = instantAt({ date, time: hours.closes, timeZone });
    if (at < closesAt) return { open: at >= opensAt, sessionDate: date, opensAt, closesAt };
  }
  throw new Error(`no ${assetClass} session within ${MAX_CLOSED_DAYS} days of ${at.toISOString()}`);
};

/**
 * When a day order placed at `at` expires: the close of the session in progress, else the close
 * of the next session (an order placed on Friday evening lives through Monday's session).
 */
export const nextClose = (instant: MarketInstant): Date => marketSession(instant).closesAt;

/** Whether the market trades at all on an exchange-local date ('YYYY-MM-DD'). */
export const isTradingDay = (assetClass: TAssetClass, localDate: TLocalDate): boolean => {
  parseLocalDate(localDate);
  return calendars[assetClass].hoursOn(localDate) !== null;
};

/**
 * The exchange-local date of the latest session that has opened by `at` (today's once its bell
 * has rung, else the trading day before): the last day a daily bar can exist for.
 */
export const lastOpenedSessionDate = (instant: MarketInstant): TLocalDate => {
  const session = marketSession(instant);
  if (session.open) return session.sessionDate;
  // Closed: `sessionDate` is the next session, not yet opened; step back to the last trading day.
  const { hoursOn } = calendars[instant.assetClass];
  let date = addDays(session.sessionDate, -1);
  for (let step = 0; step <= MAX_CLOSED_DAYS && !hoursOn(date); step += 1) date = addDays(date, -1);
  return date;
};
