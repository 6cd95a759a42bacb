// /api/bot, /api/trades and /api/positions: the user's trading bot, and its fills and positions
// that backfill /ws/live.
import { z } from 'zod';
import {
  ZBotDrift,
  ZBotDriftPath,
  ZBotPositionList,
  ZBotPositionsQuery,
  ZBotRunList,
  ZBotRunQuery,
  ZBotStartRequest,
  ZBotStatus,
  ZBotTradeList,
  ZBotTradeQuery,
} from '../../contracts/bot.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['bot'];
const openapi = (method: 'GET' | 'POST', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const botRouter = router({
  start: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('POST', '/bot/start', 'Start your bot: a registered strategy on the price feed, its orders through the five gates (one bot per user; 409 while it runs)'),
      errors: ['STRATEGY_NOT_FOUND', 'INVALID_SYMBOL', 'CONFLICT', 'FEATURE_DISABLED', 'LIVE_NOT_ENABLED', 'BROKER_NOT_CONFIGURED', 'RISK_RULE_VIOLATION'],
    })
    .input(ZBotStartRequest)
    .output(ZBotStatus)
    .mutation(({ ctx, input }) => ctx.bots.start({ user: ctx.user, request: input, origin: ctx.origin })),

  stop: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('POST', '/bot/stop', 'Stop your bot (its open orders and positions stay); a bot that is not running answers its status') })
    .input(z.void())
    .output(ZBotStatus)
    .mutation(({ ctx }) => ctx.bots.stop({ user: ctx.user, origin: ctx.origin })),

  status: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/bot/status', 'Your bot: running, halted (and why), its settings') })
    .input(z.void())
    .output(ZBotStatus)
    .query(({ ctx }) => ctx.bots.status({ user: ctx.user })),

  runs: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/bot/runs', 'Your bot’s runs, newest first: each start, its settings and how it ended') })
    .input(ZBotRunQuery)
    .output(ZBotRunList)
    .query(({ ctx, input }) => ctx.bots.runs({ user: ctx.user, query: input })),

  drift: authedProcedure
    .meta({ apiKeyScope: 'read',
      openapi: openapi('GET', '/bot/runs/{run_id}/drift', 'A run’s drift report: its bars replayed through the backtest engine with its strategy, each decision’s fills lined up with the bot’s, the return gap and its causes'),
      errors: ['NOT_FOUND', 'STRATEGY_NOT_FOUND'],
    })
    .input(ZBotDriftPath)
    .output(ZBotDrift)
    .query(({ ctx, input }) => ctx.bots.drift({ user: ctx.user, runId: input.run_id, symbol: input.symbol })),

  trades: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/trades', 'Fills of your bot’s orders, newest first (the backfill of /ws/live trade frames)') })
    .input(ZBotTradeQuery)
    .output(ZBotTradeList)
    .query(({ ctx, input }) => ctx.bots.trades({ user: ctx.user, query: input })),

  positions: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/positions', 'Your positions (of one asset class, or of every one you have a broker for), the backfill of /ws/live'), errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'] })
    .input(ZBotPositionsQuery)
    .output(ZBotPositionList)
    .query(({ ctx, input }) => ctx.bots.positions({ user: ctx.user, query: input })),
});
