// /api/market-data: daily OHLCV bars, for every signed-in user.
import { ZOhlcvQuery, ZOhlcvResponse } from '../../contracts/marketdata.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['market-data'];

export const marketDataRouter = router({
  ohlcv: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: { method: 'GET', path: '/market-data/ohlcv', tags, summary: 'Daily bars of one instrument, oldest first (from and to inclusive)', protect: true } })
    .input(ZOhlcvQuery)
    .output(ZOhlcvResponse)
    .query(({ ctx, input }) => ctx.marketData.read({ query: input })),
});
