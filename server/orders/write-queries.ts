// SQL of an order's writes: its intent (with its audit record, its events and its rate claim, in
// one statement), the broker's answer to it, the later changes of its row, and its fills. The
// reads of orders are queries.ts's, the rate counters rate-queries.ts's. The live flags, locks and
// day-start equity are the controls' (controls/queries.ts): the intent statement takes its lock
// check from there.
import { and, eq, sql } from 'drizzle-orm';
import { auditInsertSql, ownOrderRecordsRemovalSql, type AuditRecord } from '../audit/log.ts';
import { runningLockSql } from '../controls/queries.ts';
import { rowsOf, type Queryable, type Tx } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
import { eventsInsertSql, type TEventChannel } from '../events/queries.ts';
import { orderFills, orders, type OrderRow } from '../db/schema/index.ts';
import { claimSql, type RateClaim } from '../controls/rate-queries.ts';

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
 * Takes back, in one statement, an intent this transaction wrote (insertIntentRecorded) and that
 * is to leave no order: its row and its `order.placed` record go, and `instead` (the refusal's
 * audit record) is written. False, with nothing done, when the order is no longer a pending intent.
 * Its rate claim stays: a refused attempt counts toward the limit. The intent of an in-books
 * placement writes no event (placement.ts), so there is none to take back; and a row that was
 * never listed (no broker id) leaves the kept counts as they were, while the records removed and
 * written are counted by the audit log's trigger.
 */
export const withdrawIntentRecorded = async (tx: Tx, { userId, clientOrderId }: { userId: number; clientOrderId: string }, instead: AuditRecord): Promise<boolean> => {
  const gone = fixedSql`delete from ${orders}
    where user_id = ${userId}::integer and client_order_id = ${clientOrderId}::text and status = 'pending' and broker_order_id is null
    returning user_id`;
  const made = fixedSql`exists (select 1 from gone)`;
  const [row] = await rowsOf<{ withdrawn: number }>(
    tx,
    fixedSql`with gone as (${gone}),
      placement as (${ownOrderRecordsRemovalSql({ subjectUserId: userId, clientOrderId, action: 'order.placed' }, made)}),
      audit as (${auditInsertSql([instead], made)})
    select count(*)::integer as withdrawn from gone`,
  );
  return row?.withdrawn === 1;
};

/**
 * The broker's answer to an intent (and the events it sent with it) in one statement: the
 * order's new state, its fills, audit records and events; false, with nothing written, when the
 * order is no longer pending (another path has recorded an answer meanwhile).
 */
export const recordAnswer = async (
  db: Queryable,
  { userId, clientOrderId }: { userId: number; clientOrderId: string },
  change: Pick<OrderRow, 'brokerOrderId' | 'status' | 'filledQty' | 'avgFillPrice' | 'stopPrice' | 'metadata' | 'updatedAt'>,
  records: { fills: { executionId: string; qty: string; price: string; fee: string; tax: string; at: Date }[]; audit: AuditRecord[]; events: OutboxInsert[] },
): Promise<boolean> => {
  const answered = fixedSql`update ${orders}
    set broker_order_id = ${change.brokerOrderId}::text, status = ${change.status}::text, filled_qty = ${change.filledQty}::numeric,
      avg_fill_price = ${change.avgFillPrice}::numeric, stop_price = ${change.stopPrice}::numeric, metadata = ${JSON.stringify(change.metadata)}::jsonb,
      updated_at = ${change.updatedAt.toISOString()}::timestamptz
    where user_id = ${userId} and client_order_id = ${clientOrderId} and status = 'pending'
    returning user_id`;
  const made = fixedSql`exists (select 1 from answered)`;
  // One JSON parameter for the fills, as for the audit records and the events.
  const fills = JSON.stringify(records.fills.map((fill) => ({ execution_id: fill.executionId, qty: fill.qty, price: fill.price, fee: fill.fee, tax: fill.tax, at: fill.at.toISOString() })));
  const [row] = await rowsOf<{ answered: number }>(
    db,
    fixedSql`with answered as (${answered}),
      ${
        records.fills.length > 0
          ? fixedSql`fills as (insert into ${orderFills} (user_id, client_order_id, execution_id, qty, price, fee, tax, at)
              select ${userId}::integer, ${clientOrderId}::text, execution_id, qty, price, fee, tax, at
              from jsonb_to_recordset(${fills}::jsonb) as fills(execution_id text, qty numeric, price numeric, fee numeric, tax numeric, at timestamptz)
              where ${made} on conflict do nothing),`
          : fixedSql``
      }
      audit as (${auditInsertSql(records.audit, made)}),
      events as (${eventsInsertSql(records.events, made)})
    select count(*)::integer as answered from answered`,
  );
  return row?.answered === 1;
};

export const updateOrder = async (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }, change: Partial<OrderInsert>): Promise<OrderRow | undefined> =>
  (await db.update(orders).set(change).where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId))).returning())[0];

/** Adds keys to an order's metadata in the database itself, so a concurrent event's change is never overwritten. */
export const mergeOrderMetadata = async (db: Queryable, { userId, clientOrderId }: { userId: number; clientOrderId: string }, patch: Record<string, unknown>): Promise<void> => {
  await db
    .update(orders)
    .set({ metadata: sql`${orders.metadata} || ${JSON.stringify(patch)}::jsonb` })
    .where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId)));
};

/**
 * Records the broker's acceptance: its order id, and the status `accepted` unless the broker's
 * events have moved the order on already (it is never moved back).
 */
export const recordAcceptance = async (
  db: Queryable,
  { userId, clientOrderId }: { userId: number; clientOrderId: string },
  { brokerOrderId, at, trail }: { brokerOrderId: string; at: Date; trail?: Pick<OrderRow, 'stopPrice' | 'metadata'> | undefined },
): Promise<OrderRow | undefined> =>
  (
    await db
      .update(orders)
      .set({
        brokerOrderId,
        status: sql`case when ${orders.status} = 'pending' then 'accepted' else ${orders.status} end`,
        // A trailing stop's first stop and mark; a broker event that moved them meanwhile keeps its later ones.
        ...(trail ? { stopPrice: sql`coalesce(${orders.stopPrice}, ${trail.stopPrice}::numeric)`, metadata: sql`${JSON.stringify(trail.metadata)}::jsonb || ${orders.metadata}` } : {}),
        updatedAt: at,
      })
      .where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId)))
      .returning()
  )[0];

/** Records one broker execution; false when it was already recorded (a duplicate delivery). */
export const insertFill = async (db: Queryable, values: typeof orderFills.$inferInsert): Promise<boolean> =>
  (await db.insert(orderFills).values(values).onConflictDoNothing().returning({ id: orderFills.id })).length > 0;
