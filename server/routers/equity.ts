// /api/equity: the user's accounts at its brokers (orders and positions join here).
import { ZAccountResetRequest, ZAccountResponse } from '../../contracts/simulator.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['equity'];

export const equityRouter = router({
  resetAccount: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/equity/account/reset', tags, summary: 'Start a paper account over: open orders canceled, positions removed, starting cash', protect: true },
      errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'],
    })
    .input(ZAccountResetRequest)
    .output(ZAccountResponse)
    .mutation(({ ctx, input }) => ctx.brokers.resetPaperAccount({ user: ctx.user, assetClass: input.asset_class, origin: ctx.origin })),
});
