// The bot trades its own book (DESIGN §6 "Rules a real broker enforces"): a position the user
// opened by hand is neither sold by the bot's sell signals nor counted as the bot being in a
// position, and the bot's sells never exceed what its own orders bought and the account still holds.
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { botOrders, orders } from '../../server/db/schema/index.ts';
import { tickHeard } from '../support/ticks.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, liveSubscribed, wsUrl, type TestSocket } from '../support/ws.ts';
import { waitFor } from '../support/wait.ts';

// A Tuesday; crypto trades at any hour anyway.
const clock = manualClock('2026-03-10T15:00:30.000Z');
let server: TestServer;
let admin: FactoryUser;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', BOT_SYNC_INTERVAL_MS: '50', RATE_LIMIT_ORDERS_PER_MIN: '1000' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'book_admin' });
});
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await server.stop();
});

const setPrice = async (price: number) => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'SOL/USDT', price } });
  expect(res.status, res.text).toBe(200);
};
/** One price per minute: each new minute's tick closes the bar before it; the bot's work on it is finished. */
const minuteOfPrices = async (prices: number[]) => {
  for (const price of prices) {
    clock.advance(60_000);
    const heard = tickHeard(server, 'SOL/USDT', price);
    await setPrice(price);
    await heard;
    await server.services.botRunner.idle();
    await server.services.simulator.idle();
    await server.services.orders.idle();
  }
};
const solHeld = async (user: FactoryUser) => {
  const res = await server.http('GET', '/api/positions', { token: user.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return (res.body.items as { symbol: string; qty: number }[]).find((item) => item.symbol === 'SOL/USDT')?.qty ?? 0;
};
const botOrdersOf = (userId: number) =>
  server.services.db
    .select({ side: orders.side, qty: orders.qty, filledQty: orders.filledQty, status: orders.status })
    .from(botOrders)
    .innerJoin(orders, and(eq(orders.userId, botOrders.userId), eq(orders.clientOrderId, botOrders.clientOrderId)))
    .where(eq(botOrders.userId, userId))
    .orderBy(asc(orders.submittedAt));

let keyCount = 0;
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `book-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};
const buyByHand = async (user: FactoryUser, qty: number) => {
  const hand = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'SOL/USDT', side: 'buy', qty, order_type: 'market' } });
  expect(hand.status, hand.text).toBe(201);
  await server.services.simulator.idle();
  await server.services.orders.idle();
};
const startBot = async (user: FactoryUser) => {
  const started = await server.http('POST', '/api/bot/start', {
    token: user.tokens.access_token,
    body: { asset_class: 'crypto', symbols: ['SOL/USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } },
  });
  expect(started.status, started.text).toBe(200);
  await server.services.botRunner.sync();
};

describe('the bot’s own book', () => {
  it('leaves 3 SOL bought by hand alone, and sells only what it bought itself', async () => {
    const user = await trader('book_hand');
    await setPrice(100);
    await buyByHand(user, 3);
    expect(await solHeld(user)).toBe(3);

    const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
    sockets.push(socket);
    await liveSubscribed(server, user.user.id);
    await startBot(user);

    // Bars close at 100, 110 and 90: the price crosses below its two-bar mean, a sell for a bot
    // in a position. The bot holds nothing of its own, so it neither signals nor sells.
    await minuteOfPrices([100, 110, 90, 90]);
    expect(socket.frames.filter((frame) => frame.type === 'signal')).toEqual([]);
    expect(await botOrdersOf(user.user.id)).toEqual([]);
    expect(await solHeld(user)).toBe(3);

    // Then 90, 85 and 120 (a cross above: the bot buys for itself) and 80 (a cross below: it sells
    // what it bought, and only that).
    await minuteOfPrices([85, 120, 80, 80]);
    const [bought, sold, ...more] = await botOrdersOf(user.user.id);
    expect(more).toEqual([]);
    expect(bought).toMatchObject({ side: 'buy', status: 'filled' });
    expect(sold).toMatchObject({ side: 'sell', status: 'filled' });
    expect(Number(sold!.filledQty)).toBe(Number(bought!.filledQty));
    expect(await solHeld(user)).toBe(3);
    // The frames travel from the outbox to the socket after the orders are on disk: wait for them.
    const signals = await waitFor(
      () => Promise.resolve(socket.frames.filter((frame) => frame.type === 'signal').map((frame) => frame.direction)),
      (directions) => directions.length >= 2,
    );
    expect(signals).toEqual(['BUY', 'SELL']);
    await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
  });

  it('after a paper reset, what the bot bought before it is no longer its book: a hand-bought position stays', async () => {
    const user = await trader('book_reset');
    await startBot(user);
    // Bars close at 90, 85 and 120: the bot buys for itself.
    await minuteOfPrices([90, 85, 120, 80]);
    expect((await botOrdersOf(user.user.id)).map((order) => order.side)).toEqual(['buy']);
    const reset = await server.http('POST', '/api/equity/account/reset', { token: user.tokens.access_token, body: { asset_class: 'crypto' } });
    expect(reset.status, reset.text).toBe(200);
    await buyByHand(user, 3);
    // The bar of 80 crosses below the mean: the bot holds nothing since the reset, so it sells nothing.
    await minuteOfPrices([80]);
    expect((await botOrdersOf(user.user.id)).map((order) => order.side)).toEqual(['buy']);
    expect(await solHeld(user)).toBe(3);
    await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
  });
});
