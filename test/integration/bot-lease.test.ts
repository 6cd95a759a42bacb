// The bot across processes: a running bot resumes after a restart on the same database with the
// bars it had built, an order recorded but not placed before a crash is placed once after it,
// and with two runners on one database exactly one runs a user's bot, the other taking it over
// once the holder stops renewing its lease.
import { and, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { insertBotBar, readBotBars } from '../../server/bot/queries.ts';
import { createBotRunner, type BotRunner } from '../../server/bot/runner.ts';
import { manualClock } from '../../server/clock.ts';
import { botOrders, bots, orderFills, orders } from '../../server/db/schema/index.ts';
import { findLease } from '../../server/brokers/simulator/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { connect, liveSubscribed, wsUrl, type TestSocket } from '../support/ws.ts';

const clock = manualClock('2026-03-10T15:00:30.000Z');
const env = { SIM_TICK_INTERVAL_MS: '0', BOT_SYNC_INTERVAL_MS: '50', RATE_LIMIT_ORDERS_PER_MIN: '1000' };
const quickBot = { asset_class: 'crypto', symbols: ['BTC/USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } };
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let keyCount = 0;
const trader = async (server: TestServer, prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `bot-lease-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const minuteOfPrices = async (server: TestServer, admin: FactoryUser, prices: number[]) => {
  for (const price of prices) {
    clock.advance(60_000);
    const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price } });
    expect(res.status, res.text).toBe(200);
  }
};
/** The user's /ws/live, once its subscription is registered (/ws/live sends no hello to wait for). */
const liveSocket = async (server: TestServer, user: FactoryUser): Promise<TestSocket> => {
  const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
  cleanups.push(() => Promise.resolve(socket.ws.terminate()));
  await liveSubscribed(server, user.user.id);
  return socket;
};
const botOrderRows = (server: TestServer, userId: number) => server.services.db.select().from(botOrders).where(eq(botOrders.userId, userId));
const orderRows = (server: TestServer, userId: number) => server.services.db.select().from(orders).where(eq(orders.userId, userId));

describe('restart', () => {
  it('a running bot resumes after a restart with the bars it built, and places the order recorded before the crash once', async () => {
    const first = await startTestServer(env, undefined, { clock });
    cleanups.push(() => first.stop());
    const admin = await newUser(first, { role: 'admin', prefix: 'bot_restart_admin' });
    const user = await trader(first, 'bot_restart');
    expect((await first.http('POST', '/api/bot/start', { token: user.tokens.access_token, body: quickBot })).status).toBe(200);
    await waitFor(() => Promise.resolve(first.services.botRunner.held()), (held) => held.includes(user.user.id));
    // Two bars close (50,000 and 45,000) before the stop; the bar of 55,000 is still open.
    await minuteOfPrices(first, admin, [50_000, 45_000, 55_000]);
    // Ticks reach the runner by NOTIFY, after the price's answer: wait for the two closed bars.
    await waitFor(() => readBotBars(first.services.db, { userId: user.user.id, assetClass: 'crypto', symbol: 'BTC/USDT', timeframe: '1m', limit: 10 }), (bars) => bars.length === 2);
    await first.services.botRunner.idle();
    await first.close();

    const second = await startTestServer(env, { dataDir: first.dataDir, databaseUrl: first.databaseUrl }, { clock });
    cleanups.push(() => second.stop());
    await waitFor(() => Promise.resolve(second.services.botRunner.held()), (held) => held.includes(user.user.id));
    expect((await second.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body).toMatchObject({ is_running: true, strategy_name: 'sma_crossover' });
    const socket = await liveSocket(second, user);
    // The bar of 55,000 opened anew closes on the next minute: with the two bars from before the
    // restart, the price crosses above its mean (with only this bar there is no mean to cross).
    await minuteOfPrices(second, admin, [55_000, 55_000]);
    expect(await socket.next((frame) => frame.type === 'signal')).toMatchObject({ direction: 'BUY', symbol: 'BTC/USDT' });
    expect(await socket.next((frame) => frame.type === 'trade')).toMatchObject({ side: 'buy', symbol: 'BTC/USDT' });
    await second.services.botRunner.idle();
    expect(await orderRows(second, user.user.id)).toHaveLength(1);

    // A crash between recording the bot's order (with its bar, in one transaction) and placing
    // it: this runner stops first, so the records below are what a crashed holder leaves.
    await second.services.botRunner.stop();
    const [bot] = await second.services.db.select().from(bots).where(eq(bots.userId, user.user.id));
    const [bought] = await botOrderRows(second, user.user.id);
    const barStart = new Date(bought!.barStart.getTime() + 60_000);
    const clientOrderId = `bot-${bot!.runId}-BTC-USDT-crash-s`;
    await second.services.db.transaction(async (tx) => {
      await insertBotBar(tx, { userId: user.user.id, assetClass: 'crypto', symbol: 'BTC/USDT', timeframe: '1m' }, { start: barStart, open: '55000', high: '56000', low: '55000', close: '56000' });
      await tx.insert(botOrders).values({ userId: user.user.id, clientOrderId, runId: bot!.runId, assetClass: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: '0.01', barStart, createdAt: clock.now() });
    });
    await second.close();

    const third = await startTestServer(env, { dataDir: first.dataDir, databaseUrl: first.databaseUrl }, { clock });
    cleanups.push(() => third.stop());
    await waitFor(
      async () => (await orderRows(third, user.user.id)).find((order) => order.clientOrderId === clientOrderId)?.status,
      (status) => status === 'filled',
    );
    // More rounds place nothing twice.
    for (let round = 0; round < 3; round++) await third.services.botRunner.sync();
    await third.services.botRunner.idle();
    const placed = (await orderRows(third, user.user.id)).filter((order) => order.clientOrderId === clientOrderId);
    expect(placed).toHaveLength(1);
    const fills = await third.services.db.select().from(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, clientOrderId)));
    expect(fills).toHaveLength(1);
    expect(fills[0]!.qty).toBe('0.01');
    expect(await botOrderRows(third, user.user.id)).toHaveLength(2);
  });
});

describe('the lease', () => {
  it('one of two runners runs a user’s bot; the other takes it over when the holder stops renewing', async () => {
    // No workers: the two runners below are the only ones, driven round by round.
    const server = await startTestServer({ ...env, WORKERS_IN_PROCESS: 'false', BOT_LEASE_TTL_MS: '10000' }, undefined, { clock });
    cleanups.push(() => server.stop());
    const admin = await newUser(server, { role: 'admin', prefix: 'bot_lease_admin' });
    const user = await trader(server, 'bot_lease');
    const { db, config, logger, events, orders: orderService, instruments, brokers, halt } = server.services;
    const runner = (holder: string): BotRunner => {
      const made = createBotRunner({ db, clock, config, logger, events, orders: orderService, instruments, forUser: brokers.forUser, isHalted: () => halt.isHalted(), holder });
      cleanups.push(() => made.stop());
      return made;
    };
    const a = runner('instance-a');
    const b = runner('instance-b');
    expect((await server.http('POST', '/api/bot/start', { token: user.tokens.access_token, body: quickBot })).status).toBe(200);
    await a.sync();
    await b.sync();
    expect(a.held()).toEqual([user.user.id]);
    expect(b.held()).toEqual([]);
    expect((await findLease(db, `bot:${user.user.id}`))?.holder).toBe('instance-a');

    // Both hear every tick; only the holder trades: one signal, one order.
    const socket = await liveSocket(server, user);
    await minuteOfPrices(server, admin, [50_000, 45_000, 55_000, 55_000]);
    await socket.next((frame) => frame.type === 'trade');
    await a.idle();
    await b.idle();
    expect(socket.frames.filter((frame) => frame.type === 'signal')).toHaveLength(1);
    expect(await orderRows(server, user.user.id)).toHaveLength(1);

    // a renews (the clock moved four minutes), then dies: b waits for the lease to run out, then takes the bot.
    await a.sync();
    expect(a.held()).toEqual([user.user.id]);
    clock.advance(9_999);
    await b.sync();
    expect(b.held()).toEqual([]);
    clock.advance(1);
    await b.sync();
    expect(b.held()).toEqual([user.user.id]);
    await a.sync();
    expect(a.held()).toEqual([]);
    expect((await findLease(db, `bot:${user.user.id}`))?.holder).toBe('instance-b');

    // A stop ends the run in the holder at its next round, which gives the lease up.
    expect((await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token })).status).toBe(200);
    await b.sync();
    expect(b.held()).toEqual([]);
    expect(await findLease(db, `bot:${user.user.id}`)).toBeUndefined();
  });
});
