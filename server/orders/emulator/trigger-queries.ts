// The SQL of the order emulator's triggers (order_triggers): written with the emulated order's
// acceptance, read by the account's watch, moved as the price moves, fired or canceled once.
import { and, asc, eq, isNotNull, isNull, lt, lte, notInArray, sql } from 'drizzle-orm';
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Queryable } from '../../db/client.ts';
import { orders, orderTriggers, type OrderRow, type OrderTriggerRow } from '../../db/schema/index.ts';

export type TriggerKey = { userId: number; clientOrderId: string };
export type EmulatedAccount = { userId: number; assetClass: TAssetClass; mode: TTradingMode };

const keyOf = ({ userId, clientOrderId }: TriggerKey) => and(eq(orderTriggers.userId, userId), eq(orderTriggers.clientOrderId, clientOrderId));
const working = sql`${orderTriggers.status} = 'working'`;

export const insertTrigger = async (db: Queryable, row: typeof orderTriggers.$inferInsert): Promise<void> => {
  await db.insert(orderTriggers).values(row);
};

/** The account's working triggers (the watch's set, read again on each reload). */
export const workingTriggers = (db: Queryable, { userId, assetClass, mode }: EmulatedAccount): Promise<OrderTriggerRow[]> =>
  db
    .select()
    .from(orderTriggers)
    .where(and(eq(orderTriggers.userId, userId), eq(orderTriggers.assetClass, assetClass), eq(orderTriggers.live, mode === 'live'), working));

/** A trigger as one arming of it: a replace arms it again, and what a watch did with the older arming no longer applies. */
export type ArmedKey = TriggerKey & { armedAt: Date };
const armedKeyOf = (key: ArmedKey) => and(keyOf(key), eq(orderTriggers.armedAt, key.armedAt));

/** Saves a moved mark and stop while the trigger works as armed; false when it no longer does (canceled, fired or armed again). */
export const saveMark = async (db: Queryable, key: ArmedKey, { hwm, stopPrice, at }: { hwm: string; stopPrice: string; at: Date }): Promise<boolean> =>
  (await db.update(orderTriggers).set({ hwm, stopPrice, updatedAt: at }).where(and(armedKeyOf(key), working)).returning({ id: orderTriggers.clientOrderId })).length > 0;

/** Fires a working trigger as armed (its last mark and stop with it); undefined when it no longer works so (canceled or armed again meanwhile). */
export const markTriggered = async (db: Queryable, key: ArmedKey, change: { hwm: string | null; stopPrice: string; childClientOrderId: string; at: Date }): Promise<OrderTriggerRow | undefined> =>
  (
    await db
      .update(orderTriggers)
      .set({ status: 'triggered', hwm: change.hwm, stopPrice: change.stopPrice, childClientOrderId: change.childClientOrderId, updatedAt: change.at })
      .where(and(armedKeyOf(key), working))
      .returning()
  )[0];

/** Arms a working trigger again (a replace): its new quantity, prices or trail; undefined when it no longer works (it fired, or was canceled). */
export const rearmTrigger = async (
  db: Queryable,
  key: TriggerKey,
  change: Pick<OrderTriggerRow, 'qty' | 'orderType' | 'stopPrice' | 'hwm' | 'limitPrice' | 'trailPercent' | 'trailPrice' | 'armedAt'>,
): Promise<OrderTriggerRow | undefined> =>
  (
    await db
      .update(orderTriggers)
      .set({ ...change, updatedAt: change.armedAt })
      .where(and(keyOf(key), working))
      .returning()
  )[0];

/** A working exit leg grown to its entry's filled quantity: armed again (a watch takes the new quantity), its levels kept. */
export const growTrigger = async (db: Queryable, key: TriggerKey, { qty, at }: { qty: string; at: Date }): Promise<void> => {
  await db.update(orderTriggers).set({ qty, armedAt: at, updatedAt: at }).where(and(keyOf(key), working));
};

/** A working trigger as it is armed now; undefined when it no longer works. */
export const workingTrigger = async (db: Queryable, key: TriggerKey): Promise<OrderTriggerRow | undefined> => (await db.select().from(orderTriggers).where(and(keyOf(key), working)))[0];

/** A working trigger, locked for a replace that arms it again. */
export const workingTriggerForUpdate = async (db: Queryable, key: TriggerKey): Promise<OrderTriggerRow | undefined> =>
  (await db.select().from(orderTriggers).where(and(keyOf(key), working)).for('update'))[0];

export const setChildBrokerOrderId = async (db: Queryable, key: TriggerKey, childBrokerOrderId: string, at: Date): Promise<void> => {
  await db.update(orderTriggers).set({ childBrokerOrderId, updatedAt: at }).where(keyOf(key));
};

/** Cancels a working trigger; undefined when it no longer works (it fired, or was canceled). */
export const cancelTrigger = async (db: Queryable, key: TriggerKey, at: Date): Promise<OrderTriggerRow | undefined> =>
  (await db.update(orderTriggers).set({ status: 'canceled', updatedAt: at }).where(and(keyOf(key), working)).returning())[0];

/** The working triggers whose day ended by `at`, oldest end first. */
export const expiredTriggers = (db: Queryable, at: Date): Promise<OrderTriggerRow[]> =>
  db.select().from(orderTriggers).where(and(working, lte(orderTriggers.expiresAt, at))).orderBy(asc(orderTriggers.expiresAt));

/** An emulated order's trigger, whatever its state, locked (an OCO leg reads its sibling so, in the transaction that acts on it). */
export const lockTrigger = async (db: Queryable, key: TriggerKey): Promise<OrderTriggerRow | undefined> => (await db.select().from(orderTriggers).where(keyOf(key)).for('update'))[0];

/** A fired trigger whose child never went ends (its OCO sibling sold it all); undefined when it did not wait so. */
export const endFiredTrigger = async (db: Queryable, key: TriggerKey, at: Date): Promise<OrderTriggerRow | undefined> =>
  (await db.update(orderTriggers).set({ status: 'canceled', updatedAt: at }).where(and(keyOf(key), eq(orderTriggers.status, 'triggered'), isNull(orderTriggers.childBrokerOrderId))).returning())[0];

/**
 * A working trigger's quantity made smaller (an OCO leg's sibling filled in part): armed anew, so
 * that a watch holding the larger quantity takes the row again before it fires.
 */
export const shrinkTrigger = async (db: Queryable, key: TriggerKey, { qty, at }: { qty: string; at: Date }): Promise<void> => {
  await db.update(orderTriggers).set({ qty, armedAt: at, updatedAt: at }).where(and(keyOf(key), working));
};

/** An emulated order's trigger, whatever its state. */
export const findTrigger = async (db: Queryable, key: TriggerKey): Promise<OrderTriggerRow | undefined> => (await db.select().from(orderTriggers).where(keyOf(key)))[0];

/** The trigger whose child has this client order id (the child's broker events belong to its parent). */
export const triggerOfChild = async (db: Queryable, { userId, childClientOrderId }: { userId: number; childClientOrderId: string }): Promise<OrderTriggerRow | undefined> =>
  (await db.select().from(orderTriggers).where(and(eq(orderTriggers.userId, userId), eq(orderTriggers.childClientOrderId, childClientOrderId))))[0];

/** The trigger whose child the broker knows by this order id (a child's events, read after a restart). */
export const triggerOfChildBrokerId = async (db: Queryable, { userId, childBrokerOrderId }: { userId: number; childBrokerOrderId: string }): Promise<OrderTriggerRow | undefined> =>
  (await db.select().from(orderTriggers).where(and(eq(orderTriggers.userId, userId), eq(orderTriggers.childBrokerOrderId, childBrokerOrderId))).limit(1))[0];

/**
 * Triggers that fired and sent a child whose outcome is unknown (the broker's answer never came:
 * no child broker id), fired before `before`; of one account, or of all.
 */
export const triggersAwaitingChild = async (db: Queryable, { account, before }: { account?: EmulatedAccount | undefined; before: Date }): Promise<OrderTriggerRow[]> => {
  const rows = await db
    .select({ trigger: orderTriggers })
    .from(orderTriggers)
    // An order that ended (its child refused, say) waits for nothing.
    .innerJoin(orders, and(eq(orders.userId, orderTriggers.userId), eq(orders.clientOrderId, orderTriggers.clientOrderId), notInArray(orders.status, ['filled', 'canceled', 'rejected', 'expired'])))
    .where(
      and(
        eq(orderTriggers.status, 'triggered'),
        isNotNull(orderTriggers.childClientOrderId),
        isNull(orderTriggers.childBrokerOrderId),
        lt(orderTriggers.updatedAt, before),
        ...(account ? [eq(orderTriggers.userId, account.userId), eq(orderTriggers.assetClass, account.assetClass), eq(orderTriggers.live, account.mode === 'live')] : []),
      ),
    );
  return rows.map(({ trigger }) => trigger);
};

/** A fired trigger whose child never reached the broker works again; undefined when it no longer waits on its child. */
export const rearmAfterLostChild = async (db: Queryable, key: TriggerKey, at: Date): Promise<OrderTriggerRow | undefined> =>
  (
    await db
      .update(orderTriggers)
      .set({ status: 'working', childClientOrderId: null, armedAt: at, updatedAt: at })
      .where(and(keyOf(key), eq(orderTriggers.status, 'triggered'), isNull(orderTriggers.childBrokerOrderId)))
      .returning()
  )[0];

/**
 * The orders of an account's working triggers of a symbol (what the emulator holds, untriggered),
 * each with the broker id of the order it is a leg of (an OCO's, or a bracket's entry), if any.
 */
export const workingEmulatedOrders = (
  db: Queryable,
  { userId, assetClass, live, symbol }: { userId: number; assetClass: TAssetClass; live: boolean; symbol: string },
): Promise<{ order: OrderRow; parentBrokerOrderId: string | null }[]> =>
  db
    .select({
      order: orders,
      parentBrokerOrderId: sql<string | null>`(select parent.broker_order_id from orders parent where parent.user_id = ${orders.userId} and parent.client_order_id = ${orders.metadata}->>'parent_client_order_id')`,
    })
    .from(orderTriggers)
    .innerJoin(orders, and(eq(orders.userId, orderTriggers.userId), eq(orders.clientOrderId, orderTriggers.clientOrderId)))
    .where(and(eq(orderTriggers.userId, userId), eq(orderTriggers.assetClass, assetClass), eq(orderTriggers.live, live), eq(orderTriggers.symbol, symbol), working));
