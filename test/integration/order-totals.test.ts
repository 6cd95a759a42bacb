// The totals of the order list (GET /api/equity/orders) and of the operators' audit list (GET
// /api/admin/audit without user_id) come from counts the database keeps (migration 0015): they
// must equal count(*) over the rows the list shows, for every filter, whichever writer wrote the
// rows (placement, fills, cancel, replace, a bracket's children, a rejection, a close, the
// reconciler, writers we do not have yet), with changes waiting to be folded and after a fold.
// The fold runs only when a test calls it (no workers here), so each state is the one named.
import { and, count, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { STATUSES_OF_FILTER, type TOrderStatus } from '../../contracts/orders.ts';
import { recordAudit } from '../../server/audit/log.ts';
import { auditTally } from '../../server/audit/queries.ts';
import { manualClock } from '../../server/clock.ts';
import type { Queryable } from '../../server/db/client.ts';
import { auditCountChanges, auditEvents, orderCountChanges, orderCounts, orders } from '../../server/db/schema/index.ts';
import { FOLD_LOCK_KEY, foldTallies, tallyTotal } from '../../server/db/tallies.ts';
import { countListedOrders, orderTally } from '../../server/orders/queries.ts';
import { insertOrderIntent, type OrderInsert } from '../../server/orders/write-queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Tuesday 2026-03-10, 11:00 in New York: NYSE open.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer(
    { SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', RATE_LIMIT_ORDERS_PER_MIN: '1000', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1', LIVE_DAILY_TRADE_LIMIT: '100' },
    undefined,
    { clock },
  );
  admin = await newUser(server, { role: 'admin', prefix: 'tot_admin' });
  await setPrice('crypto', 'BTC/USDT', 50000);
  await setPrice('us_equity', 'AAPL', 200);
});
afterAll(() => server.stop());

const setPrice = async (assetClass: TAssetClass, symbol: string, price: number) => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: assetClass, symbol, price } });
  expect(res.status, res.text).toBe(200);
  await settle();
};
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};

/** A user with paper keys for crypto and US equities, and live crypto enabled. */
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  for (const body of [{ exchange: 'crypto_exchange' }, { asset_class: 'us_equity', exchange: 'us_broker' }]) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { ...body, api_key: `totals-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
  return user;
};
const place = async (user: FactoryUser, body: Record<string, unknown>, status = 201) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
  expect(res.status, res.text).toBe(status);
  clock.advance(1000);
  return res.body;
};
const btc = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market' };
const restingBtc = (limit: number) => ({ ...btc, order_type: 'limit', limit_price: limit, time_in_force: 'gtc' });

interface ListFilter {
  userId: number;
  assetClass: TAssetClass;
  statuses?: readonly TOrderStatus[];
  live?: boolean;
}

/** The total as the list counted it before the counts were kept: count(*) over the rows it shows. */
const countedOverRows = async (db: Queryable, { userId, assetClass, statuses, live }: ListFilter): Promise<number> => {
  const [row] = await db
    .select({ n: count() })
    .from(orders)
    .where(
      and(
        eq(orders.userId, userId),
        eq(orders.assetClass, assetClass),
        statuses === undefined ? undefined : inArray(orders.status, [...statuses]),
        live === undefined ? undefined : eq(orders.live, live),
        isNotNull(orders.brokerOrderId),
        sql`exists (select 1 from ${auditEvents} where ${auditEvents.subjectUserId} = ${userId} and ${auditEvents.data}->>'client_order_id' = ${orders.clientOrderId} and ${auditEvents.action} = 'order.placed')`,
      ),
    );
  return row!.n;
};

const FILTERS = [undefined, ...(Object.keys(STATUSES_OF_FILTER) as (keyof typeof STATUSES_OF_FILTER)[])];
const MODES = [undefined, 'paper', 'live'] as const;

/**
 * Every filter's total three ways: the kept count, the list over HTTP (pages of one, so that a
 * list with any order reads its total from the kept count) and count(*) over the rows. Returns
 * the totals that are not zero, by filter.
 */
const expectTotals = async (user: FactoryUser): Promise<Record<string, number>> => {
  const { db } = server.services;
  const totals: Record<string, number> = {};
  for (const assetClass of ['crypto', 'us_equity'] as const) {
    for (const filter of FILTERS) {
      for (const mode of MODES) {
        const filters: ListFilter = { userId: user.user.id, assetClass, statuses: filter === undefined ? undefined : STATUSES_OF_FILTER[filter], live: mode === undefined ? undefined : mode === 'live' };
        const query = new URLSearchParams({ asset_class: assetClass, size: '1', ...(filter ? { status: filter } : {}), ...(mode ? { mode } : {}) });
        const listed = await server.http('GET', `/api/equity/orders?${query.toString()}`, { token: user.tokens.access_token });
        expect(listed.status, listed.text).toBe(200);
        const label = `${assetClass} ${filter ?? 'any'} ${mode ?? 'any'}`;
        const expected = await countedOverRows(db, filters);
        expect({ label, kept: await countListedOrders(db, filters), listed: listed.body.total }).toEqual({ label, kept: expected, listed: expected });
        if (expected > 0) totals[label] = expected;
      }
    }
  }
  return totals;
};

const pendingChanges = async (userId: number) => (await server.services.db.select({ n: count() }).from(orderCountChanges).where(eq(orderCountChanges.userId, userId)))[0]!.n;
const fold = (options?: { batch?: number }) => foldTallies(server.services.db, [orderTally, auditTally], options);

/** The summary as it stands, without the keys whose orders have all moved on. */
const summaryOf = async () =>
  (await server.services.db.select().from(orderCounts).orderBy(orderCounts.userId, orderCounts.assetClass, orderCounts.live, orderCounts.status)).filter((row) => row.n !== 0);

/** An order row as a writer of our own (or a forger) would insert it. */
const orderRow = (userId: number, clientOrderId: string, fields: Partial<OrderInsert> = {}): OrderInsert => ({
  userId,
  clientOrderId,
  brokerOrderId: `broker-${clientOrderId}`,
  assetClass: 'crypto',
  live: false,
  broker: 'simulator',
  symbol: 'BTC/USDT',
  side: 'buy',
  orderType: 'market',
  timeInForce: 'gtc',
  qty: '0.01',
  filledQty: '0.01',
  status: 'filled',
  submittedAt: clock.now(),
  updatedAt: clock.now(),
  ...fields,
});
const placement = (userId: number, clientOrderId: string) => ({ action: 'order.placed', actorUserId: userId, subjectUserId: userId, data: { client_order_id: clientOrderId }, at: clock.now() });

describe('the order list’s total', () => {
  let user: FactoryUser;
  beforeAll(async () => {
    user = await trader('tot_flows');
  });

  it('equals count(*) for every filter and mode, over orders placed, filled, canceled, replaced, rejected, closed and a bracket’s children, with changes pending and after a fold', async () => {
    const { db } = server.services;
    await place(user, btc);
    await place(user, restingBtc(40000));
    const canceled = await place(user, restingBtc(41000));
    const replaced = await place(user, restingBtc(39000));
    await place(user, { ...btc, bracket: { take_profit: 60000, stop_loss: 45000 } });
    await place(user, { ...btc, symbol: 'NOPE/USDT' }, 422);
    await place(user, { ...btc, qty: 0.001, live_mode: true });
    await place(user, { ...restingBtc(38000), qty: 0.001, live_mode: true });
    await place(user, { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 2, order_type: 'market' });
    await place(user, { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'limit', limit_price: 100, time_in_force: 'gtc' });
    await settle();
    expect((await server.http('DELETE', `/api/equity/orders/${canceled.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token })).status).toBe(204);
    const patch = (body: Record<string, unknown>) => server.http('PATCH', `/api/equity/orders/${replaced.broker_order_id}`, { token: user.tokens.access_token, body: { asset_class: 'crypto', ...body } });
    expect((await patch({ qty: 0.02, limit_price: 39500 })).status).toBe(200);
    const closed = await server.http('DELETE', '/api/equity/positions/AAPL?asset_class=us_equity', { token: user.tokens.access_token });
    expect(closed.status, closed.text).toBe(200);
    await settle();

    const totals = await expectTotals(user);
    // The flows made what they should: a bracket's two children working, a rejection, a cancel, live orders.
    expect(totals).toMatchObject({ 'crypto open any': 5, 'crypto canceled any': 1, 'crypto rejected any': 1, 'crypto filled live': 1, 'crypto open live': 1, 'us_equity filled any': 2 });
    expect(await pendingChanges(user.user.id)).toBeGreaterThan(0);

    expect(await fold()).toBeGreaterThan(0);
    expect(await pendingChanges(user.user.id)).toBe(0);
    expect(await expectTotals(user)).toEqual(totals);

    // More changes on top of the summary: a replace that fills, the bracket's take-profit (its
    // stop-loss canceled with it), a cancel of a live order.
    expect((await patch({ limit_price: 60000 })).status).toBe(200);
    await setPrice('crypto', 'BTC/USDT', 61000);
    const live = await server.http('GET', '/api/equity/orders?asset_class=crypto&status=open&mode=live', { token: user.tokens.access_token });
    expect((await server.http('DELETE', `/api/equity/orders/${live.body.items[0].broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token })).status).toBe(204);
    await settle();
    expect(await pendingChanges(user.user.id)).toBeGreaterThan(0);
    const after = await expectTotals(user);
    expect(after).toMatchObject({ 'crypto open any': 1, 'crypto canceled any': 3, 'crypto canceled live': 1 });
    await fold();
    expect(await expectTotals(user)).toEqual(after);
    await db.execute(sql`select kept_counts_rebuild()`);
    expect(await expectTotals(user)).toEqual(after);
  });

  it('counts a reconciled order, and not a forged row without its placement record, nor one placed by another user', async () => {
    const { db, orders: service, brokers } = server.services;
    const other = await trader('tot_other');
    // A crash after the broker call: the intent and its placement record, the broker's order, no answer.
    await insertOrderIntent(db, orderRow(user.user.id, 'tot-crashed', { brokerOrderId: null, status: 'pending', filledQty: '0', qty: '0.002' }));
    await recordAudit(db, placement(user.user.id, 'tot-crashed'));
    const broker = await brokers.forUser({ userId: user.user.id, assetClass: 'crypto', mode: 'paper' });
    await broker.placeOrder({ clientOrderId: 'tot-crashed', symbol: 'BTC/USDT', side: 'buy', qty: '0.002', orderType: 'market', timeInForce: 'gtc' });
    await settle();
    await db.update(orders).set({ status: 'pending', filledQty: '0', avgFillPrice: null, brokerOrderId: null }).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, 'tot-crashed')));
    const before = await expectTotals(user);
    expect(await service.reconcile()).toMatchObject({ linked: 1 });
    const reconciled = await expectTotals(user);
    expect(reconciled['crypto filled paper']).toBe(before['crypto filled paper']! + 1);

    await insertOrderIntent(db, orderRow(user.user.id, 'tot-forged'));
    await insertOrderIntent(db, orderRow(user.user.id, 'tot-foreign'));
    await recordAudit(db, placement(other.user.id, 'tot-foreign'));
    expect(await expectTotals(user)).toEqual(reconciled);
    await fold();
    expect(await expectTotals(user)).toEqual(reconciled);
  });

  it('counts an order once however its row and its placement record are written: in one statement either way round, twice recorded, removed', async () => {
    const { db } = server.services;
    const writer = await trader('tot_writers');
    const row = (id: string) => orderRow(writer.user.id, id);
    const values = (id: string) =>
      sql`(${writer.user.id}::integer, ${id}::text, ${`broker-${id}`}::text, 'crypto', false, 'simulator', 'BTC/USDT', 'buy', 'market', 'gtc', 0.01, 'filled', now(), now())`;
    const insertOrder = (id: string) =>
      sql`insert into ${orders} (user_id, client_order_id, broker_order_id, asset_class, live, broker, symbol, side, order_type, time_in_force, qty, status, submitted_at, updated_at) values ${values(id)} returning 1`;
    const insertPlacement = (id: string) =>
      sql`insert into ${auditEvents} (action, actor_user_id, subject_user_id, data, created_at) values ('order.placed', ${writer.user.id}::integer, ${writer.user.id}::integer, jsonb_build_object('client_order_id', ${id}::text), now()) returning 1`;
    // Both in one statement: each trigger sees both rows, in either order of the statement's parts.
    await db.execute(sql`with o as (${insertOrder('w-order-first')}), a as (${insertPlacement('w-order-first')}) select (select count(*) from o), (select count(*) from a)`);
    await db.execute(sql`with a as (${insertPlacement('w-record-first')}), o as (${insertOrder('w-record-first')}) select (select count(*) from a), (select count(*) from o)`);
    // The record first, the row in a later statement; the row first, the record later (a bracket's child).
    await recordAudit(db, placement(writer.user.id, 'w-record-before'));
    await insertOrderIntent(db, row('w-record-before'));
    await db.transaction(async (tx) => {
      await insertOrderIntent(tx, row('w-row-before'));
      await recordAudit(tx, placement(writer.user.id, 'w-row-before'));
    });
    // A second placement record changes nothing.
    await recordAudit(db, placement(writer.user.id, 'w-row-before'));
    expect(await expectTotals(writer)).toEqual({ 'crypto any any': 4, 'crypto filled any': 4, 'crypto any paper': 4, 'crypto filled paper': 4 });
    await fold();
    // A row removed, and a row whose only placement record is removed, are no longer listed.
    await db.delete(orders).where(and(eq(orders.userId, writer.user.id), eq(orders.clientOrderId, 'w-order-first')));
    await db.delete(auditEvents).where(and(eq(auditEvents.subjectUserId, writer.user.id), sql`${auditEvents.data}->>'client_order_id' = 'w-record-first'`));
    expect(await expectTotals(writer)).toEqual({ 'crypto any any': 2, 'crypto filled any': 2, 'crypto any paper': 2, 'crypto filled paper': 2 });
  });

  // Other sessions at once need a server's database: PGlite is one session.
  it.runIf(process.env.DATABASE_URL)('counts an order whose broker id another transaction writes while its placement is recorded, once both commit', async () => {
    const writer = await trader('tot_inflight');
    await insertOrderIntent(server.services.db, orderRow(writer.user.id, 'w-in-flight', { brokerOrderId: null, status: 'pending', filledQty: '0' }));
    const other = postgres(server.databaseUrl, { max: 3, onnotice: () => undefined });
    try {
      const [answering, recording] = [await other.reserve(), await other.reserve()];
      // The answer's transaction gives the row its broker id and stays open: its own check of the
      // log finds no placement yet.
      await answering`begin`;
      await answering`update orders set broker_order_id = 'broker-w-in-flight', status = 'filled' where user_id = ${writer.user.id} and client_order_id = 'w-in-flight'`;
      const [backend] = await recording<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await recording`begin`;
      let recorded = false;
      const record = recording`insert into audit_events (action, actor_user_id, subject_user_id, data, created_at)
        values ('order.placed', ${writer.user.id}, ${writer.user.id}, '{"client_order_id": "w-in-flight"}', now())`.then(() => (recorded = true));
      // The record's statement waits for the answer's row (or, wrongly, does not): either way on.
      for (;;) {
        const [waiting] = await other<{ n: number }[]>`select count(*)::integer as n from pg_stat_activity where pid = ${backend!.pid} and wait_event_type = 'Lock'`;
        if (recorded || waiting!.n > 0) break;
      }
      await answering`commit`;
      await record;
      await recording`commit`;
      answering.release();
      recording.release();
      expect(await expectTotals(writer)).toEqual({ 'crypto any any': 1, 'crypto filled any': 1, 'crypto any paper': 1, 'crypto filled paper': 1 });
    } finally {
      await other.end({ timeout: 5 });
    }
  });

  it('is made anew from the rows by kept_counts_rebuild (the migration’s backfill), orders written without the triggers included', async () => {
    const { db } = server.services;
    const old = await trader('tot_backfill');
    // History from before the triggers: rows and records written with the triggers off.
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      for (const id of ['old-1', 'old-2']) {
        await insertOrderIntent(tx, orderRow(old.user.id, id));
        await recordAudit(tx, placement(old.user.id, id));
      }
    });
    expect(await countListedOrders(db, { userId: old.user.id, assetClass: 'crypto' })).toBe(0);
    await db.execute(sql`select kept_counts_rebuild()`);
    expect(await expectTotals(old)).toEqual({ 'crypto any any': 2, 'crypto filled any': 2, 'crypto any paper': 2, 'crypto filled paper': 2 });
    expect(await pendingChanges(old.user.id)).toBe(0);
  });
});

describe('the fold', () => {
  it('is idempotent: a second fold moves nothing, and the summary is what a rebuild from the rows makes', async () => {
    const user = await trader('tot_idem');
    for (const limit of [30000, 31000, 32000]) await place(user, restingBtc(limit));
    await place(user, btc);
    await settle();
    const totals = await expectTotals(user);
    expect(await fold({ batch: 2 })).toBeGreaterThan(0);
    expect(await fold({ batch: 2 })).toBe(0);
    expect(await expectTotals(user)).toEqual(totals);
    const folded = await summaryOf();
    await server.services.db.execute(sql`select kept_counts_rebuild()`);
    expect(await summaryOf()).toEqual(folded);
  });

  it('two folds at once move each change once', async () => {
    const user = await trader('tot_twice');
    for (const limit of [30000, 31000, 32000, 33000, 34000]) await place(user, restingBtc(limit));
    await place(user, btc);
    await settle();
    const totals = await expectTotals(user);
    const [first, second] = await Promise.all([fold({ batch: 2 }), fold({ batch: 2 })]);
    // A fold that finds the lock taken stops; what it leaves is still counted, and folded next time.
    expect(first + second).toBeGreaterThan(0);
    expect(await expectTotals(user)).toEqual(totals);
    await fold();
    expect((await server.services.db.select({ n: count() }).from(orderCountChanges))[0]!.n).toBe(0);
    // Nothing moved twice, nothing lost: the summary is the rows' own count.
    const folded = await summaryOf();
    await server.services.db.execute(sql`select kept_counts_rebuild()`);
    expect(await summaryOf()).toEqual(folded);
  });

  // Other sessions at once need a server's database: PGlite is one session.
  it.runIf(process.env.DATABASE_URL)('moves nothing while another instance holds its lock, and leaves a writer’s uncommitted changes for the next fold', async () => {
    const user = await trader('tot_sessions');
    await place(user, btc);
    await settle();
    const other = postgres(server.databaseUrl, { max: 2, onnotice: () => undefined });
    try {
      const held = await other.reserve();
      await held`select pg_advisory_lock(${FOLD_LOCK_KEY})`;
      expect(await fold()).toBe(0);
      expect(await pendingChanges(user.user.id)).toBeGreaterThan(0);
      await held`select pg_advisory_unlock(${FOLD_LOCK_KEY})`;
      held.release();
      expect(await fold()).toBeGreaterThan(0);

      // A writer's transaction open while the fold runs: its changes are not the fold's to see.
      const writer = await other.reserve();
      await writer`begin`;
      await writer`insert into orders (user_id, client_order_id, broker_order_id, asset_class, live, broker, symbol, side, order_type, time_in_force, qty, status, submitted_at, updated_at)
        values (${user.user.id}, 'open-tx', 'broker-open-tx', 'crypto', false, 'simulator', 'BTC/USDT', 'buy', 'market', 'gtc', 0.01, 'filled', now(), now())`;
      await writer`insert into audit_events (action, actor_user_id, subject_user_id, data, created_at) values ('order.placed', ${user.user.id}, ${user.user.id}, '{"client_order_id": "open-tx"}', now())`;
      await fold();
      await writer`commit`;
      writer.release();
      const totals = await expectTotals(user);
      expect(totals['crypto filled any']).toBe(2);
      expect(await pendingChanges(user.user.id)).toBe(1);
      await fold();
      expect(await expectTotals(user)).toEqual(totals);
    } finally {
      await other.end({ timeout: 5 });
    }
  });
});

describe('the operators’ audit total (GET /api/admin/audit without user_id)', () => {
  /** count(*) over the whole log, and over one action prefix. */
  const countedOverLog = async (prefix?: string) =>
    (await server.services.db.select({ n: count() }).from(auditEvents).where(prefix ? sql`${auditEvents.action} like ${`${prefix}%`}` : undefined))[0]!.n;

  const expectAuditTotals = async () => {
    for (const prefix of [undefined, 'order.', 'order.placed', 'keys.', 'nothing.']) {
      const expected = await countedOverLog(prefix);
      const listed = await server.http('GET', `/api/admin/audit?size=1${prefix ? `&action=${prefix}` : ''}`, { token: admin.tokens.access_token });
      expect(listed.status, listed.text).toBe(200);
      const kept = await tallyTotal(server.services.db, auditTally, prefix ? sql`action like ${`${prefix}%`}` : sql`true`);
      expect({ prefix, kept, listed: listed.body.total }).toEqual({ prefix, kept: expected, listed: expected });
    }
  };

  it('equals count(*) over the log, for every action prefix, with changes pending and after a fold', async () => {
    const user = await trader('tot_audit');
    await place(user, btc);
    await settle();
    expect((await server.services.db.select({ n: count() }).from(auditCountChanges))[0]!.n).toBeGreaterThan(0);
    await expectAuditTotals();
    await fold();
    expect((await server.services.db.select({ n: count() }).from(auditCountChanges))[0]!.n).toBe(0);
    await expectAuditTotals();
    await server.services.db.delete(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.fill')));
    await expectAuditTotals();
  });
});
