// SQL on the simulated broker's books (accounts, orders, fills, positions): the only module that
// knows these tables (its stored prices are price-queries.ts'; the leases, server/db/leases.ts).
import { and, asc, eq, gt, inArray, lte, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import { rowsOf, type Queryable, type Tx } from '../../db/client.ts';
import { fixedSql } from '../../db/fixed-sql.ts';
import { dateOrNull, fromJson, priceOfJson, type PriceJson } from './row-json.ts';
import { simAccounts, simFills, simOrders, simPositions, simPrices, type SimOrderRow } from '../../db/schema/index.ts';

export type { SimOrderRow };
export type SimAccountRow = typeof simAccounts.$inferSelect;
export type SimPositionRow = typeof simPositions.$inferSelect;
export type SimFillRow = typeof simFills.$inferSelect;
export type SimPriceRow = typeof simPrices.$inferSelect;
type SimOrderInsert = typeof simOrders.$inferInsert;

/** One simulated account: a user's books for one asset class in one mode. */
export interface AccountKey {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
}

export const ACTIVE_STATUSES = ['accepted', 'open', 'partially_filled'] as const;

const accountIs = ({ userId, assetClass, mode }: AccountKey) =>
  and(eq(simAccounts.userId, userId), eq(simAccounts.assetClass, assetClass), eq(simAccounts.mode, mode));
const ordersOf = ({ userId, assetClass, mode }: AccountKey) =>
  and(eq(simOrders.userId, userId), eq(simOrders.assetClass, assetClass), eq(simOrders.mode, mode));
const positionsOf = ({ userId, assetClass, mode }: AccountKey) =>
  and(eq(simPositions.userId, userId), eq(simPositions.assetClass, assetClass), eq(simPositions.mode, mode));
// Written into the statement, not bound: the partial indexes over working orders serve a
// statement only when the planner sees the list, and a prepared statement's generic plan sees no values.
const isActive = () => sql`${simOrders.status} in (${sql.raw(ACTIVE_STATUSES.map((status) => `'${status}'`).join(', '))})`;

// ---------------------------------------------------------------------------------------------
// Accounts

/** Opens the account with its starting cash unless it exists; an existing account is kept as it is. */
export const insertAccountIfMissing = async (db: Queryable, key: AccountKey & { currency: string; cash: string; at: Date }): Promise<void> => {
  await db
    .insert(simAccounts)
    .values({ userId: key.userId, assetClass: key.assetClass, mode: key.mode, currency: key.currency, cash: key.cash, initialCash: key.cash, createdAt: key.at })
    .onConflictDoNothing();
};

export const findAccount = async (db: Queryable, key: AccountKey): Promise<SimAccountRow | undefined> => (await db.select().from(simAccounts).where(accountIs(key)))[0];

/**
 * The account row locked for the rest of the transaction. Every change of an account's books
 * takes this lock first, so fills, cancels and resets of one account never interleave (and,
 * always taken before any order row, never deadlock).
 */
export const lockAccount = async (tx: Tx, key: AccountKey): Promise<SimAccountRow | undefined> =>
  (await tx.select().from(simAccounts).where(accountIs(key)).for('update'))[0];

export const resetAccountRow = async (tx: Tx, key: AccountKey, { cash, at }: { cash: string; at: Date }): Promise<SimAccountRow> => {
  const [row] = await tx.update(simAccounts).set({ cash, initialCash: cash, resetAt: at }).where(accountIs(key)).returning();
  return row!;
};

// ---------------------------------------------------------------------------------------------
// Orders

/** Inserts an order; undefined when the account already has an order with that client order id. */
/** The row an insert of these values writes: the columns left out take their defaults. */
export const simOrderRowOf = (values: SimOrderInsert & Pick<SimOrderRow, 'createdAt' | 'updatedAt'>): SimOrderRow => ({
  filledQty: '0',
  avgFillPrice: null,
  limitPrice: null,
  stopPrice: null,
  bracket: null,
  parentId: null,
  ocoSiblingId: null,
  metadata: {},
  expiresAt: null,
  ...values,
});

/**
 * Takes an order on the books; undefined when the account already has an order with that client
 * id. The row is the one written, so nothing is read back.
 */
/** Where a client order id used before in the account shows: a unique violation of this index. */
export const CLIENT_ORDER_ID_KEY = 'sim_orders_client_id_key';

/**
 * Inserts an order. A client order id used before in the account fails the statement (and with it
 * the transaction) on CLIENT_ORDER_ID_KEY: an error of the database, not an empty answer, so that
 * a transaction that sent it without waiting cannot commit without it.
 */
export const insertOrder = async (tx: Tx, values: SimOrderInsert & Pick<SimOrderRow, 'createdAt' | 'updatedAt'>): Promise<SimOrderRow> => {
  const row = simOrderRowOf(values);
  await tx.execute(fixedSql`with touched as (${touchAccountSql(row)}) ${insertOrderSql(row)}`);
  return row;
};

/**
 * A new version of the account's row, nothing in it changed. Written by every transaction that
 * adds to what the account's working orders hold without a fill (which writes the row anyway): a
 * resting order, a replace. A placement whose lock read waited for such a transaction can then
 * tell that the rest of its read predates it (lockAccountForSymbol).
 */
const touchAccountSql = ({ userId, assetClass, mode }: AccountKey) =>
  fixedSql`update ${simAccounts} set cash = cash where user_id = ${userId} and asset_class = ${assetClass} and mode = ${mode}`;

/** touchAccountSql as a statement of its own (a replace's). */
export const touchAccount = async (tx: Tx, key: AccountKey): Promise<void> => {
  await tx.execute(touchAccountSql(key));
};

/** The insert of one order row (insertOrder), as a statement or a data-modifying CTE. */
const insertOrderSql = (row: SimOrderRow) => {
  const iso = (at: Date | null) => at?.toISOString() ?? null;
  return fixedSql`insert into ${simOrders} (user_id, id, client_order_id, asset_class, mode, symbol, side, order_type, time_in_force, qty, filled_qty, avg_fill_price,
        limit_price, stop_price, status, bracket, parent_id, oco_sibling_id, metadata, expires_at, created_at, updated_at)
      values (${row.userId}::integer, ${row.id}::text, ${row.clientOrderId}::text, ${row.assetClass}::text, ${row.mode}::text, ${row.symbol}::text, ${row.side}::text,
        ${row.orderType}::text, ${row.timeInForce}::text, ${row.qty}::numeric, ${row.filledQty}::numeric, ${row.avgFillPrice}::numeric, ${row.limitPrice}::numeric,
        ${row.stopPrice}::numeric, ${row.status}::text, ${row.bracket === null ? null : JSON.stringify(row.bracket)}::jsonb, ${row.parentId}::text, ${row.ocoSiblingId}::text,
        ${JSON.stringify(row.metadata)}::jsonb, ${iso(row.expiresAt)}::timestamptz, ${iso(row.createdAt)}::timestamptz, ${iso(row.updatedAt)}::timestamptz)`;
};

export type OrderLookupKey = AccountKey & ({ brokerOrderId: string } | { clientOrderId: string });

export const findOrder = async (db: Queryable, lookup: OrderLookupKey): Promise<SimOrderRow | undefined> => {
  const byId = 'brokerOrderId' in lookup ? eq(simOrders.id, lookup.brokerOrderId) : eq(simOrders.clientOrderId, lookup.clientOrderId);
  return (await db.select().from(simOrders).where(and(ordersOf(lookup), byId)))[0];
};

/** The order row locked for the rest of the transaction (take the account's lock first). */
export const lockOrder = async (tx: Tx, { userId, id }: { userId: number; id: string }): Promise<SimOrderRow | undefined> =>
  (await tx.select().from(simOrders).where(and(eq(simOrders.userId, userId), eq(simOrders.id, id))).for('update'))[0];

/** The children of a bracket entry, by the client ids they are named with, locked (take the account's lock first). */
export const lockBracketChildren = (tx: Tx, entry: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode'>, clientOrderIds: readonly string[]): Promise<SimOrderRow[]> =>
  tx
    .select()
    .from(simOrders)
    .where(and(ordersOf(entry), inArray(simOrders.clientOrderId, [...clientOrderIds])))
    .orderBy(asc(simOrders.clientOrderId))
    .for('update');

export const updateOrder = async (
  tx: Tx,
  { userId, id }: { userId: number; id: string },
  fields: Partial<Pick<SimOrderRow, 'status' | 'filledQty' | 'avgFillPrice' | 'qty' | 'limitPrice' | 'stopPrice' | 'ocoSiblingId' | 'metadata'>> & { updatedAt: Date },
): Promise<SimOrderRow> => {
  const [row] = await tx
    .update(simOrders)
    .set(fields)
    .where(and(eq(simOrders.userId, userId), eq(simOrders.id, id)))
    .returning();
  return row!;
};

/** The account's orders still working (accepted, open, partially filled), oldest first. */
export const listActiveOrders = (db: Queryable, key: AccountKey): Promise<SimOrderRow[]> =>
  db
    .select()
    .from(simOrders)
    .where(and(ordersOf(key), isActive()))
    .orderBy(asc(simOrders.createdAt), asc(simOrders.id));

/** Working orders of every account, oldest first (time priority), optionally of one symbol. */
export const listWorkingOrders = (db: Queryable, { assetClasses, symbol }: { assetClasses: readonly TAssetClass[]; symbol?: string }): Promise<SimOrderRow[]> =>
  assetClasses.length === 0
    ? Promise.resolve([])
    : db
        .select()
        .from(simOrders)
        .where(and(isActive(), inArray(simOrders.assetClass, [...assetClasses]), symbol === undefined ? undefined : eq(simOrders.symbol, symbol)))
        .orderBy(asc(simOrders.createdAt), asc(simOrders.id));

/** Whether any account has a working order in the asset class: one row of the resting index at most. */
export const hasWorkingOrders = async (db: Queryable, assetClass: TAssetClass): Promise<boolean> =>
  (await db.select({ id: simOrders.id }).from(simOrders).where(and(isActive(), eq(simOrders.assetClass, assetClass))).limit(1)).length > 0;

/** Working orders whose expiry (a day order's session close) is at or before `now`. */
export const listExpiredOrders = (db: Queryable, { now, assetClasses }: { now: Date; assetClasses: readonly TAssetClass[] }): Promise<SimOrderRow[]> =>
  assetClasses.length === 0
    ? Promise.resolve([])
    : db
        .select()
        .from(simOrders)
        .where(and(isActive(), lte(simOrders.expiresAt, now), inArray(simOrders.assetClass, [...assetClasses])))
        .orderBy(asc(simOrders.expiresAt), asc(simOrders.id));

/** The account's working sell orders of one symbol: what they would still sell holds the position. */
export const listWorkingSells = (tx: Tx, key: AccountKey & { symbol: string }): Promise<SimOrderRow[]> =>
  tx
    .select()
    .from(simOrders)
    .where(and(ordersOf(key), isActive(), eq(simOrders.symbol, key.symbol), eq(simOrders.side, 'sell')));

/** Symbols someone has a working order in or holds: the ones the price walk moves. */
export const listLiveSymbols = async (db: Queryable, assetClasses: readonly TAssetClass[]): Promise<Array<{ assetClass: TAssetClass; symbol: string }>> => {
  if (assetClasses.length === 0) return [];
  const ordered = db
    .selectDistinct({ assetClass: simOrders.assetClass, symbol: simOrders.symbol })
    .from(simOrders)
    .where(and(isActive(), inArray(simOrders.assetClass, [...assetClasses])));
  const held = db
    .selectDistinct({ assetClass: simPositions.assetClass, symbol: simPositions.symbol })
    .from(simPositions)
    .where(and(gt(simPositions.qty, '0'), inArray(simPositions.assetClass, [...assetClasses])));
  return ordered.union(held);
};

// ---------------------------------------------------------------------------------------------
// Fills and positions

/**
 * What one fill changes on the books, written in one statement: the fill row, the order's filled
 * quantity, average price and status (unless the order is still to be written, in that state),
 * the position the fill leaves (a closed one stays, at quantity 0, so its realised P&L is kept)
 * and the account's cash. An order still to be written may be given as `insert`, its row in its
 * latest state: it is inserted by the same statement (a client order id used before fails it, as
 * insertOrder's does). Returns the fill's id.
 */
export const writeFill = async (
  tx: Tx,
  {
    order,
    orderWritten,
    insert,
    fill,
    position,
    cash,
    at,
  }: {
    order: Pick<SimOrderRow, 'userId' | 'id' | 'assetClass' | 'mode' | 'symbol' | 'side' | 'status' | 'filledQty' | 'avgFillPrice'>;
    orderWritten: boolean;
    insert?: SimOrderRow | undefined;
    fill: { qty: string; price: string; fee: string };
    position: { qty: string; avgEntryPrice: string; realizedPnl: string };
    cash: string;
    at: Date;
  },
): Promise<number> => {
  const { userId, assetClass, mode, symbol } = order;
  const when = at.toISOString();
  const [row] = await rowsOf<{ id: number | string }>(
    tx,
    fixedSql`with ${insert ? fixedSql`placed as (${insertOrderSql(insert)}),` : fixedSql``} fill as (
        insert into ${simFills} (user_id, order_id, asset_class, mode, symbol, side, qty, price, fee, created_at)
        values (${userId}, ${order.id}, ${assetClass}, ${mode}, ${symbol}, ${order.side}, ${fill.qty}::numeric, ${fill.price}::numeric, ${fill.fee}::numeric, ${when}::timestamptz)
        returning id),
      ${
        orderWritten
          ? fixedSql`filled as (
        update ${simOrders} set status = ${order.status}, filled_qty = ${order.filledQty}::numeric, avg_fill_price = ${order.avgFillPrice}::numeric, updated_at = ${when}::timestamptz
        where user_id = ${userId} and id = ${order.id}),`
          : fixedSql``
      }
      held as (
        insert into ${simPositions} (user_id, asset_class, mode, symbol, qty, avg_entry_price, realized_pnl, updated_at)
        values (${userId}, ${assetClass}, ${mode}, ${symbol}, ${position.qty}::numeric, ${position.avgEntryPrice}::numeric, ${position.realizedPnl}::numeric, ${when}::timestamptz)
        on conflict (user_id, asset_class, mode, symbol) do update
        set qty = excluded.qty, avg_entry_price = excluded.avg_entry_price, realized_pnl = excluded.realized_pnl, updated_at = excluded.updated_at),
      paid as (
        update ${simAccounts} set cash = ${cash}::numeric where user_id = ${userId} and asset_class = ${assetClass} and mode = ${mode})
    select id from fill`,
  );
  return Number(row!.id);
};

export const listFills = (db: Queryable, { userId, orderId }: { userId: number; orderId: string }): Promise<SimFillRow[]> =>
  db
    .select()
    .from(simFills)
    .where(and(eq(simFills.userId, userId), eq(simFills.orderId, orderId)))
    .orderBy(asc(simFills.id));

export const findPosition = async (db: Queryable, key: AccountKey & { symbol: string }): Promise<SimPositionRow | undefined> =>
  (await db.select().from(simPositions).where(and(positionsOf(key), eq(simPositions.symbol, key.symbol))))[0];

/** A held symbol with its stored prices (null: none stored). */
export interface HeldSymbol {
  assetClass: TAssetClass;
  symbol: string;
  price: SimPriceRow | null;
}

/** One account's equity, as exact decimal text. */
export interface AccountEquityRow {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  equity: string;
  /** The cash part of `equity`. */
  cash: string;
  /** The account's last reset: the day's flows are read up to it. */
  resetAt: Date | null;
}

type Only = { userId: number; assetClass: TAssetClass } | undefined;

/**
 * Every account's equity, cash plus each held quantity at its price from the `prices` CTE (a
 * symbol without one at its entry price, as the positions read does), exact in numeric.
 */
const equitiesSql = (only: Only) =>
  fixedSql`select a.user_id, a.asset_class, a.mode, (a.cash + coalesce(sum(p.qty * coalesce(pr.price, p.avg_entry_price)), 0))::text as equity, a.cash::text as cash,
        to_json(a.reset_at) #>> '{}' as reset_at
      from ${simAccounts} a
      left join ${simPositions} p on p.user_id = a.user_id and p.asset_class = a.asset_class and p.mode = a.mode and p.qty > 0
      left join prices pr on pr.asset_class = p.asset_class and pr.symbol = p.symbol
      ${only ? fixedSql`where a.user_id = ${only.userId} and a.asset_class = ${only.assetClass}` : fixedSql``}
      group by a.user_id, a.asset_class, a.mode, a.cash, a.reset_at`;

/**
 * Every account's equity (cash plus each held quantity at its price) in one statement, exact in
 * numeric; `prices` are the held symbols' current prices (a symbol without one is valued at its
 * entry price, as the positions read does). `only` narrows it to one user's asset class.
 */
export const listAccountEquities = async (db: Queryable, { prices, only }: { prices: { asset_class: TAssetClass; symbol: string; price: string }[]; only?: Only }): Promise<AccountEquityRow[]> => {
  const rows = await rowsOf<{ user_id: number; asset_class: TAssetClass; mode: TTradingMode; equity: string; cash: string; reset_at: string | null }>(
    db,
    fixedSql`with prices as (select * from jsonb_to_recordset(${JSON.stringify(prices)}::jsonb) as p(asset_class text, symbol text, price numeric))
      ${equitiesSql(only)}`,
  );
  return rows.map((row) => ({ userId: row.user_id, assetClass: row.asset_class, mode: row.mode, equity: row.equity, cash: row.cash, resetAt: dateOrNull(row.reset_at) }));
};

/**
 * In one statement: the symbols any account holds (quantity above zero), or one user's in one
 * asset class, each with its stored prices; and every account's equity as listAccountEquities
 * gives it with each held symbol at its stored price (an operator's, else the walk's tick, as the
 * text a decimal prints: no trailing zeros). Those equities are the answer only where each held
 * symbol is priced by its stored price: the caller checks that, and reads them again with its
 * prices otherwise.
 */
export const listEquitiesAtStoredPrices = async (db: Queryable, only: Only): Promise<{ held: HeldSymbol[]; equities: AccountEquityRow[] }> => {
  const [row] = await rowsOf<{ held: unknown; equities: unknown }>(
    db,
    fixedSql`with held as (select distinct p.asset_class, p.symbol from ${simPositions} p
          where p.qty > 0 ${only ? fixedSql`and p.user_id = ${only.userId} and p.asset_class = ${only.assetClass}` : fixedSql``}),
        stored as (select h.asset_class, h.symbol, pr.symbol as priced, pr.admin_price, pr.tick_price, pr.updated_at
          from held h left join ${simPrices} pr on pr.asset_class = h.asset_class and pr.symbol = h.symbol),
        prices as (select asset_class, symbol, trim_scale(coalesce(admin_price, tick_price)) as price from stored where coalesce(admin_price, tick_price) is not null),
        equities as (${equitiesSql(only)})
      select coalesce((select json_agg(json_build_object('asset_class', asset_class, 'symbol', symbol, 'price',
            case when priced is null then null else json_build_object('admin_price', admin_price::text, 'tick_price', tick_price::text, 'updated_at', updated_at) end)) from stored), '[]'::json) as held,
        coalesce((select json_agg(json_build_object('user_id', user_id, 'asset_class', asset_class, 'mode', mode, 'equity', equity, 'cash', cash, 'reset_at', reset_at)) from equities), '[]'::json) as equities`,
  );
  const held = fromJson<{ asset_class: TAssetClass; symbol: string; price: PriceJson | null }[]>(row!.held);
  const equities = fromJson<{ user_id: number; asset_class: TAssetClass; mode: TTradingMode; equity: string; cash: string; reset_at: string | null }[]>(row!.equities);
  return {
    held: held.map((h) => ({ assetClass: h.asset_class, symbol: h.symbol, price: priceOfJson(h.asset_class, h.symbol, h.price) })),
    equities: equities.map((e) => ({ userId: e.user_id, assetClass: e.asset_class, mode: e.mode, equity: e.equity, cash: e.cash, resetAt: dateOrNull(e.reset_at) })),
  };
};

/** The positions the account holds (quantity above zero), each with its symbol's stored prices. */
export const listPositionsWithPrices = (db: Queryable, key: AccountKey): Promise<{ position: SimPositionRow; price: SimPriceRow | null }[]> =>
  db
    .select({ position: simPositions, price: simPrices })
    .from(simPositions)
    .leftJoin(simPrices, and(eq(simPrices.assetClass, simPositions.assetClass), eq(simPrices.symbol, simPositions.symbol)))
    .where(and(positionsOf(key), gt(simPositions.qty, '0')))
    .orderBy(asc(simPositions.symbol));

export const deletePositions = async (tx: Tx, key: AccountKey): Promise<number> =>
  (await tx.delete(simPositions).where(positionsOf(key)).returning({ symbol: simPositions.symbol })).length;
