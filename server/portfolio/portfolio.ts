// An account's past as the portfolio routes answer it (DESIGN §6): today the history, a point per
// UTC day from the day-start snapshots and flows, with today's point read from the broker.
import { DEFAULT_HISTORY_DAYS, type TPortfolioHistory, type TPortfolioHistoryQuery } from '../../contracts/portfolio.ts';
import type { Clock } from '../clock.ts';
import { utcDateOf } from '../controls/day-start.ts';
import type { Db } from '../db/client.ts';
import { viaBroker, type BrokerOfAccount } from '../orders/broker-calls.ts';
import { historyPoints } from './history.ts';
import { readFlowsByDay, readSnapshots } from './queries.ts';

const DAY_MS = 86_400_000;
const dayOffset = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

export type Portfolio = ReturnType<typeof createPortfolio>;

export const createPortfolio = ({ db, clock, forUser }: { db: Db; clock: Clock; forUser: BrokerOfAccount }) => ({
  history: async ({ user, query }: { user: { id: number }; query: TPortfolioHistoryQuery }): Promise<TPortfolioHistory> => {
    const { asset_class: assetClass, mode } = query;
    const today = utcDateOf(clock.now());
    // A range reaching past today ends today: the days after have no end yet.
    const to = query.to === undefined || query.to > today ? today : query.to;
    const from = query.from ?? dayOffset(to, -DEFAULT_HISTORY_DAYS);
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const account = await viaBroker(() => broker.account());
    const range = { userId: user.id, assetClass, mode, from, through: dayOffset(to, 1) };
    const [snapshots, flows] = await Promise.all([readSnapshots(db, range), readFlowsByDay(db, range)]);
    const { baseValue, points } = historyPoints({
      snapshots,
      flows: new Map(flows.map((flow) => [flow.day, flow.amount])),
      from,
      to,
      today,
      live: { equity: account.equity, cash: account.cash },
    });
    return { asset_class: assetClass, mode, currency: account.currency, base_value: baseValue, points };
  },
});
