// An account's past as the portfolio routes answer it (DESIGN §6): the history, a point per UTC
// day from the day-start snapshots and flows with today's point read from the broker, and the
// performance over the same range, from those points and the account's FIFO lots; and the
// activities ledger: its fills, closed lots and flows, a page at a time or all of a type (CSV).
import type { TAssetClass } from '../../contracts/common.ts';
import type { TTradingMode } from '../../contracts/brokers.ts';
import { DEFAULT_HISTORY_DAYS, type TActivitiesQuery, type TActivity, type TActivityList, type TPerformance, type TPerformanceQuery, type TPortfolioHistory, type TPortfolioHistoryQuery } from '../../contracts/portfolio.ts';
import type { Clock } from '../clock.ts';
import { utcDateOf } from '../controls/day-start.ts';
import type { Db } from '../db/client.ts';
import { viaBroker, type BrokerOfAccount } from '../orders/broker-calls.ts';
import { textOf } from './fixed-point.ts';
import { historyPoints } from './history.ts';
import { fifoLots } from './lots.ts';
import { performanceOf } from './performance.ts';
import { createFillCache } from './fill-cache.ts';
import { readFlows, readFlowsByDay, readResets, readSnapshots } from './queries.ts';

const DAY_MS = 86_400_000;
const dayOffset = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

export type Portfolio = ReturnType<typeof createPortfolio>;

export const createPortfolio = ({ db, clock, forUser }: { db: Db; clock: Clock; forUser: BrokerOfAccount }) => {
  const readAccountFills = createFillCache(db);
  /** The range a query names: `to` at most today (the days after have no end yet), `from` a year before it by default. */
  const rangeOf = (query: { from?: string | undefined; to?: string | undefined }) => {
    const today = utcDateOf(clock.now());
    const to = query.to === undefined || query.to > today ? today : query.to;
    return { today, to, from: query.from ?? dayOffset(to, -DEFAULT_HISTORY_DAYS) };
  };

  const historyOf = async (userId: number, assetClass: TAssetClass, mode: TTradingMode, { today, from, to }: ReturnType<typeof rangeOf>) => {
    const account = await viaBroker(async () => (await forUser({ userId, assetClass, mode })).account());
    const range = { userId, assetClass, mode, from, through: dayOffset(to, 1) };
    const [snapshots, flows] = await Promise.all([readSnapshots(db, range), readFlowsByDay(db, range)]);
    const history = historyPoints({ snapshots, flows: new Map(flows.map((flow) => [flow.day, flow.amount])), from, to, today, live: { equity: account.equity, cash: account.cash } });
    return { currency: account.currency, ...history };
  };

  const history = async ({ user, query }: { user: { id: number }; query: TPortfolioHistoryQuery }): Promise<TPortfolioHistory> => {
    const { asset_class: assetClass, mode } = query;
    const { currency, baseValue, points } = await historyOf(user.id, assetClass, mode, rangeOf(query));
    return { asset_class: assetClass, mode, currency, base_value: baseValue, points };
  };

  const performance = async ({ user, query }: { user: { id: number }; query: TPerformanceQuery }): Promise<TPerformance> => {
    const { asset_class: assetClass, mode } = query;
    const range = rangeOf(query);
    // Every fill and reset up to the range's end: lots a sell in the range closes may be older than
    // it. Read beside the history and today's positions (which value the open lots; a range that
    // ended before today has no prices to use).
    const before = new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY_MS);
    const account = { userId: user.id, assetClass, mode, before };
    const positions = async () => {
      if (range.to !== range.today) return undefined;
      const broker = await forUser({ userId: user.id, assetClass, mode });
      return new Map((await viaBroker(() => broker.positions())).map((position) => [position.symbol, position.currentPrice]));
    };
    const [{ currency, points }, fills, resets, prices] = await Promise.all([historyOf(user.id, assetClass, mode, range), readAccountFills(account), readResets(db, account), positions()]);
    const { closed, open } = fifoLots(fills, resets);
    const start = Date.parse(`${range.from}T00:00:00Z`);
    const result = performanceOf({
      assetClass,
      from: range.from,
      to: range.to,
      points,
      closed,
      open,
      fills: fills.filter((fill) => fill.at.getTime() >= start),
      priceOf: prices && ((symbol) => prices.get(symbol)),
    });
    return { asset_class: assetClass, mode, currency, ...result };
  };

  /** The range's fills, closed lots or flows, oldest first; all of them for `format=csv`, else a page. */
  const activities = async ({ user, query }: { user: { id: number }; query: TActivitiesQuery }): Promise<TActivityList> => {
    const { asset_class: assetClass, mode } = query;
    const range = rangeOf(query);
    const start = Date.parse(`${range.from}T00:00:00Z`);
    const before = new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY_MS);
    const account = { userId: user.id, assetClass, mode, before };
    let rows: TActivity[];
    if (query.type === 'flow') {
      const flows = await readFlows(db, { userId: user.id, assetClass, mode, from: range.from, through: range.to });
      rows = flows.map((flow) => ({ type: 'flow', at: flow.at.toISOString(), kind: flow.kind, amount: flow.amount, equity_before: flow.equityBefore, equity_after: flow.equityAfter }));
    } else {
      const fills = await readAccountFills(account);
      if (query.type === 'fill') {
        rows = fills
          .filter((fill) => fill.at.getTime() >= start)
          .map((fill) => ({ type: 'fill', at: fill.at.toISOString(), symbol: fill.symbol, side: fill.side, client_order_id: fill.clientOrderId, qty: fill.qty, price: fill.price, fee: fill.fee, tax: fill.tax }));
      } else {
        const { closed } = fifoLots(fills, await readResets(db, account));
        rows = closed
          .filter((lot) => lot.soldAt.getTime() >= start)
          .map((lot) => ({
            type: 'lot',
            symbol: lot.symbol,
            qty: textOf(lot.qty),
            acquired_at: lot.acquiredAt.toISOString(),
            sold_at: lot.soldAt.toISOString(),
            cost_basis: textOf(lot.costBasis),
            proceeds: textOf(lot.proceeds),
            gain: textOf(lot.gain),
          }));
      }
    }
    if (query.format === 'csv') return { items: rows, total: rows.length, page: 1, size: rows.length };
    const offset = (query.page - 1) * query.size;
    return { items: rows.slice(offset, offset + query.size), total: rows.length, page: query.page, size: query.size };
  };

  return { history, performance, activities };
};
