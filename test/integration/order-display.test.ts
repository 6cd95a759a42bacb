// What an order shows beyond the interface's fields (DESIGN §6): its time_in_force on every
// response and frame, the fees of its fills split into commission and tax (on the order and on the
// fill's trade frame), who placed it (metadata.source), and why the service or the broker ended it
// (metadata.cancel_reason).
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TOrderEvent } from '../../contracts/orders.ts';
import { KRX_BROKER_COMMISSION_RATE, KRX_SELL_TAX_RATE_2026 } from '../../server/brokers/fees.ts';
import { manualClock } from '../../server/clock.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, liveSubscribed, wsUrl } from '../support/ws.ts';

/** Tuesday 2026-03-10, 10:00 in Seoul: the KRX is open (crypto always is). */
const clock = manualClock('2026-03-10T01:00:00.000Z');

let server: TestServer;
let user: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  user = await newUser(server, { prefix: 'ord_display' });
  for (const body of [{ exchange: 'crypto_exchange' }, { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01' }]) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { ...body, api_key: `ord-display-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  await server.services.simulator.setPrice({ assetClass: 'kr_equity', symbol: '005930', price: '60000' });
});
afterAll(() => server.stop());

const place = (body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
const getOrder = async (brokerOrderId: string, assetClass: string) => (await server.http('GET', `/api/equity/orders/${brokerOrderId}?asset_class=${assetClass}`, { token: user.tokens.access_token })).body;
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};

describe('time_in_force and source', () => {
  it('shows time_in_force on the answer, the order and every frame, and metadata.source api for an order over the API', async () => {
    const frames: TOrderEvent[] = [];
    const stop = server.services.orders.onEvent((event) => frames.push(event));
    try {
      const res = await place({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc' });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ time_in_force: 'gtc', metadata: { source: 'api' } });
      await settle();
      expect(await getOrder(res.body.broker_order_id, 'crypto')).toMatchObject({ time_in_force: 'gtc', metadata: { source: 'api' } });
      const own = frames.filter((frame) => frame.client_order_id === res.body.client_order_id);
      expect(own.length).toBeGreaterThan(0);
      for (const frame of own) expect(frame.time_in_force).toBe('gtc');
    } finally {
      stop();
    }
  });

  it("shows metadata.source bot for the bot's orders", async () => {
    const res = await server.services.orders.place({
      user: { id: user.user.id },
      request: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc', live_mode: false },
      origin: { requestId: 'bot-order', address: 'bot' },
      source: 'bot',
    });
    expect(res.metadata).toMatchObject({ source: 'bot' });
  });

  it("shows the entry's source on its bracket's legs (the broker made them, on the bot's order)", async () => {
    await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
    const entry = await server.services.orders.place({
      user: { id: user.user.id },
      request: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', time_in_force: 'gtc', live_mode: false, bracket: { take_profit: 60000, stop_loss: 45000 } },
      origin: { requestId: 'bot-bracket', address: 'bot' },
      source: 'bot',
    });
    await settle();
    const listed = await server.http('GET', '/api/equity/orders?asset_class=crypto&limit=100', { token: user.tokens.access_token });
    expect(listed.status, listed.text).toBe(200);
    const legs = (listed.body.items as { client_order_id: string; metadata: Record<string, unknown> }[]).filter((order) => order.metadata.parent_client_order_id === entry.client_order_id);
    expect(legs.map((leg) => leg.client_order_id).sort()).toEqual([`${entry.client_order_id}:sl`, `${entry.client_order_id}:tp`]);
    for (const leg of legs) expect(leg.metadata).toMatchObject({ source: 'bot' });
  });
});

describe('fees', () => {
  it("shows a KRX sell's commission and sell tax on the order and on its trade frame", async () => {
    const socket = connect(wsUrl(server, '/ws/live', { token: user.tokens.access_token }));
    try {
      await liveSubscribed(server, user.user.id);
      const buy = await place({ asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 10, order_type: 'market' });
      expect(buy.status, buy.text).toBe(201);
      await settle();
      const bought = await getOrder(buy.body.broker_order_id, 'kr_equity');
      const buyNotional = new Decimal(bought.avg_fill_price).times(10);
      // A buy pays commission (whole won, cut down) and no tax.
      expect(bought.metadata.fees).toEqual({ commission: buyNotional.times(KRX_BROKER_COMMISSION_RATE).toDecimalPlaces(0, Decimal.ROUND_DOWN).toNumber(), tax: 0 });

      const sell = await place({ asset_class: 'kr_equity', symbol: '005930', side: 'sell', qty: 10, order_type: 'market' });
      expect(sell.status, sell.text).toBe(201);
      await settle();
      const sold = await getOrder(sell.body.broker_order_id, 'kr_equity');
      expect(sold.status).toBe('filled');
      const notional = new Decimal(sold.avg_fill_price).times(10);
      const fees = {
        commission: notional.times(KRX_BROKER_COMMISSION_RATE).toDecimalPlaces(0, Decimal.ROUND_DOWN).toNumber(),
        tax: notional.times(KRX_SELL_TAX_RATE_2026).toDecimalPlaces(0, Decimal.ROUND_DOWN).toNumber(),
      };
      expect(fees.tax).toBeGreaterThan(0);
      expect(sold.metadata.fees).toEqual(fees);
      const trade = await socket.next((frame) => frame.type === 'trade' && frame.side === 'sell');
      expect(trade).toMatchObject({ fees, fee: fees.commission + fees.tax });
    } finally {
      await socket.close();
    }
  });
});

describe('cancel_reason', () => {
  it("shows kill_switch on an order the kill switch canceled, and nothing on the user's own cancel", async () => {
    const resting = async () => {
      const res = await place({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 30000, time_in_force: 'gtc' });
      expect(res.status, res.text).toBe(201);
      return res.body.broker_order_id as string;
    };
    const byService = await resting();
    const byUser = await resting();
    await settle();
    await server.services.orders.cancel({ user: { id: user.user.id }, brokerOrderId: byService, assetClass: 'crypto', by: 'kill_switch' });
    const own = await server.http('DELETE', `/api/equity/orders/${byUser}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(own.status, own.text).toBeLessThan(300);
    await settle();
    expect(await getOrder(byService, 'crypto')).toMatchObject({ status: 'canceled', metadata: { cancel_reason: 'kill_switch' } });
    const userCanceled = await getOrder(byUser, 'crypto');
    expect(userCanceled.status).toBe('canceled');
    expect(userCanceled.metadata.cancel_reason).toBeUndefined();
  });
});

describe('placed frames', () => {
  const framesOf = async (clientOrderId: string, body: Record<string, unknown>) => {
    const frames: TOrderEvent[] = [];
    const stop = server.services.orders.onEvent((event) => {
      if (event.client_order_id === clientOrderId) frames.push(event);
    });
    try {
      const res = await place({ ...body, client_order_id: clientOrderId });
      await settle();
      return { res, frames };
    } finally {
      stop();
    }
  };

  it("carry the broker's order id, written with its answer", async () => {
    const { res, frames } = await framesOf('placed-accepted', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc' });
    expect(res.status, res.text).toBe(201);
    expect(frames.map((frame) => frame.event_type).slice(0, 2)).toEqual(['placed', 'accepted']);
    for (const frame of frames) expect(frame.broker_order_id).toBe(res.body.broker_order_id);
  });

  it("carry a refused order's own id, written with the refusal", async () => {
    const { res, frames } = await framesOf('placed-refused', { asset_class: 'crypto', symbol: 'NOPE/USDT', side: 'buy', qty: 1, order_type: 'market' });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('BROKER_REJECTED');
    expect(frames.map((frame) => [frame.event_type, frame.broker_order_id])).toEqual([
      ['placed', 'rejected-placed-refused'],
      ['rejected', 'rejected-placed-refused'],
    ]);
  });
});
