// GET /api/equity/portfolio/history (DESIGN §6): a paper account driven through a few days with a
// moved clock. Each past day's point is the next day's start snapshot, today's is the account now,
// a reset is a flow (its day's P&L leaves it out), and a day nothing evaluated gives no point, its
// flows counted with the next.
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVITY_COLUMNS, type TActivityList, type TPerformance, type TPortfolioHistory } from '../../contracts/portfolio.ts';
import { manualClock } from '../../server/clock.ts';
import { rowsOf } from '../../server/db/client.ts';
import { accountFlows, equitySnapshots, orders } from '../../server/db/schema/index.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { setBtcPrice, tradingSettled } from '../support/paper-days.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// A Tuesday afternoon (UTC): crypto trades around the clock.
const clock = manualClock('2026-03-10T15:00:00Z');
let server: TestServer;
let admin: FactoryUser;
let trader: FactoryUser;

beforeAll(async () => {
  // No workers: the kill switch's sweep (which takes every account's day-start snapshot) runs when a test asks.
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', WORKERS_IN_PROCESS: 'false', SIM_INITIAL_CASH_USDT: '100000' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'history_admin' });
  trader = await newUser(server, { prefix: 'history' });
  const key = await server.http('POST', '/api/exchange-keys', { token: trader.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `history-key-${process.pid}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
});
afterAll(() => server?.stop());

/** A new day: the clock moves on, and the sessions issued before (expired by then) are issued again. */
const nextDay = async (at: string) => {
  clock.set(at);
  for (const user of [admin, trader]) user.tokens = await server.services.auth.issueSession({ user: user.auth });
};
const settled = () => tradingSettled(server);
const setPrice = (price: number) => setBtcPrice(server, admin.tokens.access_token, price);
const buy = async (qty: number) => {
  const res = await server.http('POST', '/api/equity/orders', { token: trader.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty, order_type: 'market' } });
  expect(res.status, res.text).toBe(201);
  await settled();
};
const history = async (query: string) => server.http('GET', `/api/equity/portfolio/history?asset_class=crypto&${query}`, { token: trader.tokens.access_token });
const snapshots = async () =>
  new Map(
    (await server.services.db.select().from(equitySnapshots).where(and(eq(equitySnapshots.userId, trader.user.id), eq(equitySnapshots.mode, 'paper')))).map((row) => [row.day, row]),
  );
const account = async () => {
  const res = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: trader.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { equity: number; cash: number };
};
const exact = (value: string | number) => new ExactDecimal(value);
interface FilledOrder {
  side: 'buy' | 'sell';
  qty: number;
  filled_qty: number;
  avg_fill_price: number;
  metadata: { fees: { commission: number; tax: number } };
}

describe('the portfolio history', () => {
  it('gives a point per day from the snapshots, a reset as a flow, today live, and skips a day nothing evaluated', async () => {
    // Day 1: the buy is the account's first evaluation; its snapshot is the fresh 100,000.
    await setPrice(50_000);
    await buy(0.5);
    await setPrice(60_000);
    // Day 2: the sweep takes the day's snapshot (the end of day 1), then a reset and a buy.
    await nextDay('2026-03-11T15:00:00Z');
    await server.services.killSwitch.sweep();
    const reset = await server.http('POST', '/api/equity/account/reset', { token: trader.tokens.access_token, body: { asset_class: 'crypto' } });
    expect(reset.status, reset.text).toBe(200);
    await buy(0.2);
    // Day 3: its snapshot ends day 2; the price falls.
    await nextDay('2026-03-12T15:00:00Z');
    await server.services.killSwitch.sweep();
    await setPrice(55_000);

    const res = await history('from=2026-03-09&to=2026-03-12');
    expect(res.status, res.text).toBe(200);
    const body = res.body as TPortfolioHistory;
    const stored = await snapshots();
    const [flow] = await server.services.db.select().from(accountFlows).where(eq(accountFlows.userId, trader.user.id));
    const now = await account();
    expect(body).toMatchObject({ asset_class: 'crypto', mode: 'paper', currency: 'USDT', base_value: 100_000 });
    // No snapshot on 2026-03-09: the first point is the first day with a start.
    expect(body.points.map((point) => point.date)).toEqual(['2026-03-10', '2026-03-11', '2026-03-12']);
    const [day1, day2, today] = body.points;
    // Past days end at the next day's start snapshot, with its cash.
    expect(day1!.equity).toBe(Number(stored.get('2026-03-11')!.equity));
    expect(day1!.cash).toBe(Number(stored.get('2026-03-11')!.cash));
    expect(day2!.equity).toBe(Number(stored.get('2026-03-12')!.equity));
    expect(day2!.cash).toBe(Number(stored.get('2026-03-12')!.cash));
    // 0.5 BTC bought at 50,000 (less the fee), worth 60,000 at day 1's end.
    expect(day1!.pnl).toBe(exact(stored.get('2026-03-11')!.equity).minus(100_000).toNumber());
    expect(day1!.pnl).toBeGreaterThan(4_900);
    expect(day1!.pnl_pct).toBe(exact(day1!.pnl).dividedBy(100_000).toNumber());
    expect(day1!.flows).toBe(0);
    // Day 2: the reset's flow is left out of its P&L, which is only the second buy's fee.
    expect(flow).toMatchObject({ day: '2026-03-11', kind: 'reset' });
    expect(day2!.flows).toBe(Number(flow!.amount));
    expect(day2!.pnl).toBe(exact(stored.get('2026-03-12')!.equity).minus(stored.get('2026-03-11')!.equity).minus(flow!.amount).toNumber());
    expect(day2!.pnl).toBeLessThan(0);
    expect(day2!.pnl).toBeGreaterThan(-50);
    // Today is the account now: 0.2 BTC down 5,000 each since the day began.
    expect(today).toMatchObject({ equity: now.equity, cash: now.cash, flows: 0 });
    expect(today!.pnl).toBe(exact(now.equity).minus(stored.get('2026-03-12')!.equity).toNumber());
    expect(today!.pnl).toBe(-1_000);

    // Nothing evaluates the account on 2026-03-13; on the 14th the sweep takes a snapshot again.
    await nextDay('2026-03-14T15:00:00Z');
    await server.services.killSwitch.sweep();
    const later = (await history('from=2026-03-10')).body as TPortfolioHistory;
    const storedLater = await snapshots();
    expect(storedLater.has('2026-03-13')).toBe(false);
    // The 12th has no end and the 13th no start: one point ends at the 14th's snapshot, from the 11th's end.
    expect(later.points.map((point) => point.date)).toEqual(['2026-03-10', '2026-03-11', '2026-03-13', '2026-03-14']);
    const gap = later.points[2]!;
    expect(gap.equity).toBe(Number(storedLater.get('2026-03-14')!.equity));
    expect(gap.pnl).toBe(exact(storedLater.get('2026-03-14')!.equity).minus(storedLater.get('2026-03-12')!.equity).toNumber());
    // A range that starts inside the gap starts from the 14th's snapshot.
    const inGap = (await history('from=2026-03-13&to=2026-03-20')).body as TPortfolioHistory;
    expect(inGap.base_value).toBe(Number(storedLater.get('2026-03-14')!.equity));
    expect(inGap.points.map((point) => point.date)).toEqual(['2026-03-14']);
  });

  it('gives the performance of the same days: TWR chained from the daily returns (the reset no loss), FIFO lots, fees and taxes as the orders carry them', async () => {
    // Still 2026-03-14: sell 0.1 of the 0.2 bought after the reset (the reset ended the first lot).
    const sold = await server.http('POST', '/api/equity/orders', { token: trader.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: 0.1, order_type: 'market' } });
    expect(sold.status, sold.text).toBe(201);
    await settled();
    const res = await server.http('GET', '/api/equity/performance?asset_class=crypto&from=2026-03-10', { token: trader.tokens.access_token });
    expect(res.status, res.text).toBe(200);
    const body = res.body as TPerformance;
    const historyNow = (await history('from=2026-03-10')).body as TPortfolioHistory;
    expect(body).toMatchObject({ asset_class: 'crypto', mode: 'paper', currency: 'USDT', from: '2026-03-10', to: '2026-03-14' });
    expect(body.daily).toEqual(historyNow.points.map((point) => ({ date: point.date, return: point.pnl_pct })));
    expect(body.time_weighted_return).toBe(body.daily.reduce((growth, day) => growth * (1 + day.return), 1) - 1);
    // The reset moved equity by thousands (the flow), yet no day lost more than fees and the price.
    expect(Math.min(...body.daily.map((day) => day.return))).toBeGreaterThan(-0.02);

    const filled = ((await server.http('GET', '/api/equity/orders?asset_class=crypto&status=filled&size=100', { token: trader.tokens.access_token })).body as { items: FilledOrder[] }).items;
    const feesOf = (order: FilledOrder) => order.metadata.fees;
    expect(body.fees).toBeCloseTo(filled.reduce((total, order) => total + feesOf(order).commission, 0), 8);
    expect(body.taxes).toBe(filled.reduce((total, order) => total + feesOf(order).tax, 0));
    // One lot closed: half of the 0.2 bought on the 11th, against the 0.1 sold today.
    const buy = filled.find((order) => order.side === 'buy' && order.qty === 0.2)!;
    const sell = filled.find((order) => order.side === 'sell')!;
    const cost = (buy.filled_qty * buy.avg_fill_price + feesOf(buy).commission + feesOf(buy).tax) / 2;
    const proceeds = sell.filled_qty * sell.avg_fill_price - feesOf(sell).commission - feesOf(sell).tax;
    expect(body.closed_lots).toBe(1);
    expect(body.realized_pnl).toBeCloseTo(proceeds - cost, 8);
    expect(body.win_rate).toBe(body.realized_pnl > 0 ? 1 : 0);
    // The other 0.1 is open: today's price against its cost.
    expect(body.unrealized_pnl).toBeCloseTo(0.1 * 55_000 - cost, 8);
    expect(body.by_symbol).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', closed_lots: 1, realized_pnl: body.realized_pnl })]);
    // A range that ended before today has no prices to value what is open.
    const past = (await server.http('GET', '/api/equity/performance?asset_class=crypto&from=2026-03-10&to=2026-03-12', { token: trader.tokens.access_token })).body as TPerformance;
    expect(past).toMatchObject({ to: '2026-03-12', unrealized_pnl: null, closed_lots: 0 });
  });

  it('lists the same account’s fills, FIFO lots and flows as the ledger, a page at a time, and as CSV that round-trips to the rows', async () => {
    const activities = async (query: string, headers?: Record<string, string>) => server.http('GET', `/api/equity/activities?asset_class=crypto&from=2026-03-10&${query}`, { token: trader.tokens.access_token, headers });
    const fills = (await activities('type=fill&size=100')).body as TActivityList;
    // Three fills: 0.5 bought on the 10th, 0.2 on the 11th after the reset, 0.1 sold on the 14th.
    expect(fills.items.map((row) => row.type === 'fill' && `${row.at.slice(0, 10)} ${row.side} ${row.qty}`)).toEqual(['2026-03-10 buy 0.5', '2026-03-11 buy 0.2', '2026-03-14 sell 0.1']);
    const lots = ((await activities('type=lot')).body as TActivityList).items;
    const performance = (await server.http('GET', '/api/equity/performance?asset_class=crypto&from=2026-03-10', { token: trader.tokens.access_token })).body as TPerformance;
    // The one lot the performance counts: half of the 11th's buy, its gain the realised P&L.
    expect(lots).toEqual([expect.objectContaining({ type: 'lot', symbol: 'BTC/USDT', qty: '0.1' })]);
    expect(Number((lots[0] as { gain: string }).gain)).toBe(performance.realized_pnl);
    const flows = ((await activities('type=flow')).body as TActivityList).items;
    expect(flows).toEqual([expect.objectContaining({ type: 'flow', kind: 'reset', equity_after: '100000' })]);
    // Paging: one row a page, in the same order.
    const second = (await activities('type=fill&size=1&page=2')).body as TActivityList;
    expect(second).toMatchObject({ total: 3, page: 2, size: 1, items: [fills.items[1]] });

    // CSV, by the Accept header or format=csv: a header line, then every row of the type.
    for (const [type, rows] of [['fill', fills.items], ['lot', lots], ['flow', flows]] as const) {
      const csv = await activities(`type=${type}&size=1`, { accept: 'text/csv' });
      expect(csv.status, csv.text).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      const [header, ...lines] = csv.text.trimEnd().split('\r\n');
      const columns = header!.split(',');
      expect(columns).toEqual(ACTIVITY_COLUMNS[type]);
      expect(lines.map((line) => ({ type, ...Object.fromEntries(line.split(',').map((value, i) => [columns[i], value])) }))).toEqual(rows);
    }
    expect((await activities('type=flow&format=csv')).text).toBe((await activities('type=flow', { accept: 'text/csv' })).text);
  });

  it('sees a fill whose transaction committed after a higher id was read (the fill cache reads them all again)', async () => {
    const lotsNow = async () => ((await server.http('GET', '/api/equity/activities?asset_class=crypto&type=fill&size=100&from=2026-03-10', { token: trader.tokens.access_token })).body as TActivityList).items;
    const before = await lotsNow();
    const [{ lowest }] = (await rowsOf<{ lowest: number }>(server.services.db, sql`select min(id)::integer as lowest from order_fills`)) as [{ lowest: number }];
    // A fill with an id below every one read so far, as a transaction that took its id early and committed late leaves it.
    const [order] = await server.services.db.select().from(orders).where(and(eq(orders.userId, trader.user.id), eq(orders.side, 'sell')));
    await server.services.db.execute(sql`insert into order_fills (user_id, id, client_order_id, execution_id, qty, price, fee, tax, at)
      overriding system value values (${trader.user.id}, ${lowest - 1}, ${order!.clientOrderId}, 'late-commit', 0.01, 55000, 0.55, 0, '2026-03-14T15:00:01Z')`);
    const after = await lotsNow();
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)).toMatchObject({ type: 'fill', side: 'sell', qty: '0.01', price: '55000' });
  });

  it('refuses a range that is not one (422, listed), and is empty before the account existed', async () => {
    for (const query of ['from=2026-03-12&to=2026-03-10', 'from=2026-02-30', 'to=yesterday', 'from=2010-01-01&to=2026-03-12']) {
      const res = await history(query);
      expect(res.status, `${query}: ${res.text}`).toBe(422);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    const before = await history('from=2026-01-01&to=2026-02-01');
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({ base_value: null, points: [] });
  });

  it('needs the account’s broker key, as the account does', async () => {
    const keyless = await newUser(server, { prefix: 'history_keyless' });
    const res = await server.http('GET', '/api/equity/portfolio/history?asset_class=crypto', { token: keyless.tokens.access_token });
    const accountRes = await server.http('GET', '/api/equity/account?asset_class=crypto', { token: keyless.tokens.access_token });
    expect(accountRes.status).not.toBe(200);
    expect(res.status).toBe(accountRes.status);
    expect(res.body).toMatchObject({ code: 'BROKER_NOT_CONFIGURED' });
  });
});
