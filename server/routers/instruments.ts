// /api/instruments: the instrument registry, for every signed-in user.
import { ZInstrumentList, ZInstrumentListQuery } from '../../contracts/instruments.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['instruments'];

export const instrumentsRouter = router({
  list: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: { method: 'GET', path: '/instruments', tags, summary: 'Instruments, by asset class and a search on symbol or name', protect: true } })
    .input(ZInstrumentListQuery)
    .output(ZInstrumentList)
    .query(({ ctx, input }) => ctx.instruments.list({ query: input })),
});
