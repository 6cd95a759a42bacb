// /api/bot, /api/trades and /api/positions: the user's trading bot, and its fills and positions
// that backfill /ws/live.
import { z } from 'zod';
import { ZBotPositionList, ZBotPositionsQuery, ZBotStartRequest, ZBotStatus, ZBotTradeList, ZBotTradeQuery } from '../../contracts/bot.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['bot'];
const openapi = (method: 'GET' | 'POST', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const botRouter = router({
  start: authedProcedure
    .meta({
      openapi: openapi('POST', '/bot/start', 'Start your bot: a registered strategy on the price feed, its orders through the five gates (one bot per user; 409 while it runs)'),
      errors: ['STRATEGY_NOT_FOUND', 'INVALID_SYMBOL', 'CONFLICT', 'FEATURE_DISABLED', 'LIVE_NOT_ENABLED', 'BROKER_NOT_CONFIGURED', 'RISK_RULE_VIOLATION'],
    })
    .input(ZBotStartRequest)
    .output(ZBotStatus)
    .mutation(({ ctx, input }) => ctx.bots.start({ user: ctx.user, request: input, origin: ctx.origin })),

  stop: authedProcedure
    .meta({ openapi: openapi('POST', '/bot/stop', 'Stop your bot (its open orders and positions stay); a bot that is not running answers its status') })
    .input(z.void())
    .output(ZBotStatus)
    .mutation(({ ctx }) => ctx.bots.stop({ user: ctx.user, origin: ctx.origin })),

  status: authedProcedure
    .meta({ openapi: openapi('GET', '/bot/status', 'Your bot: running, halted (and why), its settings') })
    .input(z.void())
    .output(ZBotStatus)
    .query(({ ctx }) => ctx.bots.status({ user: ctx.user })),

  trades: authedProcedure
    .meta({ openapi: openapi('GET', '/trades', 'Fills of your bot’s orders, newest first (the backfill of /ws/live trade frames)') })
    .input(ZBotTradeQuery)
    .output(ZBotTradeList)
    .query(({ ctx, input }) => ctx.bots.trades({ user: ctx.user, query: input })),

  positions: authedProcedure
    .meta({ openapi: openapi('GET', '/positions', 'Your positions (of one asset class, or of every one you have a broker for), the backfill of /ws/live'), errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'] })
    .input(ZBotPositionsQuery)
    .output(ZBotPositionList)
    .query(({ ctx, input }) => ctx.bots.positions({ user: ctx.user, query: input })),
});
