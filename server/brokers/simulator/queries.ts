// SQL on the simulated broker's books (accounts, orders, fills, positions), its prices and the
// lease of its price walk: the only module that knows these tables.
import { and, asc, eq, gt, inArray, lte, or, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import { rowsOf, type Queryable, type Tx } from '../../db/client.ts';
import { leases, simAccounts, simFills, simOrders, simPositions, simPrices, type SimOrderRow } from '../../db/schema/index.ts';

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
const isActive = () => inArray(simOrders.status, [...ACTIVE_STATUSES]);

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

/**
 * The account row locked as lockAccount locks it, read with what a placement in one symbol needs
 * beside it (the position and the stored prices), in one statement.
 */
export const lockAccountForSymbol = async (
  tx: Tx,
  key: AccountKey,
  symbol: string,
): Promise<{ account: SimAccountRow; position: SimPositionRow | null; price: SimPriceRow | null } | undefined> =>
  (
    await tx
      .select({ account: simAccounts, position: simPositions, price: simPrices })
      .from(simAccounts)
      .leftJoin(simPositions, and(positionsOf(key), eq(simPositions.symbol, symbol)))
      .leftJoin(simPrices, and(eq(simPrices.assetClass, key.assetClass), eq(simPrices.symbol, symbol)))
      .where(accountIs(key))
      .for('update', { of: simAccounts })
  )[0];

export const updateCash = async (tx: Tx, key: AccountKey, cash: string): Promise<void> => {
  await tx.update(simAccounts).set({ cash }).where(accountIs(key));
};

export const resetAccountRow = async (tx: Tx, key: AccountKey, { cash, at }: { cash: string; at: Date }): Promise<SimAccountRow> => {
  const [row] = await tx.update(simAccounts).set({ cash, initialCash: cash, resetAt: at }).where(accountIs(key)).returning();
  return row!;
};

// ---------------------------------------------------------------------------------------------
// Orders

/** Inserts an order; undefined when the account already has an order with that client order id. */
export const insertOrder = async (tx: Tx, values: SimOrderInsert): Promise<SimOrderRow | undefined> =>
  (
    await tx
      .insert(simOrders)
      .values(values)
      .onConflictDoNothing({ target: [simOrders.userId, simOrders.assetClass, simOrders.mode, simOrders.clientOrderId] })
      .returning()
  )[0];

export type OrderLookupKey = AccountKey & ({ brokerOrderId: string } | { clientOrderId: string });

export const findOrder = async (db: Queryable, lookup: OrderLookupKey): Promise<SimOrderRow | undefined> => {
  const byId = 'brokerOrderId' in lookup ? eq(simOrders.id, lookup.brokerOrderId) : eq(simOrders.clientOrderId, lookup.clientOrderId);
  return (await db.select().from(simOrders).where(and(ordersOf(lookup), byId)))[0];
};

/** The order row locked for the rest of the transaction (take the account's lock first). */
export const lockOrder = async (tx: Tx, { userId, id }: { userId: number; id: string }): Promise<SimOrderRow | undefined> =>
  (await tx.select().from(simOrders).where(and(eq(simOrders.userId, userId), eq(simOrders.id, id))).for('update'))[0];

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

export const insertFill = async (tx: Tx, values: Omit<typeof simFills.$inferInsert, 'id'>): Promise<SimFillRow> => {
  const [row] = await tx.insert(simFills).values(values).returning();
  return row!;
};

export const listFills = (db: Queryable, { userId, orderId }: { userId: number; orderId: string }): Promise<SimFillRow[]> =>
  db
    .select()
    .from(simFills)
    .where(and(eq(simFills.userId, userId), eq(simFills.orderId, orderId)))
    .orderBy(asc(simFills.id));

export const findPosition = async (db: Queryable, key: AccountKey & { symbol: string }): Promise<SimPositionRow | undefined> =>
  (await db.select().from(simPositions).where(and(positionsOf(key), eq(simPositions.symbol, key.symbol))))[0];

/** Writes the position a fill leaves; a closed one stays (quantity 0) so its realised P&L is kept. */
export const savePosition = async (
  tx: Tx,
  key: AccountKey & { symbol: string },
  { qty, avgEntryPrice, realizedPnl, at }: { qty: string; avgEntryPrice: string; realizedPnl: string; at: Date },
): Promise<void> => {
  await tx
    .insert(simPositions)
    .values({ userId: key.userId, assetClass: key.assetClass, mode: key.mode, symbol: key.symbol, qty, avgEntryPrice, realizedPnl, updatedAt: at })
    .onConflictDoUpdate({
      target: [simPositions.userId, simPositions.assetClass, simPositions.mode, simPositions.symbol],
      set: { qty, avgEntryPrice, realizedPnl, updatedAt: at },
    });
};

/** The symbols any account holds (quantity above zero), or one user's in one asset class. */
export const listHeldSymbols = (db: Queryable, only?: { userId: number; assetClass: TAssetClass }): Promise<{ assetClass: TAssetClass; symbol: string }[]> =>
  db
    .selectDistinct({ assetClass: simPositions.assetClass, symbol: simPositions.symbol })
    .from(simPositions)
    .where(and(gt(simPositions.qty, '0'), only ? and(eq(simPositions.userId, only.userId), eq(simPositions.assetClass, only.assetClass)) : undefined));

/** One account's equity, as exact decimal text. */
export interface AccountEquityRow {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  equity: string;
}

/**
 * Every account's equity (cash plus each held quantity at its price) in one statement, exact in
 * numeric; `prices` are the held symbols' current prices (a symbol without one is valued at its
 * entry price, as the positions read does). `only` narrows it to one user's asset class.
 */
export const listAccountEquities = async (
  db: Queryable,
  { prices, only }: { prices: { asset_class: TAssetClass; symbol: string; price: string }[]; only?: { userId: number; assetClass: TAssetClass } },
): Promise<AccountEquityRow[]> => {
  const rows = await rowsOf<{ user_id: number; asset_class: TAssetClass; mode: TTradingMode; equity: string }>(
    db,
    sql`with prices as (select * from jsonb_to_recordset(${JSON.stringify(prices)}::jsonb) as p(asset_class text, symbol text, price numeric))
      select a.user_id, a.asset_class, a.mode, (a.cash + coalesce(sum(p.qty * coalesce(pr.price, p.avg_entry_price)), 0))::text as equity
      from ${simAccounts} a
      left join ${simPositions} p on p.user_id = a.user_id and p.asset_class = a.asset_class and p.mode = a.mode and p.qty > 0
      left join prices pr on pr.asset_class = p.asset_class and pr.symbol = p.symbol
      ${only ? sql`where a.user_id = ${only.userId} and a.asset_class = ${only.assetClass}` : sql``}
      group by a.user_id, a.asset_class, a.mode, a.cash`,
  );
  return rows.map((row) => ({ userId: row.user_id, assetClass: row.asset_class, mode: row.mode, equity: row.equity }));
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

// ---------------------------------------------------------------------------------------------
// Prices

export const findPrice = async (db: Queryable, { assetClass, symbol }: { assetClass: TAssetClass; symbol: string }): Promise<SimPriceRow | undefined> =>
  (await db.select().from(simPrices).where(and(eq(simPrices.assetClass, assetClass), eq(simPrices.symbol, symbol))))[0];

/** Sets (or, with null, clears) an operator's price. */
export const saveAdminPrice = async (db: Queryable, { assetClass, symbol, price, at }: { assetClass: TAssetClass; symbol: string; price: string | null; at: Date }): Promise<void> => {
  await db
    .insert(simPrices)
    .values({ assetClass, symbol, adminPrice: price, updatedAt: at })
    .onConflictDoUpdate({ target: [simPrices.assetClass, simPrices.symbol], set: { adminPrice: price, updatedAt: at } });
};

export const saveTickPrice = async (db: Queryable, { assetClass, symbol, price, at }: { assetClass: TAssetClass; symbol: string; price: string; at: Date }): Promise<void> => {
  await db
    .insert(simPrices)
    .values({ assetClass, symbol, tickPrice: price, updatedAt: at })
    .onConflictDoUpdate({ target: [simPrices.assetClass, simPrices.symbol], set: { tickPrice: price, updatedAt: at } });
};

// ---------------------------------------------------------------------------------------------
// Leases

/**
 * Takes the lease, or renews it for its holder, until `now + ttlMs`; true when `holder` holds it
 * afterwards. A lease another holder let expire (it stopped renewing: it died) is taken over.
 * Instants come from the caller's clock, not the database's, so a test can move time.
 */
export const takeLease = async (db: Queryable, { name, holder, now, ttlMs }: { name: string; holder: string; now: Date; ttlMs: number }): Promise<boolean> => {
  const expiresAt = new Date(now.getTime() + ttlMs);
  const rows = await db
    .insert(leases)
    .values({ name, holder, expiresAt })
    .onConflictDoUpdate({
      target: leases.name,
      set: { holder, expiresAt },
      setWhere: or(eq(leases.holder, holder), lte(leases.expiresAt, sql`${now.toISOString()}::timestamptz`)),
    })
    .returning({ holder: leases.holder });
  return rows[0]?.holder === holder;
};

/** Gives the lease up at once (a clean stop), so another instance need not wait for it to expire. */
export const releaseLease = async (db: Queryable, { name, holder }: { name: string; holder: string }): Promise<void> => {
  await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
};

export const findLease = async (db: Queryable, name: string): Promise<{ holder: string; expiresAt: Date } | undefined> =>
  (await db.select({ holder: leases.holder, expiresAt: leases.expiresAt }).from(leases).where(eq(leases.name, name)))[0];
