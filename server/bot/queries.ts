// SQL of the bot: its row per user, the bars it built, the orders it placed and their fills.
// The only module that knows these tables.
import { and, asc, count, desc, eq, gt, isNull, lte, ne, sql } from 'drizzle-orm';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Queryable } from '../db/client.ts';
import { botBars, botOrders, botRuns, bots, orderFills, orders, users, type BotRow, type BotRunRow } from '../db/schema/index.ts';
import type { BuiltBar } from './bars.ts';

export type BotInsert = typeof bots.$inferInsert;

/** The user's bot, locked for the caller's transaction when asked. */
export const findBot = async (db: Queryable, { userId, forUpdate = false }: { userId: number; forUpdate?: boolean }): Promise<BotRow | undefined> => {
  const query = db.select().from(bots).where(eq(bots.userId, userId));
  return (forUpdate ? await query.for('update') : await query)[0];
};

/**
 * Writes the user's bot as started: a first start inserts its row, a later one replaces a bot
 * that is not running. Undefined when it is running: one statement, so two starts at once
 * cannot both win.
 */
export const saveStartedBot = async (db: Queryable, values: BotInsert): Promise<BotRow | undefined> => {
  const { userId: _userId, ...change } = values;
  const [row] = await db.insert(bots).values(values).onConflictDoUpdate({ target: bots.userId, set: change, setWhere: ne(bots.status, 'running') }).returning();
  return row;
};

/** Ends the bot's run (stopped or halted); undefined when it was not running. */
export const endBotRun = async (
  db: Queryable,
  { userId, status, stoppedBy, haltReason, at, assetClass }: { userId: number; status: 'stopped' | 'halted'; stoppedBy: 'user' | 'admin' | 'lock'; haltReason: string | null; at: Date; assetClass?: TAssetClass },
): Promise<BotRow | undefined> =>
  (
    await db
      .update(bots)
      .set({ status, stoppedBy, haltReason, stoppedAt: at, updatedAt: at })
      .where(and(eq(bots.userId, userId), eq(bots.status, 'running'), assetClass ? eq(bots.assetClass, assetClass) : undefined))
      .returning()
  )[0];

/** The run a start began, kept beside the bot's row (which the next start replaces). */
export const insertBotRun = async (db: Queryable, row: BotRow): Promise<void> => {
  const { userId, runId, assetClass, symbols, strategyName, strategyParams, liveMode, timeframe, startedAt } = row;
  await db.insert(botRuns).values({ userId, runId, assetClass, symbols, strategyName, strategyParams, liveMode, timeframe, startedAt }).onConflictDoNothing();
};

/** How the run ended, as the bot's row says it. */
export const recordRunEnded = async (db: Queryable, row: BotRow): Promise<void> => {
  await db
    .update(botRuns)
    .set({ stoppedAt: row.stoppedAt, stoppedBy: row.stoppedBy, haltReason: row.haltReason })
    .where(and(eq(botRuns.userId, row.userId), eq(botRuns.runId, row.runId)));
};

/** A user's runs, newest first, and how many there are. */
export const listBotRuns = async (db: Queryable, { userId, limit, offset }: { userId: number; limit: number; offset: number }): Promise<{ rows: BotRunRow[]; total: number }> => {
  const [rows, [counted]] = await Promise.all([
    db.select().from(botRuns).where(eq(botRuns.userId, userId)).orderBy(desc(botRuns.startedAt), desc(botRuns.runId)).limit(limit).offset(offset),
    db.select({ n: count() }).from(botRuns).where(eq(botRuns.userId, userId)),
  ]);
  return { rows, total: counted?.n ?? 0 };
};

/** One of the user's runs; undefined when it has none of that id (another user's included). */
export const findBotRun = async (db: Queryable, { userId, runId }: { userId: number; runId: string }): Promise<BotRunRow | undefined> =>
  (await db.select().from(botRuns).where(and(eq(botRuns.userId, userId), eq(botRuns.runId, runId))))[0];

/** The closed bars of a run's symbol up to `until`, oldest first: the replay's input (warm-up included). */
export const readBarsUntil = async (
  db: Queryable,
  key: { userId: number; assetClass: TAssetClass; symbol: string; timeframe: '1m' | '1d'; until: Date; limit: number },
): Promise<BuiltBar[]> => {
  const rows = await db
    .select({ start: botBars.start, open: botBars.open, high: botBars.high, low: botBars.low, close: botBars.close })
    .from(botBars)
    .where(and(eq(botBars.userId, key.userId), eq(botBars.assetClass, key.assetClass), eq(botBars.symbol, key.symbol), eq(botBars.timeframe, key.timeframe), lte(botBars.start, key.until)))
    .orderBy(desc(botBars.start))
    .limit(key.limit);
  return rows.reverse();
};

/** A run's orders of one symbol with their fills (none yet, or refused: no fill), oldest first. */
export const listRunFills = (db: Queryable, { userId, runId, symbol }: { userId: number; runId: string; symbol: string }) =>
  db
    .select({
      clientOrderId: botOrders.clientOrderId,
      side: botOrders.side,
      barStart: botOrders.barStart,
      qty: orderFills.qty,
      price: orderFills.price,
      fee: orderFills.fee,
      at: orderFills.at,
    })
    .from(botOrders)
    .leftJoin(orderFills, and(eq(orderFills.userId, botOrders.userId), eq(orderFills.clientOrderId, botOrders.clientOrderId)))
    .where(and(eq(botOrders.userId, userId), eq(botOrders.runId, runId), eq(botOrders.symbol, symbol)))
    .orderBy(asc(botOrders.barStart), asc(orderFills.at));

export const listRunningBots = (db: Queryable): Promise<BotRow[]> => db.select().from(bots).where(eq(bots.status, 'running')).orderBy(asc(bots.userId));

/** Running bots with their users' names, longest-running first (the operator overview). */
export const listRunningBotsWithUsers = (db: Queryable) =>
  db
    .select({ userId: bots.userId, username: users.username, assetClass: bots.assetClass, strategyName: bots.strategyName, liveMode: bots.liveMode, startedAt: bots.startedAt })
    .from(bots)
    .innerJoin(users, eq(users.id, bots.userId))
    .where(eq(bots.status, 'running'))
    .orderBy(asc(bots.startedAt), asc(bots.userId));

/** The newest closed bars of one of the user's symbols, oldest first. */
export const readBotBars = async (db: Queryable, key: { userId: number; assetClass: TAssetClass; symbol: string; timeframe: '1m' | '1d'; limit: number }): Promise<BuiltBar[]> => {
  const rows = await db
    .select({ start: botBars.start, open: botBars.open, high: botBars.high, low: botBars.low, close: botBars.close })
    .from(botBars)
    .where(and(eq(botBars.userId, key.userId), eq(botBars.assetClass, key.assetClass), eq(botBars.symbol, key.symbol), eq(botBars.timeframe, key.timeframe)))
    .orderBy(desc(botBars.start))
    .limit(key.limit);
  return rows.reverse();
};

/** Stores a closed bar (a second instance closing the same bar keeps the first's). */
export const insertBotBar = async (db: Queryable, key: { userId: number; assetClass: TAssetClass; symbol: string; timeframe: '1m' | '1d' }, bar: BuiltBar): Promise<void> => {
  await db
    .insert(botBars)
    .values({ ...key, start: bar.start, open: bar.open, high: bar.high, low: bar.low, close: bar.close })
    .onConflictDoNothing();
};

/** Records an order the bot is about to place; false when this bar's order was recorded before. */
export const insertBotOrder = async (db: Queryable, values: typeof botOrders.$inferInsert): Promise<boolean> =>
  (await db.insert(botOrders).values(values).onConflictDoNothing().returning({ id: botOrders.clientOrderId })).length > 0;

/** The fills of the bot's orders, newest first, with their total. */
export const listBotFills = async (db: Queryable, { userId, assetClass, limit, offset }: { userId: number; assetClass?: TAssetClass | undefined; limit: number; offset: number }) => {
  const where = and(eq(botOrders.userId, userId), assetClass ? eq(botOrders.assetClass, assetClass) : undefined);
  const joined = and(eq(orderFills.userId, botOrders.userId), eq(orderFills.clientOrderId, botOrders.clientOrderId));
  const [rows, totals] = await Promise.all([
    db
      .select({ clientOrderId: orderFills.clientOrderId, qty: orderFills.qty, price: orderFills.price, fee: orderFills.fee, at: orderFills.at, id: orderFills.id, symbol: orders.symbol, assetClass: orders.assetClass, side: orders.side })
      .from(botOrders)
      .innerJoin(orderFills, joined)
      .innerJoin(orders, and(eq(orders.userId, botOrders.userId), eq(orders.clientOrderId, botOrders.clientOrderId)))
      .where(where)
      .orderBy(desc(orderFills.at), desc(orderFills.id))
      .limit(limit)
      .offset(offset),
    db.select({ n: count() }).from(botOrders).innerJoin(orderFills, joined).where(where),
  ]);
  return { rows, total: totals[0]?.n ?? 0 };
};

/** The run's recorded orders that have no order row yet: never placed, or refused before the broker. */
export const listUnplacedBotOrders = (db: Queryable, { userId, runId }: { userId: number; runId: string }) =>
  db
    .select({ clientOrderId: botOrders.clientOrderId, symbol: botOrders.symbol, side: botOrders.side, qty: botOrders.qty, barStart: botOrders.barStart })
    .from(botOrders)
    .leftJoin(orders, and(eq(orders.userId, botOrders.userId), eq(orders.clientOrderId, botOrders.clientOrderId)))
    .where(and(eq(botOrders.userId, userId), eq(botOrders.runId, runId), isNull(orders.clientOrderId)));

/**
 * The bot's own book in one symbol of one account: what its orders bought less what they sold
 * (filled quantities), counting only orders placed after the account's last reset, which removed
 * what the earlier ones bought. Exact decimal text; what the user bought by hand is not in it.
 */
export const botBookQty = async (
  db: Queryable,
  { userId, assetClass, symbol, live, since }: { userId: number; assetClass: TAssetClass; symbol: string; live: boolean; since: Date | null | undefined },
): Promise<string> => {
  const [row] = await db
    .select({ qty: sql<string>`coalesce(sum(case when ${orders.side} = 'buy' then ${orders.filledQty} else -${orders.filledQty} end), 0)::text` })
    .from(botOrders)
    .innerJoin(orders, and(eq(orders.userId, botOrders.userId), eq(orders.clientOrderId, botOrders.clientOrderId)))
    .where(and(eq(botOrders.userId, userId), eq(botOrders.assetClass, assetClass), eq(botOrders.symbol, symbol), eq(orders.live, live), since ? gt(orders.submittedAt, since) : undefined));
  return row?.qty ?? '0';
};
