// /api/admin: operator routes. Every one is audited and stays open while the service is halted.
import { z } from 'zod';
import { ZAdminAuditList, ZAdminAuditListQuery } from '../../contracts/audit.ts';
import { ZAdminOverview, ZAdminUserDetail, ZCriticalAlertList, ZCriticalAlertListQuery, ZHaltRequest, ZHaltState, ZLiveSuspendRequest, ZLiveSuspendState, ZUserIdPath, ZUserList, ZUserListQuery } from '../../contracts/admin.ts';
import { ZUserResponse } from '../../contracts/auth.ts';
import { ZBotForceStopped } from '../../contracts/bot.ts';
import { ZInstrument, ZInstrumentUpsert } from '../../contracts/instruments.ts';
import { ZLiveDisabled, ZLockCleared, ZUserAssetClassRequest } from '../../contracts/live.ts';
import { ZOhlcvImport, ZOhlcvImportResult } from '../../contracts/marketdata.ts';
import { ZSimOutageRequest, ZSimOutageResponse, ZSimPriceRequest, ZSimPriceResponse } from '../../contracts/simulator.ts';
import { toUserResponse } from '../users/users.ts';
import { adminProcedure, router } from '../trpc/init.ts';

const tags = ['admin'];
const openapi = (method: 'GET' | 'POST', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const adminRouter = router({
  listUsers: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/users', 'List users, newest first'), haltExempt: true })
    .input(ZUserListQuery)
    .output(ZUserList)
    .query(({ ctx, input }) => ctx.users.list({ page: input })),

  userDetail: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/users/{user_id}', 'One user: its live trading per asset class (flag, first live order, lock, today’s live orders and the limit) and its bot'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserIdPath)
    .output(ZAdminUserDetail)
    .query(({ ctx, input }) => ctx.live.userDetail({ userId: input.user_id })),

  auditLog: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/audit', 'Every audit record, or one user’s (user_id), newest first, filtered by an action prefix'), haltExempt: true })
    .input(ZAdminAuditListQuery)
    .output(ZAdminAuditList)
    .query(({ ctx, input }) => ctx.audit.listAll({ query: input })),

  deactivateUser: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{user_id}/deactivate', 'Deactivate a user; its tokens and sessions end at once'), haltExempt: true, errors: ['NOT_FOUND', 'CONFLICT'] })
    .input(ZUserIdPath)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) => toUserResponse(await ctx.users.setActive({ actor: ctx.user, userId: input.user_id, active: false, origin: ctx.origin }))),

  activateUser: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{user_id}/activate', 'Reactivate a user (tokens issued before stay invalid)'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserIdPath)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) => toUserResponse(await ctx.users.setActive({ actor: ctx.user, userId: input.user_id, active: true, origin: ctx.origin }))),

  disableLive: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{user_id}/live/disable', 'Turn a user’s live trading off for an asset class (audited)'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserAssetClassRequest)
    .output(ZLiveDisabled)
    .mutation(({ ctx, input }) => ctx.live.disable({ actor: ctx.user, userId: input.user_id, assetClass: input.asset_class, origin: ctx.origin })),

  clearLock: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{user_id}/locks/clear', 'End a user’s emergency lock of an asset class early (audited)'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserAssetClassRequest)
    .output(ZLockCleared)
    .mutation(({ ctx, input }) => ctx.live.clearLock({ actor: ctx.user, userId: input.user_id, assetClass: input.asset_class, origin: ctx.origin })),

  stopUserBot: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{user_id}/bot/stop', 'Force-stop a user’s bot (audited; answered with its status whether or not it ran)'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserIdPath)
    .output(ZBotForceStopped)
    .mutation(({ ctx, input }) => ctx.bots.forceStop({ actor: ctx.user, userId: input.user_id, origin: ctx.origin })),

  upsertInstrument: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/instruments', 'Add an instrument (201) or update one (200)'), haltExempt: true, status: 201 })
    .input(ZInstrumentUpsert)
    .output(ZInstrument)
    .mutation(async ({ ctx, input }) => {
      const { instrument, created } = await ctx.instruments.upsert({ actor: ctx.user, input, origin: ctx.origin });
      ctx.http.status = created ? 201 : 200;
      return instrument;
    }),

  importOhlcv: adminProcedure
    .meta({
      openapi: {
        ...openapi('POST', '/admin/market-data/ohlcv', 'Import daily bars: JSON {asset_class, symbol, bars}, or a text/csv body with asset_class and symbol in the query'),
        contentTypes: ['application/json', 'text/csv'],
      },
      textBodyField: 'csv',
      haltExempt: true,
    })
    .input(ZOhlcvImport)
    .output(ZOhlcvImportResult)
    .mutation(({ ctx, input }) => ctx.marketData.importBars({ actor: ctx.user, input, origin: ctx.origin })),

  setSimPrice: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/sim/prices', 'Set (or clear, with null) the price the simulated broker trades a symbol at'), haltExempt: true })
    .input(ZSimPriceRequest)
    .output(ZSimPriceResponse)
    .mutation(({ ctx, input }) => ctx.brokers.setPrice({ actor: ctx.user, input, origin: ctx.origin })),

  setSimOutage: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/sim/outage', 'Make the simulated broker of an asset class fail (down) or work again'), haltExempt: true })
    .input(ZSimOutageRequest)
    .output(ZSimOutageResponse)
    .mutation(({ ctx, input }) => ctx.brokers.setOutage({ actor: ctx.user, assetClass: input.asset_class, down: input.down, origin: ctx.origin })),

  suspendLive: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/live/suspend', 'Suspend (or resume) every live order; while suspended they answer 503 FEATURE_DISABLED'), haltExempt: true })
    .input(ZLiveSuspendRequest)
    .output(ZLiveSuspendState)
    .mutation(({ ctx, input }) => ctx.live.suspend({ suspended: input.suspended, actor: ctx.user, origin: ctx.origin })),

  overview: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/overview', 'Live-enabled users, active locks, running bots, today’s live orders and the last critical alerts'), haltExempt: true })
    .input(z.void())
    .output(ZAdminOverview)
    .query(({ ctx }) => ctx.live.overview()),

  alerts: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/alerts', 'The kill switch’s critical alerts (−4 % warning, −5 % lock), newest first, of one user or kind'), haltExempt: true })
    .input(ZCriticalAlertListQuery)
    .output(ZCriticalAlertList)
    .query(({ ctx, input }) => ctx.live.alerts({ query: input })),

  haltState: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/halt', 'Whether the service is halted'), haltExempt: true })
    .input(z.void())
    .output(ZHaltState)
    .query(({ ctx }) => ctx.halt.state()),

  halt: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/halt', 'Halt or resume the whole service'), haltExempt: true })
    .input(ZHaltRequest)
    .output(ZHaltState)
    .mutation(({ ctx, input }) => ctx.halt.set({ halted: input.halted, actor: ctx.user, origin: ctx.origin })),
});
