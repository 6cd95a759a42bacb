// SQL of the order service: orders and fills, the rate counters and the order list's kept counts.
// The only module that knows these tables. The live flags, locks and day-start equity are the
// controls' (controls/queries.ts): the statements here that read them take their fragments from there.
import { and, desc, eq, sql, type SQLWrapper } from 'drizzle-orm';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderStatus } from '../../contracts/orders.ts';
import { auditInsertSql, type AuditRecord } from '../audit/log.ts';
import { liveEnabledSql, lockedUntilMsSql, runningLockSql } from '../controls/queries.ts';
import { rowsOf, type Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { eventsInsertSql, type TEventChannel } from '../events/queries.ts';
import { auditEvents, orderCountChanges, orderCounts, orderFills, orderRateCounters, orders, type OrderRow } from '../db/schema/index.ts';
import { tallyTotal, type Tally } from '../db/tallies.ts';

export type OrderInsert = typeof orders.$inferInsert;

/** Inserts the intent; undefined when the user already has an order with that client id. */
export const insertOrderIntent = async (db: Queryable, values: OrderInsert): Promise<OrderRow | undefined> =>
  (await db.insert(orders).values(values).onConflictDoNothing().returning())[0];

/** An outbox row as the order service writes it. */
export interface OutboxInsert {
  userId: number;
  channel: TEventChannel;
  frame: Record<string, unknown>;
  at: Date;
}

/** The intent as a row of VALUES, for an insert that only some condition lets through. */
const intentValues = (values: OrderInsert) =>
  fixedSql`(${values.userId}::integer, ${values.clientOrderId}::text, ${values.brokerOrderId ?? null}::text, ${values.assetClass}::text, ${values.live}::boolean,
    ${values.broker}::text, ${values.symbol}::text, ${values.side}::text, ${values.orderType}::text, ${values.timeInForce}::text, ${values.qty}::numeric,
    ${values.filledQty ?? '0'}::numeric, ${values.avgFillPrice ?? null}::numeric, ${values.limitPrice ?? null}::numeric, ${values.stopPrice ?? null}::numeric,
    ${values.status}::text, ${values.bracket == null ? null : JSON.stringify(values.bracket)}::jsonb, ${JSON.stringify(values.metadata ?? {})}::jsonb,
    ${values.requestHash ?? null}::text, ${values.reason ?? null}::text, ${values.submittedAt.toISOString()}::timestamptz, ${values.updatedAt.toISOString()}::timestamptz)`;

/** What the intent statement did (insertIntentRecorded). */
export interface IntentOutcome {
  claimed: boolean;
  placed: boolean;
  /** The running lock that kept the intent out (only with a lock check), else null. */
  lockedUntil: Date | null;
}

/**
 * The intent with its audit record and its events, in one statement (so one round trip and one
 * commit). With a rate claim, the claim is made first and the intent written only when it
 * counted. With a lock check, the intent is written only while the account has no emergency lock
 * running at `at` (a paper order reads no lock before its gates: this statement is where it is
 * checked, atomically with the write). `placed` is false, with nothing of the intent written, when
 * the claim was refused, a lock was running (`lockedUntil` says until when) or the user already
 * has an order with that client id (the claim then stands, for the caller to give back).
 */
export const insertIntentRecorded = async (
  db: Queryable,
  values: OrderInsert,
  records: { audit: AuditRecord[]; events: OutboxInsert[]; claim?: RateClaim; lockCheck?: { at: Date } },
): Promise<IntentOutcome> => {
  const { claim, lockCheck } = records;
  const lock = lockCheck ? fixedSql`lock as (${runningLockSql({ userId: values.userId, assetClass: values.assetClass, at: lockCheck.at })}),` : fixedSql``;
  const where =
    claim && lockCheck
      ? fixedSql`where exists (select 1 from claim) and not exists (select 1 from lock)`
      : claim
        ? fixedSql`where exists (select 1 from claim)`
        : lockCheck
          ? fixedSql`where not exists (select 1 from lock)`
          : fixedSql``;
  const placed = fixedSql`insert into ${orders} (user_id, client_order_id, broker_order_id, asset_class, live, broker, symbol, side, order_type, time_in_force, qty,
        filled_qty, avg_fill_price, limit_price, stop_price, status, bracket, metadata, request_hash, reason, submitted_at, updated_at)
      select * from (values ${intentValues(values)}) as intent ${where}
      on conflict do nothing returning user_id`;
  const made = fixedSql`exists (select 1 from placed)`;
  const [row] = await rowsOf<{ claimed: number; placed: number; locked_until_ms: number | null }>(
    db,
    fixedSql`with ${claim ? fixedSql`claim as (${claimSql(claim)}),` : fixedSql``} ${lock}
      placed as (${placed}),
      audit as (${auditInsertSql(records.audit, made)}),
      events as (${eventsInsertSql(records.events, made)})
    select ${claim ? fixedSql`(select count(*) from claim)::integer` : fixedSql`1`} as claimed, (select count(*) from placed)::integer as placed,
      ${lockCheck ? fixedSql`(select locked_until_ms from lock)` : fixedSql`null::float8`} as locked_until_ms`,
  );
  return { claimed: row?.claimed === 1, placed: row?.placed === 1, lockedUntil: row?.locked_until_ms == null ? null : new Date(row.locked_until_ms) };
};

/**
 * The broker's answer to an intent (and the events it sent with it) in one statement: the
 * order's new state, its fills, audit records and events; false, with nothing written, when the
 * order is no longer pending (another path has recorded an answer meanwhile).
 */
export const recordAnswer = async (
  db: Queryable,
  { userId, clientOrderId }: { userId: number; clientOrderId: string },
  change: Pick<OrderRow, 'brokerOrderId' | 'status' | 'filledQty' | 'avgFillPrice' | 'updatedAt'>,
  records: { fills: { executionId: string; qty: string; price: string; fee: string; at: Date }[]; audit: AuditRecord[]; events: OutboxInsert[] },
): Promise<boolean> => {
  const answered = fixedSql`update ${orders}
    set broker_order_id = ${change.brokerOrderId}::text, status = ${change.status}::text, filled_qty = ${change.filledQty}::numeric,
      avg_fill_price = ${change.avgFillPrice}::numeric, updated_at = ${change.updatedAt.toISOString()}::timestamptz
    where user_id = ${userId} and client_order_id = ${clientOrderId} and status = 'pending'
    returning user_id`;
  const made = fixedSql`exists (select 1 from answered)`;
  // One JSON parameter for the fills, as for the audit records and the events.
  const fills = JSON.stringify(records.fills.map((fill) => ({ execution_id: fill.executionId, qty: fill.qty, price: fill.price, fee: fill.fee, at: fill.at.toISOString() })));
  const [row] = await rowsOf<{ answered: number }>(
    db,
    fixedSql`with answered as (${answered}),
      ${
        records.fills.length > 0
          ? fixedSql`fills as (insert into ${orderFills} (user_id, client_order_id, execution_id, qty, price, fee, at)
              select ${userId}::integer, ${clientOrderId}::text, execution_id, qty, price, fee, at
              from jsonb_to_recordset(${fills}::jsonb) as fills(execution_id text, qty numeric, price numeric, fee numeric, at timestamptz)
              where ${made} on conflict do nothing),`
          : fixedSql``
      }
      audit as (${auditInsertSql(records.audit, made)}),
      events as (${eventsInsertSql(records.events, made)})
    select count(*)::integer as answered from answered`,
  );
  return row?.answered === 1;
};

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

export const updateOrder = async (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }, change: Partial<OrderInsert>): Promise<OrderRow | undefined> =>
  (await db.update(orders).set(change).where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId))).returning())[0];

/**
 * Records the broker's acceptance: its order id, and the status `accepted` unless the broker's
 * events have moved the order on already (it is never moved back).
 */
export const recordAcceptance = async (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }, { brokerOrderId, at }: { brokerOrderId: string; at: Date }): Promise<OrderRow | undefined> =>
  (
    await db
      .update(orders)
      .set({ brokerOrderId, status: sql`case when ${orders.status} = 'pending' then 'accepted' else ${orders.status} end`, updatedAt: at })
      .where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId)))
      .returning()
  )[0];

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

/** Records one broker execution; false when it was already recorded (a duplicate delivery). */
export const insertFill = async (db: Queryable, values: typeof orderFills.$inferInsert): Promise<boolean> =>
  (await db.insert(orderFills).values(values).onConflictDoNothing().returning({ id: orderFills.id })).length > 0;

export const fillsOf = (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }) =>
  db.select().from(orderFills).where(and(eq(orderFills.userId, userId), eq(orderFills.clientOrderId, clientOrderId)));

/**
 * Counts one unit on a rate counter unless it already holds `max` in its window, in one statement
 * under the row's lock (parallel requests are counted one after another). Returns whether it was
 * counted, and when the window started.
 */
/** A rate claim: one unit of `scope` for the user, counted in a window that starts at `windowStart` or later. */
export interface RateClaim {
  userId: number;
  scope: string;
  windowStart: Date;
  at: Date;
  max: number;
}

/**
 * Counts one unit when the window has room (or has run out, which starts a new one at `at`);
 * returns the window's start when counted, no row when the limit is reached.
 */
/**
 * One unit of a rate window: counted when the window has room or has run out (a new window then
 * starts at `at`); no row comes back when the window is full.
 */
const claimSql = ({ userId, scope, windowStart, at, max }: RateClaim) => {
  const stale = fixedSql`${orderRateCounters.windowStart} < ${windowStart.toISOString()}::timestamptz`;
  return fixedSql`insert into ${orderRateCounters} (user_id, scope, window_start, count) values (${userId}::integer, ${scope}::text, ${at.toISOString()}::timestamptz, 1)
    on conflict (user_id, scope) do update set
      count = case when ${stale} then 1 else ${orderRateCounters.count} + 1 end,
      window_start = case when ${stale} then ${at.toISOString()}::timestamptz else ${orderRateCounters.windowStart} end
    where ${stale} or ${orderRateCounters.count} < ${max}::integer
    returning (extract(epoch from window_start) * 1000)::float8 as window_start_ms`;
};

/** When the window that refused a claim started (for Retry-After). */
export const rateWindowStart = async (db: Queryable, { userId, scope, at }: { userId: number; scope: string; at: Date }): Promise<Date> => {
  const [held] = await db.select({ windowStart: orderRateCounters.windowStart }).from(orderRateCounters).where(and(eq(orderRateCounters.userId, userId), eq(orderRateCounters.scope, scope)));
  return held?.windowStart ?? at;
};

export const claimRate = async (db: Queryable, claim: RateClaim): Promise<{ counted: boolean; windowStartedAt: Date }> => {
  const [row] = await rowsOf<{ window_start_ms: number }>(db, claimSql(claim));
  if (row) return { counted: true, windowStartedAt: new Date(row.window_start_ms) };
  return { counted: false, windowStartedAt: await rateWindowStart(db, claim) };
};

/** Gives back a unit claimed for an attempt that did not end in an accepted order. */
export const releaseRate = async (db: Queryable, { userId, scope }: { userId: number; scope: string }): Promise<void> => {
  await db
    .update(orderRateCounters)
    .set({ count: sql`greatest(${orderRateCounters.count} - 1, 0)` })
    .where(and(eq(orderRateCounters.userId, userId), eq(orderRateCounters.scope, scope)));
};
