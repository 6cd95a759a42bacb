// /api/operations/live: the user's live accounts (the promotion routes come with their issue).
import { z } from 'zod';
import { ZLiveStatus } from '../../contracts/live.ts';
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
});
