// The app router: one entry per area.
import { router } from '../trpc/init.ts';
import { adminRouter } from './admin.ts';
import { analysisRouter } from './analysis.ts';
import { auditRouter } from './audit.ts';
import { authRouter } from './auth.ts';
import { backtestRouter } from './backtest.ts';
import { botRouter } from './bot.ts';
import { equityRouter } from './equity.ts';
import { eventsRouter } from './events.ts';
import { instrumentsRouter } from './instruments.ts';
import { keysRouter } from './keys.ts';
import { liveRouter } from './live.ts';
import { marketDataRouter } from './marketdata.ts';
import { notificationsRouter } from './notifications.ts';
import { signalsRouter } from './signals.ts';

export const appRouter = router({
  auth: authRouter,
  admin: adminRouter,
  instruments: instrumentsRouter,
  marketData: marketDataRouter,
  exchangeKeys: keysRouter,
  equity: equityRouter,
  events: eventsRouter,
  backtest: backtestRouter,
  analysis: analysisRouter,
  live: liveRouter,
  bot: botRouter,
  audit: auditRouter,
  notifications: notificationsRouter,
  signals: signalsRouter,
});

export type AppRouter = typeof appRouter;
