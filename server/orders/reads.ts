// The order service's reads: an order and the list of a user's orders from our records; positions
// and the account from the user's broker; the instruments a user follows.
import type { TTradingMode } from '../../contracts/brokers.ts';
import { ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import { STATUSES_OF_FILTER, type TOrderListQuery, type TOrderResponse } from '../../contracts/orders.ts';
import type { TAccountResponse } from '../../contracts/simulator.ts';
import { toAccountResponse } from '../brokers/brokers.ts';
import { ExactDecimal } from '../decimal.ts';
import type { Clock } from '../clock.ts';
import { readDayFlows } from '../controls/day-flows.ts';
import { dayPnlOf } from '../controls/day-pnl.ts';
import { utcDateOf } from '../controls/day-start.ts';
import { findDayStartEquity } from '../controls/queries.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { viaBroker, type BrokerOfAccount } from './broker-calls.ts';
import { findAuditedOrder, listAuditedOrders, listWorkingSymbols } from './queries.ts';
import { toOrderResponse } from './records.ts';

/** The user's order by its broker id; 404 ORDER_NOT_FOUND when it is not the user's. */
export const findOwnOrder = async (db: Db, { user, brokerOrderId, assetClass }: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass }) => {
  const row = await findAuditedOrder(db, { userId: user.id, brokerOrderId, assetClass });
  if (!row) throw new AppError('ORDER_NOT_FOUND', 'Order not found');
  return row;
};

export interface ReadsDeps {
  db: Db;
  clock: Clock;
  forUser: BrokerOfAccount;
}

export const createReads = ({ db, clock, forUser }: ReadsDeps) => {
  const get = async (opts: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass }): Promise<TOrderResponse> => toOrderResponse(await findOwnOrder(db, opts));

  const list = async ({ user, query }: { user: { id: number }; query: TOrderListQuery }) => {
    const { rows, total } = await listAuditedOrders(db, {
      userId: user.id,
      assetClass: query.asset_class,
      statuses: query.status === undefined ? undefined : STATUSES_OF_FILTER[query.status],
      live: query.mode === undefined ? undefined : query.mode === 'live',
      page: query.page,
      size: query.size,
    });
    return { items: rows.map(toOrderResponse), total, page: query.page, size: query.size };
  };

  const positions = async ({ user, assetClass, mode }: { user: { id: number }; assetClass: TAssetClass; mode: TTradingMode }) => {
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const held = await viaBroker(() => broker.positions());
    return {
      items: held.map((position) => {
        const qty = new ExactDecimal(position.qty);
        const entry = new ExactDecimal(position.avgEntryPrice);
        const current = new ExactDecimal(position.currentPrice);
        const unrealized = current.minus(entry).times(qty);
        return {
          asset_class: assetClass,
          exchange: broker.name,
          symbol: position.symbol,
          qty: qty.toNumber(),
          avg_entry_price: entry.toNumber(),
          current_price: current.toNumber(),
          unrealized_pnl: unrealized.toNumber(),
          unrealized_pnl_pct: entry.isZero() ? 0 : current.div(entry).minus(1).toNumber(),
          currency: position.currency,
          side: 'LONG' as const,
          metadata: { realized_pnl: Number(position.realizedPnl), live: mode === 'live' },
        };
      }),
    };
  };

  const account = async ({ user, assetClass, mode }: { user: { id: number }; assetClass: TAssetClass; mode: TTradingMode }): Promise<TAccountResponse> => {
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const snapshot = await viaBroker(() => broker.account());
    const accountDay = { userId: user.id, assetClass, mode, day: utcDateOf(clock.now()) };
    const [dayStartEquity, flows] = await Promise.all([findDayStartEquity(db, accountDay), readDayFlows(db, { ...accountDay, resetAt: snapshot.resetAt })]);
    return toAccountResponse(assetClass, snapshot, { ...dayPnlOf({ equity: snapshot.equity, dayStartEquity, flows }) });
  };

  /**
   * The instruments a user follows, as `asset_class:symbol`: those it has working orders in and
   * those it holds (through each broker it has; an asset class without a key holds nothing).
   */
  const watchedSymbols = async ({ user }: { user: { id: number } }): Promise<Set<string>> => {
    const watched = new Set<string>();
    for (const { assetClass, symbol } of await listWorkingSymbols(db, { userId: user.id })) watched.add(`${assetClass}:${symbol}`);
    const held = await Promise.all(
      ZAssetClass.options.flatMap((assetClass) =>
        (['paper', 'live'] as const).map(async (mode) => {
          const broker = await forUser({ userId: user.id, assetClass, mode }).catch(() => undefined);
          const positions = await broker?.positions().catch(() => []);
          return (positions ?? []).map((position) => `${assetClass}:${position.symbol}`);
        }),
      ),
    );
    for (const key of held.flat()) watched.add(key);
    return watched;
  };

  return { get, list, positions, account, watchedSymbols };
};
