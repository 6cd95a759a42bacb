// The hot reads' plans on a database with a history: 33,000 orders, their audit records, the
// simulator's books, the outbox, reports and backtests, over 31 users, one three times busier. Each
// read is run through its query module on a drizzle instance that records the statements it
// sends; each statement is then explained twice, as the first runs of a prepared statement are
// planned (with its values) and as a prepared statement may be planned after them (generic, no
// values: postgres.js prepares every statement, and Postgres may keep a generic plan). No plan
// may scan a table of history sequentially, nor read more of it than the read needs: a page no
// more than a page's worth (and its offset), a total no more than the rows it counts. Rows read,
// not time, are what is asserted: EXPLAIN ANALYZE counts them exactly.
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../server/db/client.ts';
import * as schema from '../../server/db/schema/index.ts';
import { globalSpentOn, listReports, userSpentOn } from '../../server/analysis/queries.ts';
import { listResults } from '../../server/backtest/queries.ts';
import { listSignals } from '../../server/signals/queries.ts';
import { readUserEvents } from '../../server/events/queries.ts';
import { findAuditedOrder, listAuditedOrders, listUnfinishedOrders, listWorkingSymbols, orderTally } from '../../server/orders/queries.ts';
import { auditTally, listAuditRecords } from '../../server/audit/queries.ts';
import { foldTallies } from '../../server/db/tallies.ts';
import { readAccountSnapshot } from '../../server/brokers/simulator/account-reads.ts';
import { listActiveOrders, listWorkingSells } from '../../server/brokers/simulator/queries.ts';
import { STATUSES_OF_FILTER } from '../../contracts/orders.ts';
import { createTestDatabase, dataDirFromTemplate } from '../support/server.ts';

/** Tables that grow with every order: none may be read by a sequential scan. */
const HISTORY = new Set(['orders', 'audit_events', 'order_fills', 'sim_orders', 'sim_fills', 'outbox_events', 'analysis_reports', 'analysis_spend', 'backtest_results', 'signals']);
const BUSY = 1;
const BUSY_ORDERS = 3000;
const OTHER_USERS = 30;
const OTHER_ORDERS = 1000;
/** Days of analysis spend; a user spends on a day when (user + days back) % 3 is 0. */
const SPEND_DAYS = 200;

interface Statement {
  text: string;
  params: unknown[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The database as the test reads it: a recording drizzle instance, and raw statements on the same connection. */
interface Probe {
  db: Db;
  recorded: Statement[];
  query: (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  /** Several statements, no parameters (the simple protocol). */
  script: (text: string) => Promise<void>;
  close: () => Promise<void>;
}

const logger = (recorded: Statement[]) => ({ logQuery: (text: string, params: unknown[]) => void recorded.push({ text, params }) });

const openProbe = async (): Promise<Probe> => {
  const recorded: Statement[] = [];
  const created = await createTestDatabase();
  if (created.url) {
    // One connection, so a PREPARE and the session settings meet the EXPLAIN that reads them.
    const client = postgres(created.url, { max: 1, onnotice: () => undefined });
    return {
      db: drizzlePostgres({ client, schema, logger: logger(recorded) }) as unknown as Db,
      recorded,
      query: async (text, params = []) => [...(await client.unsafe(text, params as never[]))] as Record<string, unknown>[],
      script: async (text) => void (await client.unsafe(text).simple()),
      close: async () => {
        await client.end({ timeout: 5 });
        await created.drop();
      },
    };
  }
  const client = await PGlite.create(path.join(dataDirFromTemplate(), 'pgdata'));
  return {
    db: drizzlePglite({ client, schema, logger: logger(recorded) }) as unknown as Db,
    recorded,
    query: async (text, params = []) => (await client.query<Record<string, unknown>>(text, params)).rows,
    script: async (text) => void (await client.exec(text)),
    close: () => client.close(),
  };
};

/** A value written as SQL text, for EXECUTE's arguments (Postgres casts each to its parameter's type). */
const literal = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.replace(/'/g, "''")}'`;
};

const planOf = (rows: Record<string, unknown>[]): PlanNode => {
  const cell = rows[0]?.['QUERY PLAN'];
  const parsed = (typeof cell === 'string' ? JSON.parse(cell) : cell) as { Plan: PlanNode }[];
  return parsed[0]!.Plan;
};

const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/** The scans of history tables that read them whole. */
const seqScansOf = (plan: PlanNode) => nodesOf(plan).flatMap((node) => (node['Node Type'] === 'Seq Scan' && HISTORY.has(node['Relation Name'] ?? '') ? [`Seq Scan on ${node['Relation Name']}`] : []));

/** Rows the scans of history tables (or of `tables`) looked at (returned or filtered out), over all their loops. */
const rowsReadOf = (plan: PlanNode, tables = HISTORY) =>
  nodesOf(plan)
    .filter((node) => tables.has(node['Relation Name'] ?? ''))
    .reduce((sum, node) => sum + ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1), 0);

/** A plan as one line per node, for a failure's message. */
const describePlan = (plan: PlanNode, depth = 0): string =>
  [`${'  '.repeat(depth)}${plan['Node Type']}${plan['Relation Name'] ? ` on ${plan['Relation Name']}` : ''}${plan['Index Name'] ? ` using ${plan['Index Name']}` : ''}`, ...(plan.Plans ?? []).map((child) => describePlan(child, depth + 1))].join('\n');

let probe: Probe;
let prepared = 0;

interface Explained {
  text: string;
  plans: { kind: 'with values' | 'generic'; plan: PlanNode }[];
}

/**
 * The read's result, and the statements it sent, each run again under EXPLAIN ANALYZE twice: as a
 * first run plans it (its values known) and as a prepared statement's generic plan runs it.
 */
const explain = async <T>(read: (db: Db) => Promise<T>): Promise<{ result: T; statements: Explained[] }> => {
  probe.recorded.length = 0;
  const result = await read(probe.db);
  const statements: Explained[] = [];
  for (const { text, params } of probe.recorded.splice(0)) {
    const valued = planOf(await probe.query(`explain (analyze, format json) ${text}`, params));
    const name = `plan_probe_${++prepared}`;
    await probe.script(`prepare ${name} as ${text}; set plan_cache_mode = force_generic_plan`);
    const generic = planOf(await probe.query(`explain (analyze, format json) execute ${name}${params.length > 0 ? `(${params.map(literal).join(', ')})` : ''}`));
    await probe.script(`reset plan_cache_mode; deallocate ${name}`);
    statements.push({ text, plans: [{ kind: 'with values', plan: valued }, { kind: 'generic', plan: generic }] });
  }
  return { result, statements };
};

/**
 * Fails when a plan of the read scans a history table sequentially, or reads more of history
 * than `maxRows` says its statement may (by its text and the read's result).
 */
const expectBounded = async <T>(read: (db: Db) => Promise<T>, maxRows: (text: string, result: T) => number, { generic = true } = {}): Promise<T> => {
  const { result, statements } = await explain(read);
  expect(statements.length).toBeGreaterThan(0);
  for (const { text, plans } of statements) {
    for (const { kind, plan } of plans) {
      if (kind === 'generic' && !generic) continue;
      const shown = `(${kind} plan) for\n${text}\n${describePlan(plan)}`;
      if (process.env.PLANS_VERBOSE) console.log(`${rowsReadOf(plan)} rows read ${shown}\n`);
      expect(seqScansOf(plan), `a sequential scan of history ${shown}`).toEqual([]);
      expect(rowsReadOf(plan), `rows of history read ${shown}`).toBeLessThanOrEqual(maxRows(text, result));
    }
  }
  return result;
};

/** The kept counts' tables (migration 0015): what a total reads instead of history. */
const KEPT = new Set(['order_counts', 'order_count_changes', 'audit_counts', 'audit_count_changes']);
const isKeptTotal = (text: string) => /^select coalesce\(sum\(n\), 0\)/.test(text);

/**
 * Fails unless the read sends one statement of a kept total, and each of its plans reads no
 * table of history at all (no scan, no probe: its cost cannot grow with history) and at most
 * `maxRows` rows of the kept counts.
 */
const expectKeptTotal = async <T>(read: (db: Db) => Promise<T>, maxRows: number): Promise<T> => {
  const { result, statements } = await explain(read);
  const totals = statements.filter(({ text }) => isKeptTotal(text));
  expect(totals, statements.map(({ text }) => text).join('\n')).toHaveLength(1);
  for (const { kind, plan } of totals[0]!.plans) {
    const shown = `(${kind} plan) for\n${totals[0]!.text}\n${describePlan(plan)}`;
    if (process.env.PLANS_VERBOSE) console.log(`${rowsReadOf(plan, KEPT)} rows read ${shown}\n`);
    expect(nodesOf(plan).flatMap((node) => (HISTORY.has(node['Relation Name'] ?? '') ? [node['Relation Name']] : [])), `history read ${shown}`).toEqual([]);
    expect(rowsReadOf(plan, KEPT), `rows of the kept counts read ${shown}`).toBeLessThanOrEqual(maxRows);
  }
  return result;
};

/**
 * The history, written by SQL (fast on both databases): per order, the row of the order service,
 * its three audit records (placed, accepted, fill), the simulator's row and two outbox events.
 * One order in a hundred is still working, one canceled, one rejected; one in 250 an intent
 * (pending, no broker id). The busy user has BUSY_ORDERS, each other user OTHER_ORDERS.
 */
const seed = async () => {
  await probe.script(`
    create temporary table seed_orders as
      select u as user_id, i, 'plan-' || u || '-' || i as client_order_id,
        case when i % 250 = 3 then 'pending' when i % 100 = 0 then 'accepted' when i % 100 = 1 then 'canceled' when i % 100 = 2 then 'rejected' else 'filled' end as status,
        timestamptz '2026-01-01T00:00:00Z' + make_interval(secs => i * 10 + u) as at
      from generate_series(1, ${OTHER_USERS + 1}) as u, generate_series(1, ${BUSY_ORDERS}) as i
      where u = ${BUSY} or i <= ${OTHER_ORDERS};
    -- The records first: an order row written after its placement record is listed as it is
    -- written (migration 0015), where one written before would be updated again by the record's trigger.
    insert into audit_events (action, actor_user_id, subject_user_id, request_id, address, data, created_at)
      select action, user_id, user_id, 'req-' || client_order_id, '127.0.0.1',
        jsonb_build_object('client_order_id', client_order_id, 'broker_order_id', 'sim-' || client_order_id, 'asset_class', 'crypto', 'broker', 'simulator', 'live', false),
        at + make_interval(secs => step)
      from seed_orders, unnest(array['order.placed', 'order.accepted', 'order.fill']) with ordinality as actions(action, step)
      where status <> 'pending' or action = 'order.placed';
    insert into orders (user_id, client_order_id, broker_order_id, asset_class, live, broker, symbol, side, order_type, time_in_force, qty, filled_qty, avg_fill_price,
        limit_price, status, metadata, submitted_at, updated_at)
      select user_id, client_order_id, case when status = 'pending' then null else 'sim-' || client_order_id end, 'crypto', false, 'simulator',
        case when i % 2 = 0 then 'BTC/USDT' else 'ETH/USDT' end, case when i % 2 = 0 then 'buy' else 'sell' end,
        case when status = 'accepted' then 'limit' else 'market' end, 'gtc', 0.01, case when status = 'filled' then 0.01 else 0 end,
        case when status = 'filled' then 50000 else null end, case when status = 'accepted' then 40000 else null end, status, '{}', at, at
      from seed_orders;
    insert into audit_events (action, actor_user_id, subject_user_id, data, created_at)
      select 'keys.create', u, u, '{}', timestamptz '2026-01-01T00:00:00Z' + make_interval(secs => k)
      from generate_series(1, ${OTHER_USERS + 1}) as u, generate_series(1, 20) as k;
    insert into sim_accounts (user_id, asset_class, mode, currency, cash, initial_cash, created_at)
      select u, 'crypto', 'paper', 'USDT', 100000, 100000, timestamptz '2026-01-01T00:00:00Z' from generate_series(1, ${OTHER_USERS + 1}) as u;
    insert into sim_positions (user_id, asset_class, mode, symbol, qty, avg_entry_price, updated_at)
      select u, 'crypto', 'paper', symbol, 1, 50000, timestamptz '2026-01-01T00:00:00Z'
      from generate_series(1, ${OTHER_USERS + 1}) as u, unnest(array['BTC/USDT', 'ETH/USDT']) as symbol;
    insert into sim_orders (user_id, id, client_order_id, asset_class, mode, symbol, side, order_type, time_in_force, qty, filled_qty, avg_fill_price, limit_price, status, created_at, updated_at)
      select user_id, 'sim-' || client_order_id, client_order_id, 'crypto', 'paper', case when i % 2 = 0 then 'BTC/USDT' else 'ETH/USDT' end,
        case when i % 2 = 0 then 'buy' else 'sell' end, case when status = 'accepted' then 'limit' else 'market' end, 'gtc', 0.01,
        case when status = 'filled' then 0.01 else 0 end, case when status = 'filled' then 50000 else null end, case when status = 'accepted' then 40000 else null end,
        status, at, at
      from seed_orders where status <> 'pending';
    insert into outbox_events (user_id, channel, frame, created_at)
      select user_id, 'orders', jsonb_build_object('type', 'order_event', 'client_order_id', client_order_id), at
      from seed_orders, generate_series(1, 2);
    insert into analysis_reports (id, user_id, asset_class, symbol, mode, status, provider, model, prompt_version, cost_usd, requested_at)
      select 'report-' || user_id || '-' || i, user_id, 'us_equity', 'AAPL', 'quick', 'done', 'heuristic', 'heuristic', 'v1', 0, at
      from seed_orders where i % 10 = 0;
    insert into analysis_spend (user_id, day, spent_usd)
      select u, date '2026-01-01' - d, 0.1
      from generate_series(1, ${OTHER_USERS + 1}) as u, generate_series(0, ${SPEND_DAYS - 1}) as d
      where (u + d) % 3 = 0;
    insert into backtest_results (id, user_id, asset_class, symbol, strategy_name, strategy_params, profile_name, currency, start_date, end_date,
        total_return_pct, sharpe_ratio, max_drawdown_pct, win_rate, total_trades, result, created_at)
      select 'result-' || user_id || '-' || i, user_id, case when i % 20 = 0 then 'crypto' else 'us_equity' end, 'AAPL', 'sma_crossover', '{}', 'us', 'USD',
        date '2024-01-01', date '2025-01-01', 1, 1, 1, 0.5, 10, '{}', at
      from seed_orders where i % 10 = 0;
    -- A signal webhook per user (hooks and signals belong to users: their rows first), with a
    -- signal for every other order (the orders a hook placed).
    insert into users (id, username, email, password_hash) overriding system value
      select u, 'plan_user_' || u, 'plan_user_' || u || '@example.com', 'x' from generate_series(1, ${OTHER_USERS + 1}) as u
      on conflict do nothing;
    insert into signal_webhooks (id, user_id, name, asset_class, mode, max_lag_sec, token_hash, token_prefix, created_at)
      select ('00000000-0000-4000-8000-' || lpad(u::text, 12, '0'))::uuid, u, 'tv', 'crypto', 'paper', 120, 'hash-' || u, 'wh_plan', timestamptz '2026-01-01T00:00:00Z'
      from generate_series(1, ${OTHER_USERS + 1}) as u;
    -- The busy user's second hook takes one of its signals in ten.
    insert into signal_webhooks (id, user_id, name, asset_class, mode, max_lag_sec, token_hash, token_prefix, created_at)
      values ('00000000-0000-4000-8000-999999999999', ${BUSY}, 'second', 'crypto', 'paper', 120, 'hash-second', 'wh_plan', timestamptz '2026-01-01T00:00:00Z');
    insert into signals (id, user_id, webhook_id, asset_class, mode, received_at, status, symbol, side, order_type, qty, client_order_id, decided_at)
      select gen_random_uuid(), user_id,
        (case when user_id = ${BUSY} and i % 20 = 10 then '00000000-0000-4000-8000-999999999999' else '00000000-0000-4000-8000-' || lpad(user_id::text, 12, '0') end)::uuid, 'crypto', 'paper', at,
        case when i % 50 = 0 then 'invalid' when i % 20 = 0 then 'refused' else 'accepted' end, 'BTC/USDT', 'buy', 'market', 0.001, client_order_id, at
      from seed_orders where i % 2 = 0;
    analyze;
  `);
};

beforeAll(async () => {
  probe = await openProbe();
  await seed();
}, 120_000);
afterAll(() => probe?.close());

const busy = { userId: BUSY, assetClass: 'crypto' as const };
/** A page may read its rows and those before it (offset), each with its audit record, and a few it passes over. */
const pageRows = (page: number, size: number) => 3 * page * size + 30;
/** A total may read the rows it counts, each with its audit record, and a few it passes over. */
const countRows = (total: number) => 2 * total + 100;
const isCount = (text: string) => /^select count\(/.test(text);
/** How many of the busy user's orders the seed gives a status (its rule, as in seed()). */
const busyWith = (statuses: readonly string[]) =>
  Array.from({ length: BUSY_ORDERS }, (_, n) => n + 1).filter((i) => statuses.includes(i % 250 === 3 ? 'pending' : i % 100 === 0 ? 'accepted' : i % 100 === 1 ? 'canceled' : i % 100 === 2 ? 'rejected' : 'filled')).length;

type Filter = keyof typeof STATUSES_OF_FILTER | undefined;
const FILTERS = [undefined, ...Object.keys(STATUSES_OF_FILTER)] as Filter[];
/** The busy user's orders the list shows under a filter, by the seed's rule: all but its intents. */
const busyListed = (filter: Filter, live?: boolean) =>
  live === true ? 0 : filter === undefined ? BUSY_ORDERS - busyWith(['pending']) : filter === 'pending' ? 0 : busyWith(STATUSES_OF_FILTER[filter]);

describe('the order list (GET /api/equity/orders), page and total', () => {
  it('reads by index; a page reads a page and its total no history, whatever the filter', async () => {
    for (const filter of FILTERS) {
      const statuses = filter === undefined ? undefined : STATUSES_OF_FILTER[filter];
      for (const [page, live] of [[1, undefined], [3, false]] as const) {
        const { total } = await expectBounded(
          (db) => listAuditedOrders(db, { ...busy, statuses, live, page, size: 20 }),
          (text) => (isKeptTotal(text) ? 0 : pageRows(page, 20)),
        );
        expect(total).toBe(busyListed(filter, live));
      }
    }
  });
});

describe('the totals (the order list, an operator’s read of everyone’s audit records)', () => {
  it('read kept counts, never orders or audit_events: the user’s changes not yet folded, and once folded the summary’s rows alone', async () => {
    const countOf = async (text: string, params: unknown[] = []) => Number((await probe.query(text, params))[0]!.n);
    // Every order of the seed was written since the last fold: the user's changes wait.
    const pending = await countOf('select count(*) as n from order_count_changes where user_id = $1', [BUSY]);
    expect(pending).toBeGreaterThan(BUSY_ORDERS / 2);
    const actions = await countOf('select count(distinct action) as n from audit_events');
    /** A key per mode and status: what the summary holds for a user and asset class at most. */
    const keys = 2 * 8;
    const check = async ({ orderRows, auditRows }: { orderRows: number; auditRows: number }) => {
      for (const filter of FILTERS) {
        for (const live of [undefined, false, true]) {
          const statuses = filter === undefined ? undefined : STATUSES_OF_FILTER[filter];
          // Page 3: full, or empty past the first, for every filter of the seed, so the total is counted.
          const { total } = await expectKeptTotal((db) => listAuditedOrders(db, { ...busy, statuses, live, page: 3, size: 20 }), orderRows);
          expect(total).toBe(busyListed(filter, live));
        }
      }
      for (const actionPrefix of [undefined, 'order.', 'keys.']) {
        const { total } = await expectKeptTotal((db) => listAuditRecords(db, { subjectUserId: undefined, actionPrefix, page: 3, size: 20 }), auditRows);
        expect(total).toBe(await countOf(`select count(*) as n from audit_events where action like $1`, [`${actionPrefix ?? ''}%`]));
      }
    };
    await check({ orderRows: keys + pending, auditRows: actions + (await countOf('select count(*) as n from audit_count_changes')) });
    expect(await foldTallies(probe.db, [orderTally, auditTally])).toBeGreaterThan(pending);
    // A summary of a service of many users (2,000 more here, ids past the seed's), analyzed as
    // autovacuum would: read by its key. (A summary of a few pages is read whole, as it should be.)
    await probe.script(`
      insert into order_counts (user_id, asset_class, live, status, n)
        select 100000 + u, 'crypto', false, status, 10 from generate_series(1, 2000) as u, unnest(array['filled', 'canceled', 'rejected', 'accepted']) as status;
      analyze order_counts, audit_counts`);
    await check({ orderRows: keys, auditRows: actions });
  });
});

describe('one order (GET /api/equity/orders/{id})', () => {
  it('reads by index: the order and its placement', async () => {
    const found = await expectBounded((db) => findAuditedOrder(db, { ...busy, brokerOrderId: `sim-plan-${BUSY}-2424` }), () => 4);
    expect(found?.clientOrderId).toBe(`plan-${BUSY}-2424`);
  });
});

describe("the order service's other reads of history", () => {
  it('reads only working orders: the reconciler (every minute) and the watched symbols (every order event on /ws/live)', async () => {
    const everyone = await expectBounded((db) => listUnfinishedOrders(db), (_, rows) => 2 * rows.length + 30);
    expect(everyone.length).toBeGreaterThan(busyWith(['pending', 'accepted']));
    await expectBounded((db) => listUnfinishedOrders(db, { ...busy, mode: 'paper' }), () => 2 * busyWith(['pending', 'accepted']) + 30);
    await expectBounded((db) => listWorkingSymbols(db, { userId: BUSY }), () => 2 * busyWith(['pending', 'accepted']) + 30);
  });
});

describe('the audit trail (GET /api/audit, /api/admin/audit of a user)', () => {
  it('reads by index: a page reads a page, one order’s trail reads that order’s records', async () => {
    const page = { subjectUserId: BUSY, page: 1, size: 20 };
    const bound = (text: string, result: { total: number }) => (isCount(text) ? countRows(result.total) : pageRows(1, 20));
    await expectBounded((db) => listAuditRecords(db, { ...page, actionPrefix: undefined }), bound);
    await expectBounded((db) => listAuditRecords(db, { ...page, actionPrefix: 'order.' }), bound);
    const trail = await expectBounded((db) => listAuditRecords(db, { ...page, actionPrefix: undefined, clientOrderId: `plan-${BUSY}-2424` }), (_, result) => countRows(result.total));
    expect(trail.rows.map((row) => row.action).sort()).toEqual(['order.accepted', 'order.fill', 'order.placed']);
  });
});

describe("the simulator's books and the outbox", () => {
  const account = { ...busy, mode: 'paper' as const };
  const working = () => 3 * busyWith(['accepted']) + 30;
  it('reads working orders and a user’s events by index', async () => {
    await expectBounded((db) => readAccountSnapshot(db, account), working);
    await expectBounded((db) => listActiveOrders(db, account), working);
    await expectBounded((db) => listWorkingSells(db as never, { ...account, symbol: 'BTC/USDT' }), working);
    await expectBounded((db) => readUserEvents(db, { userId: BUSY, channel: 'orders', since: { id: 1 }, upTo: { txId: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER }, limit: 100 }), () => pageRows(1, 100));
  });
});

describe('reports and backtests (GET /api/equity/reports, /api/equity/backtest)', () => {
  it('reads a page by index', async () => {
    const bound = (text: string, result: { total: number }) => (isCount(text) ? countRows(result.total) : pageRows(1, 20));
    await expectBounded((db) => listReports(db, { userId: BUSY, page: 1, size: 20 }), bound);
    await expectBounded((db) => listResults(db, { userId: BUSY, assetClasses: ['us_equity', 'kr_equity'], page: 1, size: 20 }), bound);
  });
});

describe('the signals (GET /api/signals)', () => {
  it('reads a page by index, all of them or one hook’s or one outcome’s', async () => {
    const bound = (text: string, result: { total: number }) => (isCount(text) ? countRows(result.total) : pageRows(1, 20));
    const webhookId = '00000000-0000-4000-8000-999999999999';
    await expectBounded((db) => listSignals(db, { userId: BUSY, limit: 20, offset: 0 }), bound);
    await expectBounded((db) => listSignals(db, { userId: BUSY, webhookId, limit: 20, offset: 0 }), bound);
    await expectBounded((db) => listSignals(db, { userId: BUSY, status: 'refused', limit: 20, offset: 0 }), bound);
  });
});

describe('the analysis budgets (every analyze)', () => {
  it("read the day's spend and no report: the user's one row, and one row per user who spent that day", async () => {
    // Two days back the busy user spent, with every user whose number leaves 1 divided by 3.
    const day = '2025-12-30';
    const spenders = Array.from({ length: OTHER_USERS + 1 }, (_, n) => n + 1).filter((u) => (u + 2) % 3 === 0).length;
    expect(await expectBounded((db) => userSpentOn(db, { userId: BUSY, day }), () => 1)).toBe('0.1');
    expect(await expectBounded((db) => userSpentOn(db, { userId: BUSY + 1, day }), () => 0)).toBe('0');
    // A decimal sum: eleven times 0.1 is 1.1, where binary floats would make 1.0999999999999999.
    expect(spenders).toBe(11);
    expect(await expectBounded((db) => globalSpentOn(db, { day }), () => spenders)).toBe('1.1');
    for (const read of [(db: Db) => userSpentOn(db, { userId: BUSY, day }), (db: Db) => globalSpentOn(db, { day })]) {
      const { statements } = await explain(read);
      for (const { text, plans } of statements) {
        for (const { kind, plan } of plans) expect(nodesOf(plan).map((node) => node['Relation Name']), `(${kind} plan) for\n${text}\n${describePlan(plan)}`).not.toContain('analysis_reports');
      }
    }
  });
});
