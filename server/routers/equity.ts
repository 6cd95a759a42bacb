// /api/equity: orders through the five gates, the user's positions and accounts at its brokers, and their past.
import { z } from 'zod';
import { ZAccountQuery, ZReplaceOrderRequest, ZCancelAllQuery, ZCancelAllResult, ZClosePositionPath, ZOrderList, ZOrderListQuery, ZOrderPath, ZOrderPreview, ZOrderResponse, ZPlaceOrderRequest, ZPositionList } from '../../contracts/orders.ts';
import { ZActivitiesQuery, ZActivityList, ZPerformance, ZPerformanceQuery, ZPortfolioHistory, ZPortfolioHistoryQuery, type TActivitiesQuery, type TActivityList } from '../../contracts/portfolio.ts';
import { activitiesCsv } from '../portfolio/csv.ts';
import { ZAccountResetRequest, ZAccountResponse } from '../../contracts/simulator.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['equity'];
const openapi = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const equityRouter = router({
  placeOrder: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('POST', '/equity/orders', 'Place an order through the five gates (201, status accepted; the same client_order_id again answers the same order)'),
      status: 201,
      errors: [
        'FEATURE_DISABLED',
        'LIVE_NOT_ENABLED',
        'RATE_LIMIT_EXCEEDED',
        'RATE_LIMIT_LIVE_DAILY',
        'BROKER_NOT_CONFIGURED',
        'RISK_RULE_VIOLATION',
        'MARKET_CLOSED',
        'INSUFFICIENT_FUNDS',
        'BROKER_REJECTED',
        'BROKER_UNAVAILABLE',
        'IDEMPOTENCY_CONFLICT',
      ],
    })
    .input(ZPlaceOrderRequest)
    .output(ZOrderResponse)
    .mutation(({ ctx, input }) => ctx.orders.place({ user: ctx.user, request: input, origin: ctx.origin })),

  previewOrder: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('POST', '/equity/orders/preview', 'What placing this order would cost: last price, estimated notional, commission and tax, buying power before and after; places nothing'),
      errors: ['BROKER_NOT_CONFIGURED', 'BROKER_REJECTED', 'BROKER_UNAVAILABLE'],
    })
    .input(ZPlaceOrderRequest)
    .output(ZOrderPreview)
    .mutation(({ ctx, input }) => ctx.orders.preview({ user: ctx.user, request: input })),

  listOrders: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/orders', 'Your orders of an asset class, newest first') })
    .input(ZOrderListQuery)
    .output(ZOrderList)
    .query(({ ctx, input }) => ctx.orders.list({ user: ctx.user, query: input })),

  getOrder: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/orders/{broker_order_id}', 'One of your orders'), errors: ['ORDER_NOT_FOUND'] })
    .input(ZOrderPath)
    .output(ZOrderResponse)
    .query(({ ctx, input }) => ctx.orders.get({ user: ctx.user, brokerOrderId: input.broker_order_id, assetClass: input.asset_class })),

  cancelOrder: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('DELETE', '/equity/orders/{broker_order_id}', 'Cancel an open order (204)'), status: 204, errors: ['ORDER_NOT_FOUND', 'ORDER_NOT_CANCELABLE', 'BROKER_UNAVAILABLE', 'BROKER_NOT_CONFIGURED'] })
    .input(ZOrderPath)
    .output(z.void())
    .mutation(({ ctx, input }) => ctx.orders.cancel({ user: ctx.user, brokerOrderId: input.broker_order_id, assetClass: input.asset_class, origin: ctx.origin })),

  replaceOrder: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('PATCH', '/equity/orders/{broker_order_id}', 'Replace the qty, limit or stop of an open order (event replaced); answers the order as replaced'),
      errors: ['ORDER_NOT_FOUND', 'ORDER_NOT_CANCELABLE', 'BROKER_REJECTED', 'BROKER_UNAVAILABLE', 'BROKER_NOT_CONFIGURED'],
    })
    .input(ZReplaceOrderRequest)
    .output(ZOrderResponse)
    .mutation(({ ctx, input }) => ctx.orders.replace({ user: ctx.user, change: input, origin: ctx.origin })),

  cancelAllOrders: authedProcedure
    .meta({ apiKeyScope: 'trade', openapi: openapi('DELETE', '/equity/orders', 'Cancel every open order of an asset class (and mode, when given)'), errors: ['BROKER_NOT_CONFIGURED'] })
    .input(ZCancelAllQuery)
    .output(ZCancelAllResult)
    .mutation(({ ctx, input }) => ctx.orders.cancelAll({ user: ctx.user, assetClass: input.asset_class, mode: input.mode, origin: ctx.origin })),

  closePosition: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('DELETE', '/equity/positions/{symbol}', 'Close a position at market: a sell of the held quantity through the five gates (write BTC/USDT as BTC-USDT)'),
      errors: ['NOT_FOUND', 'BROKER_NOT_CONFIGURED', 'MARKET_CLOSED', 'RISK_RULE_VIOLATION', 'RATE_LIMIT_EXCEEDED', 'BROKER_REJECTED', 'BROKER_UNAVAILABLE', 'FEATURE_DISABLED'],
    })
    .input(ZClosePositionPath)
    .output(ZOrderResponse)
    .mutation(({ ctx, input }) => ctx.orders.closePosition({ user: ctx.user, assetClass: input.asset_class, symbol: input.symbol, mode: input.mode, origin: ctx.origin })),

  positions: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/positions', 'Your positions at the broker of an asset class (mode: paper by default)'), errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'] })
    .input(ZAccountQuery)
    .output(ZPositionList)
    .query(({ ctx, input }) => ctx.orders.positions({ user: ctx.user, assetClass: input.asset_class, mode: input.mode })),

  account: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: openapi('GET', '/equity/account', 'Your account at the broker of an asset class (mode: paper by default)'), errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'] })
    .input(ZAccountQuery)
    .output(ZAccountResponse)
    .query(({ ctx, input }) => ctx.orders.account({ user: ctx.user, assetClass: input.asset_class, mode: input.mode })),

  portfolioHistory: authedProcedure
    .meta({ apiKeyScope: 'read',
      openapi: openapi('GET', '/equity/portfolio/history', 'The account’s equity curve: a point per UTC day from its day-start snapshots, flows (paper resets) apart, today’s point live'),
      errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'],
    })
    .input(ZPortfolioHistoryQuery)
    .output(ZPortfolioHistory)
    .query(({ ctx, input }) => ctx.portfolio.history({ user: ctx.user, query: input })),

  performance: authedProcedure
    .meta({ apiKeyScope: 'read',
      openapi: openapi('GET', '/equity/performance', 'The account’s performance over a range: time-weighted return, realised (FIFO lots) and unrealised P&L, fees, taxes, drawdown, Sharpe, per symbol and by day, week and month'),
      errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE'],
    })
    .input(ZPerformanceQuery)
    .output(ZPerformance)
    .query(({ ctx, input }) => ctx.portfolio.performance({ user: ctx.user, query: input })),

  activities: authedProcedure
    .meta({ apiKeyScope: 'read',
      openapi: openapi('GET', '/equity/activities', 'The account’s ledger: its fills (fee and tax), its lots closed by FIFO, or its flows, a page at a time; with Accept: text/csv, every row of the type as CSV'),
      csv: (input, output) => activitiesCsv((input as TActivitiesQuery).type ?? 'fill', output as TActivityList),
    })
    .input(ZActivitiesQuery)
    .output(ZActivityList)
    .query(({ ctx, input }) => ctx.portfolio.activities({ user: ctx.user, query: input })),

  resetAccount: authedProcedure
    .meta({ apiKeyScope: 'trade',
      openapi: openapi('POST', '/equity/account/reset', 'Start a paper account over: open orders canceled, positions removed, starting cash (not while an emergency lock holds)'),
      errors: ['BROKER_NOT_CONFIGURED', 'BROKER_UNAVAILABLE', 'RISK_RULE_VIOLATION'],
    })
    .input(ZAccountResetRequest)
    .output(ZAccountResponse)
    .mutation(({ ctx, input }) => ctx.brokers.resetPaperAccount({ user: ctx.user, assetClass: input.asset_class, origin: ctx.origin })),
});
