// Live orders: the live flag per user and asset class, the daily live limit, the first-live-order
// audit marker and its alert to the operators' webhook; and paper trading switched off.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, liveFlags } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startFakeWebhook, type FakeWebhook } from '../support/fake-webhook.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

let server: TestServer;
let webhook: FakeWebhook;
let keyCount = 0;

beforeAll(async () => {
  webhook = await startFakeWebhook();
  server = await startTestServer({
    SIM_TICK_INTERVAL_MS: '0',
    FEATURE_EQUITY_LIVE: 'true',
    ALLOW_LIVE: '1',
    LIVE_DAILY_TRADE_LIMIT: '2',
    FEATURE_EQUITY_PAPER: 'false',
    ALERT_WEBHOOK_URL: webhook.url('/alerts/secret-token'),
  });
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(async () => {
  await server.stop();
  await webhook.close();
});

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `live-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  return user;
};
const place = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
const liveBuy = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', live_mode: true };

describe('live orders', () => {
  it('are 403 LIVE_NOT_ENABLED until the user’s live flag is set for that asset class', async () => {
    const user = await trader('live_flag');
    const res = await place(user, liveBuy);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('LIVE_NOT_ENABLED');
  });

  it('the first one is marked first_live_order in the audit log, its time kept, and alerts the operators once', async () => {
    const user = await trader('live_first');
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    const first = await place(user, { ...liveBuy, client_order_id: 'first-live' });
    expect(first.status, first.text).toBe(201);
    expect(first.body.metadata).toMatchObject({ live: true });
    const second = await place(user, { ...liveBuy, client_order_id: 'second-live' });
    expect(second.status).toBe(201);
    const marked = await server.services.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'order.accepted')));
    expect(marked.filter((row) => row.data.first_live_order === true).map((row) => row.data.client_order_id)).toEqual(['first-live']);
    const [flag] = await server.services.db.select().from(liveFlags).where(and(eq(liveFlags.userId, user.user.id), eq(liveFlags.assetClass, 'crypto')));
    expect(flag?.firstLiveOrderAt).toBeInstanceOf(Date);
    const alerts = await waitFor(
      () => Promise.resolve(webhook.accepted.filter((body: { kind?: string; data?: { user_id?: number } }) => body.kind === 'first_live_order' && body.data?.user_id === user.user.id)),
      (found) => found.length > 0,
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0].text).toContain('first live crypto order');
  });

  it('stop at LIVE_DAILY_TRADE_LIMIT per user and asset class with 429 RATE_LIMIT_LIVE_DAILY and Retry-After', async () => {
    const user = await trader('live_daily');
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    expect((await place(user, liveBuy)).status).toBe(201);
    expect((await place(user, liveBuy)).status).toBe(201);
    const over = await place(user, liveBuy);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT_LIVE_DAILY');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keep paper and live accounts apart', async () => {
    const user = await trader('live_apart');
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    await place(user, liveBuy);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    const live = await server.http('GET', '/api/equity/positions?asset_class=crypto&mode=live', { token: user.tokens.access_token });
    const paper = await server.http('GET', '/api/equity/positions?asset_class=crypto&mode=paper', { token: user.tokens.access_token });
    expect(live.body.items.map((item: { qty: number }) => item.qty)).toEqual([0.001]);
    expect(paper.body.items).toEqual([]);
    const account = await server.http('GET', '/api/equity/account?asset_class=crypto&mode=live', { token: user.tokens.access_token });
    expect(account.body.paper).toBe(false);
  });
});

describe('a live trailing stop on the simulated broker', () => {
  it('is placed through the remote submission with its broker-set stop and mark, which follow the price', async () => {
    const user = await trader('live_trailing');
    await server.services.orders.setLive({ userId: user.user.id, assetClass: 'crypto', enabled: true });
    expect((await place(user, { ...liveBuy, qty: 0.002 })).status).toBe(201);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    const trailing = await place(user, { ...liveBuy, side: 'sell', qty: 0.002, order_type: 'trailing_stop', trail_percent: 2, time_in_force: 'gtc' });
    expect(trailing.status, trailing.text).toBe(201);
    expect(trailing.body).toMatchObject({ order_type: 'trailing_stop', stop_price: 49000, metadata: { live: true, trail_percent: 2, hwm: 50000 } });
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '51000' });
    await server.services.simulator.idle();
    await server.services.orders.idle();
    const read = await server.http('GET', `/api/equity/orders/${trailing.body.broker_order_id as string}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(read.body).toMatchObject({ status: 'open', stop_price: 49980, metadata: { hwm: 51000 } });
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  });
});

describe('FEATURE_EQUITY_PAPER=false', () => {
  it('refuses paper orders with 503 FEATURE_DISABLED', async () => {
    const user = await trader('paper_off');
    const res = await place(user, { ...liveBuy, live_mode: false });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('FEATURE_DISABLED');
  });

  it('refuses backtests, sweeps and walk-forwards with 503 FEATURE_DISABLED', async () => {
    const user = await trader('paper_off_bt');
    const run = { symbol: 'AAPL', asset_class: 'us_equity', strategy_name: 'buy_and_hold', start_date: '2024-01-01', end_date: '2024-12-31' };
    for (const [path, body] of [
      ['/api/equity/backtest', run],
      ['/api/backtest/run', { ...run, symbol: 'BTC/USDT', asset_class: 'crypto' }],
      ['/api/equity/backtest/sweep', { ...run, grid: { size: [0.5, 1] } }],
      ['/api/equity/backtest/walk-forward', { ...run, grid: { size: [1] }, train_bars: 100, test_bars: 50 }],
    ] as const) {
      const res = await server.http('POST', path, { token: user.tokens.access_token, body });
      expect([res.status, res.body.code], path).toEqual([503, 'FEATURE_DISABLED']);
    }
  });
});
