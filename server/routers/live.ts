// /api/operations/live: the user's live accounts and the promotion to live (readiness, the
// confirm token, enabling).
import { z } from 'zod';
import { ZAssetClassRequest, ZConfirmIssued, ZLiveEnabled, ZLiveEnableRequest, ZLiveReadiness, ZLiveStatus } from '../../contracts/live.ts';
import { authedProcedure, router } from '../trpc/init.ts';

export const liveRouter = router({
  status: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/operations/live/status',
        tags: ['live'],
        summary: 'Per asset class: live enabled, the first live order, an active lock, today’s live orders and the daily limit',
        protect: true,
      },
    })
    .input(z.void())
    .output(ZLiveStatus)
    .query(({ ctx }) => ctx.live.status({ user: ctx.user })),

  readiness: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/operations/live/readiness', tags: ['live'], summary: 'Whether the paper record passes the validation thresholds for an asset class', protect: true } })
    .input(ZAssetClassRequest)
    .output(ZLiveReadiness)
    .mutation(({ ctx, input }) => ctx.live.readiness({ user: ctx.user, assetClass: input.asset_class })),

  issueConfirm: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/operations/live/confirm/issue', tags: ['live'], summary: 'Issue a live confirm token (by e-mail, or to the service log without SMTP)', protect: true },
      status: 201,
      errors: ['PAPER_VALIDATION_REQUIRED', 'DELIVERY_FAILED'],
    })
    .input(ZAssetClassRequest)
    .output(ZConfirmIssued)
    .mutation(({ ctx, input }) => ctx.live.issueConfirm({ user: ctx.user, assetClass: input.asset_class, origin: ctx.origin })),

  enable: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/operations/live/enable', tags: ['live'], summary: 'Consume a confirm token (and pass the bot check) to enable live trading for its asset class', protect: true },
      errors: ['CONFIRM_TOKEN_INVALID', 'BOTCHECK_FAILED'],
    })
    .input(ZLiveEnableRequest)
    .output(ZLiveEnabled)
    .mutation(({ ctx, input }) => ctx.live.enable({ user: ctx.user, confirmToken: input.confirm_token, botcheckToken: input.botcheck_token, origin: ctx.origin })),
});
