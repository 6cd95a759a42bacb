// SQL of the order service's reads: orders and fills (a placement's preflight, the list and its
// kept counts, the reconciler's unfinished orders, the links by client or broker id). The writes
// are write-queries.ts's, the rate counters rate-queries.ts's. The live flags, locks and day-start
// equity are the controls' (controls/queries.ts): the preflight takes its fragments from there.
import { and, desc, eq, sql, type SQLWrapper } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderStatus } from '../../contracts/orders.ts';
import { liveEnabledSql, lockedUntilMsSql } from '../controls/queries.ts';
import { rowsOf, type Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { auditEvents, orderCountChanges, orderCounts, orderFills, orders, type OrderRow } from '../db/schema/index.ts';
import { tallyTotal, type Tally } from '../db/tallies.ts';

/**
 * What a placement reads before its gates, in one statement: whether the client order id is
 * taken, the account's emergency lock and the user's live flag for the asset class.
 */
export const readPreflight = async (db: Queryable, { userId, clientOrderId, assetClass }: { userId: number; clientOrderId: string; assetClass: TAssetClass }) => {
  const [row] = await rowsOf<{ taken: boolean; locked_until_ms: number | null; live_enabled: boolean | null }>(
    db,
    fixedSql`select
      exists (select 1 from ${orders} where user_id = ${userId} and client_order_id = ${clientOrderId}) as taken,
      ${lockedUntilMsSql({ userId, assetClass })} as locked_until_ms,
      ${liveEnabledSql({ userId, assetClass })} as live_enabled`,
  );
  return { taken: row?.taken === true, lockedUntil: row?.locked_until_ms == null ? null : new Date(row.locked_until_ms), liveEnabled: row?.live_enabled === true };
};

export const findOrderByClientId = async (db: Queryable, { userId, clientOrderId, forUpdate = false }: { userId: number; clientOrderId: string; forUpdate?: boolean }): Promise<OrderRow | undefined> => {
  const query = db.select().from(orders).where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId)));
  return (await (forUpdate ? query.for('update') : query))[0];
};

/**
 * The user's order by broker id, only when the audit log holds its placement by this user:
 * another user's order is never returned, even if a bug wrote it under the wrong user.
 */
export const findAuditedOrder = async (db: Queryable, { userId, brokerOrderId, assetClass }: { userId: number; brokerOrderId: string; assetClass: TAssetClass }) =>
  (
    await db
      .select()
      .from(orders)
      .where(and(eq(orders.userId, userId), eq(orders.brokerOrderId, brokerOrderId), eq(orders.assetClass, assetClass), auditedBy(userId)))
  )[0];

/**
 * Whether the audit log holds the order's placement by this user: one probe of
 * audit_events_order_idx per order row read, whatever the user's history. `offset 0` keeps the
 * check a probe: Postgres turns a plain `exists` into a semi-join, and for a user with a short
 * history it then prefers to read the whole trail (or the whole log) and hash it, a plan that
 * costs more with every order until it is replanned.
 */
const auditedBy = (userId: number) =>
  sql`exists (select 1 from ${auditEvents} where ${auditEvents.subjectUserId} = ${userId} and ${auditEvents.data}->>'client_order_id' = ${orders.clientOrderId} and ${auditEvents.action} = 'order.placed' offset 0)`;

/**
 * `status in (...)` with the statuses written into the statement rather than bound: the partial
 * indexes over statuses (orders_working_idx, orders_ended_idx) serve a statement only when the
 * planner sees the list, and a prepared statement's generic plan sees no values.
 */
const statusIn = (statuses: readonly TOrderStatus[], column: SQLWrapper = orders.status) => {
  if (statuses.length === 0) return sql`false`;
  for (const status of statuses) if (!orders.status.enumValues.includes(status)) throw new Error(`not an order status: ${status}`);
  return sql`${column} in (${sql.raw(statuses.map((status) => `'${status}'`).join(', '))})`;
};

const UNFINISHED: readonly TOrderStatus[] = ['pending', 'accepted', 'open', 'partially_filled'];

/** The orders the list shows, counted per user, asset class, mode and status (migration 0016). */
export const orderTally: Tally = { summary: orderCounts, changes: orderCountChanges, key: ['user_id', 'asset_class', 'live', 'status'] };

/** How many orders the list shows under these filters: the user's kept counts, whatever its history. */
export const countListedOrders = (db: Queryable, { userId, assetClass, statuses, live }: { userId: number; assetClass: TAssetClass; statuses?: readonly TOrderStatus[]; live?: boolean }) =>
  tallyTotal(
    db,
    orderTally,
    and(
      sql`user_id = ${userId}`,
      sql`asset_class = ${assetClass}`,
      statuses === undefined ? undefined : statusIn(statuses, sql`status`),
      live === undefined ? undefined : sql`live = ${live}`,
    ) ?? sql`true`,
  );

/**
 * A page of the user's orders that the audit log shows this user placed, newest first, and their
 * total. The page reads its rows (and the offset's) in list order by index, each with one audit
 * probe; the total is the page's when the page tells it (a page not full, or an empty first page),
 * else the kept count's.
 */
export const listAuditedOrders = async (
  db: Queryable,
  { userId, assetClass, statuses, live, page, size }: { userId: number; assetClass: TAssetClass; statuses?: readonly TOrderStatus[]; live?: boolean; page: number; size: number },
): Promise<{ rows: OrderRow[]; total: number }> => {
  const where = and(
    eq(orders.userId, userId),
    eq(orders.assetClass, assetClass),
    statuses === undefined ? undefined : statusIn(statuses),
    live === undefined ? undefined : eq(orders.live, live),
    sql`${orders.brokerOrderId} is not null`,
    auditedBy(userId),
  );
  const offset = (page - 1) * size;
  const rows = await db.select().from(orders).where(where).orderBy(desc(orders.submittedAt), desc(orders.clientOrderId)).limit(size).offset(offset);
  if ((rows.length > 0 && rows.length < size) || (rows.length === 0 && offset === 0)) return { rows, total: offset + rows.length };
  return { rows, total: await countListedOrders(db, { userId, assetClass, statuses, live }) };
};

/**
 * Orders without a final answer: intents a crash left before the broker answered, and working
 * orders whose events a crash may have cut off.
 */
export const listUnfinishedOrders = (db: Queryable, account?: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<OrderRow[]> =>
  db
    .select()
    .from(orders)
    .where(
      and(
        statusIn(UNFINISHED),
        account ? and(eq(orders.userId, account.userId), eq(orders.assetClass, account.assetClass), eq(orders.live, account.mode === 'live')) : undefined,
      ),
    );

/** The user's order of an asset class and mode by broker order id (a broker that keeps no client id of ours, KIS, links by it). */
export const findOrderByBrokerId = async (db: Queryable, { userId, assetClass, mode, brokerOrderId }: { userId: number; assetClass: TAssetClass; mode: TTradingMode; brokerOrderId: string }): Promise<OrderRow | undefined> =>
  (
    await db
      .select()
      .from(orders)
      .where(and(eq(orders.userId, userId), eq(orders.assetClass, assetClass), eq(orders.live, mode === 'live'), eq(orders.brokerOrderId, brokerOrderId)))
      .limit(1)
  )[0];

/** The instruments the user has working orders in. */
export const listWorkingSymbols = (db: Queryable, { userId }: { userId: number }): Promise<{ assetClass: TAssetClass; symbol: string }[]> =>
  db
    .selectDistinct({ assetClass: orders.assetClass, symbol: orders.symbol })
    .from(orders)
    .where(and(eq(orders.userId, userId), statusIn(UNFINISHED)));

export const fillsOf = (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }) =>
  db.select().from(orderFills).where(and(eq(orderFills.userId, userId), eq(orderFills.clientOrderId, clientOrderId)));
