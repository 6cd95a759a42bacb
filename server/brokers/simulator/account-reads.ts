// The simulator's reads of one account in one statement each: the account locked for a placement
// with what that placement judges (its position, prices and the working orders that hold cash or
// units), and the snapshot of the account (its positions and working orders).
import type { Queryable, Tx } from '../../db/client.ts';
import { rowsOf } from '../../db/client.ts';
import { fixedSql } from '../../db/fixed-sql.ts';
import { simAccounts, simOrders, simPositions, simPrices } from '../../db/schema/index.ts';
import type { AccountKey, SimAccountRow, SimOrderRow, SimPositionRow, SimPriceRow } from './queries.ts';
import {
  ACCOUNT_JSON,
  accountOfJson,
  fromJson,
  ORDER_JSON,
  orderOfJson,
  POSITION_JSON,
  positionOfJson,
  priceOfJson,
  type AccountJson,
  type OrderJson,
  type PositionJson,
  type PriceJson,
} from './row-json.ts';

// Written into the statements, not bound: the partial indexes over working orders serve a
// statement only when the planner sees the list (queries.ts' ACTIVE_STATUSES).
const WORKING = fixedSql`o.status in ('accepted', 'open', 'partially_filled')`;

/** What a placement in one symbol judges, read with the account's lock. */
export interface LockedAccount {
  account: SimAccountRow;
  position: SimPositionRow | null;
  price: SimPriceRow | null;
  /**
   * The working orders that bear on the placement: every buy of the account (they hold its cash)
   * and the sells of the symbol (they hold its units).
   */
  working: SimOrderRow[];
  /** Every position the account holds, with its symbol's stored prices: read when asked for (`holdings`), for the account's equity. */
  holdings?: { position: SimPositionRow; price: SimPriceRow | null }[];
}

/** Every position held (qty > 0) with its stored prices, as JSON, for the account row `a`. */
const HOLDINGS = fixedSql`coalesce((select json_agg(${POSITION_JSON} order by p.symbol)
        from ${simPositions} p left join ${simPrices} pr on pr.asset_class = p.asset_class and pr.symbol = p.symbol
        where p.user_id = a.user_id and p.asset_class = a.asset_class and p.mode = a.mode and p.qty > 0), '[]'::json)`;

const holdingsOf = (key: AccountKey, json: unknown) =>
  fromJson<(PositionJson & { price: PriceJson | null })[]>(json).map((held) => ({ position: positionOfJson(key, held), price: priceOfJson(key.assetClass, held.symbol, held.price) }));

/**
 * The account row locked as lockAccount locks it, read with what a placement in one symbol needs
 * beside it (the position, the stored prices and the working orders of LockedAccount), in one
 * statement, so reservation and availability are judged under the lock at no extra round trip.
 * A read that had to wait for the lock (another instance placing for the same account) is made
 * again once it holds it: every writer of what it judges writes the account's row too (a fill its
 * cash, a resting order or a replace a new version of it: queries.ts' touchAccountSql), which the
 * read tells by the locked row's version against its snapshot's.
 */
export const lockAccountForSymbol = async (tx: Tx, key: AccountKey, symbol: string, { holdings = false } = {}): Promise<LockedAccount | undefined> => {
  const { userId, assetClass, mode } = key;
  const [row] = await rowsOf<{ account: unknown; position: unknown; price: unknown; working: unknown; holdings: unknown; stale: boolean }>(
    tx,
    fixedSql`select ${ACCOUNT_JSON} as account,
        a.xmin::text <> (select s.xmin::text from ${simAccounts} s where s.user_id = a.user_id and s.asset_class = a.asset_class and s.mode = a.mode) as stale,
        case when p.symbol is null then null else json_build_object('symbol', p.symbol, 'qty', p.qty::text, 'avg_entry_price', p.avg_entry_price::text, 'realized_pnl', p.realized_pnl::text, 'updated_at', p.updated_at) end as position,
        case when pr.symbol is null then null else json_build_object('admin_price', pr.admin_price::text, 'tick_price', pr.tick_price::text, 'updated_at', pr.updated_at) end as price,
        coalesce((select json_agg(${ORDER_JSON} order by o.created_at, o.id) from ${simOrders} o
          where o.user_id = a.user_id and o.asset_class = a.asset_class and o.mode = a.mode and ${WORKING} and (o.side = 'buy' or o.symbol = ${symbol})), '[]'::json) as working,
        ${holdings ? HOLDINGS : fixedSql`null`} as holdings
      from ${simAccounts} a
      left join ${simPositions} p on p.user_id = a.user_id and p.asset_class = a.asset_class and p.mode = a.mode and p.symbol = ${symbol}
      left join ${simPrices} pr on pr.asset_class = a.asset_class and pr.symbol = ${symbol}
      where a.user_id = ${userId} and a.asset_class = ${assetClass} and a.mode = ${mode}
      for update of a`,
  );
  if (!row) return undefined;
  // The lock was waited for, and the transaction it waited for wrote the account: the row is read
  // as it committed, but the position and the working orders beside it as they were before the
  // wait (the statement's snapshot). Read again, holding the lock now: a new statement sees it all.
  if (row.stale) return lockAccountForSymbol(tx, key, symbol, { holdings });
  const position = fromJson<PositionJson | null>(row.position);
  return {
    account: accountOfJson(key, fromJson<AccountJson>(row.account)),
    position: position && positionOfJson(key, position),
    price: priceOfJson(assetClass, symbol, fromJson<PriceJson | null>(row.price)),
    working: fromJson<OrderJson[]>(row.working).map((order) => orderOfJson(key, order)),
    ...(holdings ? { holdings: holdingsOf(key, row.holdings) } : {}),
  };
};

/**
 * The account, the positions it holds (each with its symbol's stored prices) and its working
 * orders oldest first, in one statement: what a snapshot of the account reads.
 */
export const readAccountSnapshot = async (
  db: Queryable,
  key: AccountKey,
): Promise<{ account: SimAccountRow; positions: { position: SimPositionRow; price: SimPriceRow | null }[]; orders: SimOrderRow[] } | undefined> => {
  const { userId, assetClass, mode } = key;
  const [row] = await rowsOf<{ account: unknown; positions: unknown; orders: unknown }>(
    db,
    fixedSql`select ${ACCOUNT_JSON} as account,
      ${HOLDINGS} as positions,
      coalesce((select json_agg(${ORDER_JSON} order by o.created_at, o.id)
        from ${simOrders} o
        where o.user_id = a.user_id and o.asset_class = a.asset_class and o.mode = a.mode and ${WORKING}), '[]'::json) as orders
    from ${simAccounts} a where a.user_id = ${userId} and a.asset_class = ${assetClass} and a.mode = ${mode}`,
  );
  if (!row) return undefined;
  return {
    account: accountOfJson(key, fromJson<AccountJson>(row.account)),
    positions: holdingsOf(key, row.positions),
    orders: fromJson<OrderJson[]>(row.orders).map((order) => orderOfJson(key, order)),
  };
};
