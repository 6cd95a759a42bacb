// The kill switch's two lines on an account's daily P&L % (the interface's thresholds), defined
// here only: live/kill-switch.ts acts on them, day-pnl.ts shows them on the account.
//
// They are a rule of their own, not the risk gate's daily loss bound (RISK_DAILY_LOSS_LIMIT_PCT,
// checkDailyLoss in orders/risk.ts), although both read the same day-start snapshot through the
// same dailyPnlPct: the bound is an operator's setting that refuses one new buy at placement and
// lets everything else through, while these lines are fixed by the interface and act on the
// account after fills and each minute (an alert, then a 24 h lock that cancels, liquidates and
// halts the bot). Tuning the setting must not move the kill switch, so neither derives from the
// other.
import { Decimal } from 'decimal.js';

/** At or below this daily P&L %: the kill switch's critical alert. */
export const WARN_PCT = new Decimal(-4);
/** At or below this daily P&L %: the kill switch's 24 h lock. */
export const LOCK_PCT = new Decimal(-5);
