// The per-user bot from outside: start, status and stop over HTTP (persisted and audited), its
// refusals, a strategy driven by operator prices on a manual clock to a signal, an order through
// the five gates and its trade frame on /ws/live, the backfill routes, the operator's force stop
// and the kill switch's halt.
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZBotStatus, ZBotTradeList } from '../../contracts/bot.ts';
import { ZBotStatusFrame, ZSignalFrame, ZTradeFrame } from '../../contracts/events.ts';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, botBars, botOrders, bots, orders } from '../../server/db/schema/index.ts';
import { tickHeard } from '../support/ticks.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { connect, liveSubscribed, wsUrl, type TestSocket } from '../support/ws.ts';

// A Tuesday, 11:00 in New York; crypto trades at any hour anyway.
const clock = manualClock('2026-03-10T15:00:30.000Z');
let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0', BOT_SYNC_INTERVAL_MS: '50', RATE_LIMIT_ORDERS_PER_MIN: '1000' }, undefined, { clock });
  admin = await newUser(server, { role: 'admin', prefix: 'bot_admin' });
});
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await server.stop();
});

const trader = async (prefix: string, withKey = true) => {
  const user = await newUser(server, { prefix });
  if (withKey) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `bot-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  return user;
};
/** The user's /ws/live, once its subscription is registered (/ws/live sends no hello to wait for). */
const live = async (user: FactoryUser) => {
  const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
  sockets.push(socket);
  await liveSubscribed(server, user.user.id);
  return socket;
};
const start = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/bot/start', { token: user.tokens.access_token, body });
const quickBot = { asset_class: 'crypto', symbols: ['BTC-USDT'], strategy_name: 'sma_crossover', strategy_params: { fast: 1, slow: 2 } };
const setPrice = async (symbol: string, price: number) => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol, price } });
  expect(res.status, res.text).toBe(200);
};
/** One price per minute: each new minute's tick closes the bar before it; the last one heard by the bus (and so queued by the bot). */
const minuteOfPrices = async (symbol: string, prices: number[]) => {
  for (const price of prices) {
    clock.advance(60_000);
    const heard = tickHeard(server, symbol, price);
    await setPrice(symbol, price);
    await heard;
  }
};
const auditOf = async (userId: number) => (await server.services.db.select().from(auditEvents).where(eq(auditEvents.subjectUserId, userId)).orderBy(asc(auditEvents.id))).map((row) => row.action);
const runs = (userId: number) => waitFor(() => Promise.resolve(server.services.botRunner.held()), (held) => held.includes(userId));

describe('start, status, stop', () => {
  it('starts a bot (200, its status), keeps it in the database, announces bot_status, and stops it', async () => {
    const user = await trader('bot_basic');
    const socket = await live(user);
    const before = await server.http('GET', '/api/bot/status', { token: user.tokens.access_token });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ is_running: false, is_halted: false, halt_reason: null, asset_class: null, symbols: [], strategy_name: null });

    const started = await start(user, { ...quickBot, symbols: ['btc/usdt', 'ETHUSDT'] });
    expect(started.status, started.text).toBe(200);
    expect(ZBotStatus.strict().parse(started.body)).toMatchObject({
      is_running: true,
      is_halted: false,
      asset_class: 'crypto',
      symbols: ['BTC/USDT', 'ETH/USDT'],
      strategy_name: 'sma_crossover',
      strategy_params: { fast: 1, slow: 2, size: 1 },
      live_mode: false,
      timeframe: '1m',
      started_at: clock.now().toISOString(),
      stopped_at: null,
    });
    const frame = await socket.next((f) => f.type === 'bot_status');
    expect(ZBotStatusFrame.strict().parse(frame)).toMatchObject({ is_running: true, is_halted: false, halt_reason: null });
    const [row] = await server.services.db.select().from(bots).where(eq(bots.userId, user.user.id));
    expect(row).toMatchObject({ status: 'running', assetClass: 'crypto', symbols: ['BTC/USDT', 'ETH/USDT'], strategyName: 'sma_crossover', liveMode: false });
    expect((await server.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body).toMatchObject({ is_running: true, symbols: ['BTC/USDT', 'ETH/USDT'] });
    await runs(user.user.id);

    // One bot per user.
    const again = await start(user, quickBot);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'CONFLICT', status: 409 });

    const stopped = await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body).toMatchObject({ is_running: false, is_halted: false, stopped_by: 'user', stopped_at: clock.now().toISOString() });
    expect(await socket.next((f) => f.type === 'bot_status' && f.is_running === false)).toMatchObject({ is_halted: false, halt_reason: null });
    expect((await server.services.db.select().from(bots).where(eq(bots.userId, user.user.id)))[0]?.status).toBe('stopped');
    await waitFor(() => Promise.resolve(server.services.botRunner.held()), (held) => !held.includes(user.user.id));
    // Stopping a stopped bot is no change: its status again.
    const twice = await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
    expect(twice.status).toBe(200);
    expect(twice.body.is_running).toBe(false);
    expect((await auditOf(user.user.id)).filter((action) => action.startsWith('bot.'))).toEqual(['bot.started', 'bot.stopped']);

    // And it starts again after a stop.
    expect((await start(user, quickBot)).status).toBe(200);
    expect((await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token })).status).toBe(200);
  });

  it('refuses what it cannot run, with the documented codes, and writes nothing', async () => {
    const user = await trader('bot_refusals');
    const cases: [Record<string, unknown>, number, string, string?][] = [
      [{ ...quickBot, strategy_name: 'no_such_strategy' }, 422, 'STRATEGY_NOT_FOUND'],
      [{ ...quickBot, strategy_params: { fast: 0, slow: 2 } }, 422, 'VALIDATION_ERROR', 'strategy_params.fast'],
      [{ ...quickBot, strategy_params: { fast: 3, slow: 2 } }, 422, 'VALIDATION_ERROR', 'strategy_params.slow'],
      [{ ...quickBot, strategy_params: { fsat: 3 } }, 422, 'VALIDATION_ERROR'],
      [{ ...quickBot, symbols: [] }, 422, 'VALIDATION_ERROR', 'symbols'],
      [{ ...quickBot, symbols: ['NOPE/USDT'] }, 422, 'INVALID_SYMBOL', 'symbols.0'],
      [{ ...quickBot, symbols: ['BTC/USDT', 'BTC-USDT'] }, 422, 'VALIDATION_ERROR', 'symbols.1'],
      [{ ...quickBot, asset_class: 'bonds' }, 422, 'VALIDATION_ERROR', 'asset_class'],
      [{ ...quickBot, live_mode: 'true' }, 422, 'VALIDATION_ERROR', 'live_mode'],
      [{ ...quickBot, timeframe: '5m' }, 422, 'VALIDATION_ERROR', 'timeframe'],
      [{ ...quickBot, strategy_name: '' }, 422, 'VALIDATION_ERROR', 'strategy_name'],
      // Live needs FEATURE_EQUITY_LIVE and ALLOW_LIVE=1 on this service first: the flag gate's answer.
      [{ ...quickBot, live_mode: true }, 503, 'FEATURE_DISABLED'],
    ];
    for (const [body, status, code, path] of cases) {
      const res = await start(user, body);
      expect(res.status, `${JSON.stringify(body)} -> ${res.text}`).toBe(status);
      expect(res.body).toMatchObject({ code, status });
      if (path) expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(path);
    }
    const malformed = await server.http('POST', '/api/bot/start', { token: user.tokens.access_token, rawBody: '{"asset_class":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(422);
    // Without a key for the asset class: the broker gate's answer.
    const keyless = await trader('bot_keyless', false);
    const refused = await start(keyless, quickBot);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('BROKER_NOT_CONFIGURED');
    expect(await server.services.db.select().from(bots).where(eq(bots.userId, user.user.id))).toEqual([]);
  });
});

describe('trading', () => {
  it('turns a crossover into a signal, an order through the gates and a trade frame; the backfill routes agree', async () => {
    const user = await trader('bot_trades');
    const socket = await live(user);
    await setPrice('BTC/USDT', 50_000);
    expect((await start(user, quickBot)).status).toBe(200);
    await runs(user.user.id);

    // Bars close at 50,000, 45,000 and 55,000: the price (fast) crosses above its two-bar mean.
    await minuteOfPrices('BTC/USDT', [50_000, 45_000, 55_000, 55_000]);
    const signal = await socket.next((f) => f.type === 'signal');
    expect(ZSignalFrame.strict().parse(signal)).toMatchObject({ symbol: 'BTC/USDT', asset_class: 'crypto', direction: 'BUY', confidence: 1, stop_loss: null, take_profit: null, ts: clock.now().toISOString() });
    const bought = await socket.next((f) => f.type === 'trade');
    expect(ZTradeFrame.strict().parse(bought)).toMatchObject({ symbol: 'BTC/USDT', asset_class: 'crypto', side: 'buy' });
    // Sized to the risk rule: 2 % risk at the 5 % default stop is 40 % of the equity, less headroom.
    expect(bought.amount * bought.price).toBeGreaterThan(35_000);
    expect(bought.amount * bought.price).toBeLessThan(40_000);
    expect(Number(signal.event_id)).toBeLessThan(Number(bought.event_id));

    // The order went through the order service: audited, with the bot's client order id.
    const [recorded] = await server.services.db.select().from(botOrders).where(eq(botOrders.userId, user.user.id));
    const [order] = await server.services.db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, recorded!.clientOrderId)));
    expect(order).toMatchObject({ side: 'buy', orderType: 'market', status: 'filled', live: false, symbol: 'BTC/USDT', metadata: { source: 'bot' } });
    expect(recorded!.clientOrderId).toMatch(/^bot-[0-9a-f]{12}-BTC-USDT-[0-9a-z]+-b$/);
    expect(await auditOf(user.user.id)).toEqual(expect.arrayContaining(['bot.started', 'bot.signal', 'order.placed', 'order.accepted', 'order.fill']));

    // Then the price falls through its mean: a sell of the whole position.
    await minuteOfPrices('BTC/USDT', [60_000, 40_000, 40_000]);
    expect(await socket.next((f) => f.type === 'signal' && f.direction === 'SELL')).toMatchObject({ symbol: 'BTC/USDT' });
    const sold = await socket.next((f) => f.type === 'trade' && f.side === 'sell');
    expect(sold.amount).toBe(bought.amount);

    const trades = await server.http('GET', '/api/trades', { token: user.tokens.access_token });
    expect(trades.status, trades.text).toBe(200);
    expect(ZBotTradeList.parse(trades.body)).toMatchObject({ total: 2, page: 1, size: 20 });
    expect(trades.body.items.map((t: { side: string }) => t.side)).toEqual(['sell', 'buy']);
    expect(trades.body.items[1]).toMatchObject({ symbol: 'BTC/USDT', asset_class: 'crypto', amount: bought.amount, price: bought.price, fee: bought.fee });
    const paged = await server.http('GET', '/api/trades?page=2&size=1', { token: user.tokens.access_token });
    expect(paged.body).toMatchObject({ total: 2, page: 2, size: 1, items: [{ side: 'buy' }] });
    expect((await server.http('GET', '/api/trades?size=0', { token: user.tokens.access_token })).status).toBe(422);
    const positions = await server.http('GET', '/api/positions', { token: user.tokens.access_token });
    expect(positions.status, positions.text).toBe(200);
    expect(positions.body.items).toEqual([]);
    await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
  });

  it('while the service is halted, a bot keeps building bars but signals and places nothing', async () => {
    const user = await trader('bot_service_halt');
    await setPrice('SOL/USDT', 100);
    expect((await start(user, { ...quickBot, symbols: ['SOL/USDT'] })).status).toBe(200);
    await runs(user.user.id);
    const origin = { requestId: 'test', address: '127.0.0.1' };
    await server.services.halt.set({ halted: true, actor: admin.auth, origin });
    try {
      await minuteOfPrices('SOL/USDT', [100, 90, 110, 110]);
      await server.services.botRunner.idle();
    } finally {
      await server.services.halt.set({ halted: false, actor: admin.auth, origin });
    }
    const stored = await server.services.db.select().from(botBars).where(eq(botBars.userId, user.user.id));
    expect(stored.map((bar) => bar.close)).toEqual(['100', '90', '110']);
    expect(await server.services.db.select().from(botOrders).where(eq(botOrders.userId, user.user.id))).toEqual([]);
    expect(await auditOf(user.user.id)).not.toContain('bot.signal');
    await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
  });

  it('sends ticks of the symbols the running bot trades on /ws/live (it holds none of them)', async () => {
    const user = await trader('bot_ticks');
    const socket = await live(user);
    await setPrice('XRP/USDT', 2);
    expect(socket.frames.filter((f) => f.type === 'tick')).toEqual([]);
    expect((await start(user, { ...quickBot, symbols: ['XRP/USDT'] })).status).toBe(200);
    await socket.next((f) => f.type === 'bot_status' && f.is_running === true);
    // The feed reads the bot's symbols when the bot_status frame passes: a tick after that is sent.
    await waitFor(
      async () => {
        await setPrice('XRP/USDT', 2.5);
        return socket.frames.filter((f) => f.type === 'tick');
      },
      (ticks) => ticks.length > 0,
    );
    expect(socket.frames.find((f) => f.type === 'tick')).toMatchObject({ symbol: 'XRP/USDT', asset_class: 'crypto', last: 2.5 });
    await server.http('POST', '/api/bot/stop', { token: user.tokens.access_token });
  });

  it('a manual order of the user is not one of the bot’s trades; positions backfill what is held', async () => {
    const user = await trader('bot_manual');
    await setPrice('ETH/USDT', 3_000);
    const placed = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'ETH/USDT', side: 'buy', qty: 1, order_type: 'market' } });
    expect(placed.status, placed.text).toBe(201);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    expect((await server.http('GET', '/api/trades', { token: user.tokens.access_token })).body).toMatchObject({ items: [], total: 0 });
    const positions = await server.http('GET', '/api/positions?asset_class=crypto', { token: user.tokens.access_token });
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: 'ETH/USDT', qty: 1, side: 'LONG', asset_class: 'crypto' })]);
    expect((await server.http('GET', '/api/positions', { token: user.tokens.access_token })).body.items).toHaveLength(1);
    expect((await server.http('GET', '/api/positions?asset_class=us_equity', { token: user.tokens.access_token })).body.code).toBe('BROKER_NOT_CONFIGURED');
  });
});

describe('operators and the kill switch', () => {
  it('an operator force-stops a user’s bot (audited), and 404 for an unknown user', async () => {
    const user = await trader('bot_forced');
    const socket = await live(user);
    expect((await start(user, quickBot)).status).toBe(200);
    const res = await server.http('POST', `/api/admin/users/${user.user.id}/bot/stop`, { token: admin.tokens.access_token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ user_id: user.user.id, is_running: false, is_halted: false, stopped_by: 'admin' });
    expect(await socket.next((f) => f.type === 'bot_status' && f.is_running === false)).toBeTruthy();
    const [audit] = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'admin.bot_stopped')));
    expect(audit).toMatchObject({ actorUserId: admin.user.id, data: expect.objectContaining({ was_running: true }) });
    expect((await server.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body).toMatchObject({ is_running: false, stopped_by: 'admin' });
    const missing = await server.http('POST', '/api/admin/users/2147483000/bot/stop', { token: admin.tokens.access_token });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    const notAdmin = await server.http('POST', `/api/admin/users/${user.user.id}/bot/stop`, { token: user.tokens.access_token });
    expect(notAdmin.status).toBe(403);
  });

  it('haltForLock stops the bot of that asset class with is_halted and the reason; runningBots lists who runs', async () => {
    const user = await trader('bot_halted');
    const socket = await live(user);
    expect((await start(user, quickBot)).status).toBe(200);
    expect((await server.services.bots.runningBots()).find((bot) => bot.user_id === user.user.id)).toEqual({ user_id: user.user.id, username: user.username, asset_class: 'crypto', strategy_name: 'sma_crossover', live_mode: false, started_at: clock.now().toISOString() });
    // A lock of another asset class leaves it running.
    expect(await server.services.bots.haltForLock(user.user.id, 'us_equity', 'daily loss -5.2 %')).toEqual({ halted: false });
    expect((await server.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body.is_running).toBe(true);
    expect(await server.services.bots.haltForLock(user.user.id, 'crypto', 'daily loss -5.2 %')).toEqual({ halted: true });
    const frame = await socket.next((f) => f.type === 'bot_status' && f.is_halted === true);
    expect(frame).toMatchObject({ is_running: false, is_halted: true, halt_reason: 'daily loss -5.2 %' });
    expect((await server.http('GET', '/api/bot/status', { token: user.tokens.access_token })).body).toMatchObject({ is_running: false, is_halted: true, halt_reason: 'daily loss -5.2 %', stopped_by: 'lock' });
    expect((await server.services.bots.runningBots()).some((bot) => bot.user_id === user.user.id)).toBe(false);
    expect(await auditOf(user.user.id)).toContain('bot.halted');
  });
});

describe('daily bars', () => {
  it('a 1d bot starts from the stored daily bars and decides when the exchange’s date turns', async () => {
    // Days later: tokens issued before have expired, so this test makes its own.
    clock.set('2026-03-12T12:00:00.000Z');
    admin = await newUser(server, { role: 'admin', prefix: 'bot_admin_daily' });
    const user = await trader('bot_daily');
    const socket = await live(user);
    const bars = [
      ['2026-03-09', '0.1'],
      ['2026-03-10', '0.1'],
      ['2026-03-11', '0.09'],
    ].map(([date, close]) => ({ date, open: close, high: close, low: close, close, volume: '1000' }));
    const imported = await server.http('POST', '/api/admin/market-data/ohlcv', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'DOGE/USDT', bars } });
    expect(imported.status, imported.text).toBe(200);
    expect((await start(user, { ...quickBot, symbols: ['DOGE/USDT'], timeframe: '1d' })).status).toBe(200);
    await runs(user.user.id);
    await setPrice('DOGE/USDT', 0.11); // today's bar
    clock.set('2026-03-13T00:00:30.000Z');
    // The date turned (the tokens of noon have expired by now: the operator's price is set in process).
    // Today's bar closes at 0.11, above its mean with the 0.09 before it.
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'DOGE/USDT', price: '0.11' });
    const signal = await socket.next((f) => f.type === 'signal');
    expect(signal).toMatchObject({ symbol: 'DOGE/USDT', direction: 'BUY' });
    expect(await socket.next((f) => f.type === 'trade')).toMatchObject({ symbol: 'DOGE/USDT', side: 'buy' });
    const [built] = await server.services.db.select().from(botBars).where(eq(botBars.userId, user.user.id));
    expect(built).toMatchObject({ timeframe: '1d', start: new Date('2026-03-12T00:00:00.000Z'), close: '0.11' });
    await server.services.bots.stop({ user: { id: user.user.id }, origin: { requestId: 'test', address: '127.0.0.1' } });
  });
});
