// Backtests: stocks at /api/equity/backtest, crypto at /api/backtest, and the strategy list.
import { z } from 'zod';
import { ZBacktestIdPath, ZBacktestList, ZBacktestListQuery, ZBacktestRequest, ZBacktestResult, ZStrategyList, ZSweepIdPath, ZSweepList, ZSweepListQuery, ZSweepRequest, ZSweepResult, ZWalkForwardRequest, ZWalkForwardResult } from '../../contracts/backtest.ts';
import { authedProcedure, router } from '../trpc/init.ts';
import type { TBacktestFamily } from '../backtest/backtests.ts';

const openapi = (method: 'GET' | 'POST', path: `/${string}`, summary: string, tag = 'backtest') => ({ method, path, tags: [tag], summary, protect: true });
const RUN_ERRORS = ['INVALID_ASSET_CLASS', 'STRATEGY_NOT_FOUND', 'INVALID_SYMBOL', 'INSUFFICIENT_DATA', 'FEATURE_DISABLED'] as const;

/** The three routes of one family: run (saved), list of summaries, one result. */
const familyRoutes = (family: TBacktestFamily, base: '/equity/backtest' | '/backtest', runPath: '/equity/backtest' | '/backtest/run') => ({
  run: authedProcedure
    .meta({ apiKeyScope: 'backtest', openapi: openapi('POST', runPath, `Run a ${family === 'equity' ? 'stock' : 'crypto'} backtest on daily bars (200, the full result, saved)`), errors: [...RUN_ERRORS] })
    .input(ZBacktestRequest)
    .output(ZBacktestResult)
    .mutation(({ ctx, input }) => ctx.backtests.run({ user: ctx.user, request: input, family })),
  list: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', base, `Your ${family === 'equity' ? 'stock' : 'crypto'} backtests, newest first (summaries: no curve, no trades)`), errors: ['INVALID_ASSET_CLASS'] })
    .input(ZBacktestListQuery)
    .output(ZBacktestList)
    .query(({ ctx, input }) => ctx.backtests.list({ user: ctx.user, query: input, family })),
  get: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', `${base}/{result_id}`, 'One of your backtest results, in full'), errors: ['NOT_FOUND'] })
    .input(ZBacktestIdPath)
    .output(ZBacktestResult)
    .query(({ ctx, input }) => ctx.backtests.get({ user: ctx.user, id: input.result_id, family })),
});

export const backtestRouter = router({
  equity: router(familyRoutes('equity', '/equity/backtest', '/equity/backtest')),
  crypto: router(familyRoutes('crypto', '/backtest', '/backtest/run')),
  sweep: authedProcedure
    .meta({ apiKeyScope: 'backtest', openapi: openapi('POST', '/equity/backtest/sweep', 'Run a strategy over a grid of its parameters (across the worker pool), ranked by a metric and saved as one sweep'), errors: [...RUN_ERRORS] })
    .input(ZSweepRequest)
    .output(ZSweepResult)
    .mutation(({ ctx, input }) => ctx.backtests.sweep({ user: ctx.user, request: input, family: 'equity' })),
  listSweeps: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/backtest/sweep', 'Your sweeps, newest first (summaries: the best point, no other points)') })
    .input(ZSweepListQuery)
    .output(ZSweepList)
    .query(({ ctx, input }) => ctx.backtests.listSweeps({ user: ctx.user, query: input })),
  getSweep: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/backtest/sweep/{sweep_id}', 'One of your sweeps'), errors: ['NOT_FOUND'] })
    .input(ZSweepIdPath)
    .output(ZSweepResult)
    .query(({ ctx, input }) => ctx.backtests.getSweep({ user: ctx.user, id: input.sweep_id })),
  walkForward: authedProcedure
    .meta({ apiKeyScope: 'backtest', openapi: openapi('POST', '/equity/backtest/walk-forward', 'Rolling walk-forward: optimise the grid on each train window, run the best point on the next test window; every window and the stitched out-of-sample curve and metrics'), errors: [...RUN_ERRORS] })
    .input(ZWalkForwardRequest)
    .output(ZWalkForwardResult)
    .mutation(({ ctx, input }) => ctx.backtests.walkForward({ user: ctx.user, request: input, family: 'equity' })),
  strategies: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/strategy/list', 'The registered strategies with their parameters (defaults and bounds)', 'strategy') })
    .input(z.void())
    .output(ZStrategyList)
    .query(({ ctx }) => ctx.backtests.strategies()),
});
