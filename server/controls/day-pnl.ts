// Today's P&L of an account as GET /api/equity/account shows it in `metadata`: the day-start
// equity snapshot the daily loss bound and the kill switch read, today's flows (paper resets),
// the change since less those flows, and the kill switch's lines, so a client can draw where the
// alert and the lock fall. Percentages are fractions here, like every other `_pct` field of the
// interface (−0.04 is −4 %).
import type { TAccountDayPnl } from '../../contracts/simulator.ts';
import { ExactDecimal } from '../decimal.ts';
import { dailyPnl, dailyPnlPct } from './day-start.ts';
import { LOCK_PCT, WARN_PCT } from './kill-switch-lines.ts';

const ALERT_FRACTION = WARN_PCT.dividedBy(100).toNumber();
const LOCK_FRACTION = LOCK_PCT.dividedBy(100).toNumber();

/** `flows`: today's flows of the account (its paper resets), '0' without any. */
export const dayPnlOf = ({ equity, dayStartEquity, flows }: { equity: string; dayStartEquity: string | null; flows: string }): TAccountDayPnl => {
  const lines = { day_pnl_alert_pct: ALERT_FRACTION, day_pnl_lock_pct: LOCK_FRACTION };
  const dayFlows = new ExactDecimal(flows).toFixed();
  if (dayStartEquity === null) return { day_start_equity: null, day_flows: dayFlows, day_pnl: null, day_pnl_pct: null, ...lines };
  const now = new ExactDecimal(equity);
  const start = new ExactDecimal(dayStartEquity);
  const pct = dailyPnlPct({ equity: now, dayStartEquity: start, flows });
  return {
    day_start_equity: start.toFixed(),
    day_flows: dayFlows,
    day_pnl: dailyPnl({ equity: now, dayStartEquity: start, flows }).toFixed(),
    day_pnl_pct: pct === null ? null : pct.dividedBy(100).toNumber(),
    ...lines,
  };
};
