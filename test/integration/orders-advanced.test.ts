// Advanced orders through the interface on paper (DESIGN §6 "Advanced orders"). Trailing stops:
// order_type trailing_stop with trail_percent or trail_price; the order shows its current stop_price
// and metadata.hwm as the simulator moves them, triggers at market at the trail, holds cash (a buy)
// or units (a sell) at its current stop, changes its trail by PATCH, and refuses the fields that do
// not belong to it. Brackets whose stop leg trails from the entry's fill, order_class oto (an entry
// and one exit leg) and oco (a sell limit and its stop leg on a held position: one filling cancels
// the other, in the transaction of the fill).
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxEvents } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  admin = await newUser(server, { role: 'admin', prefix: 'trail_admin' });
});
afterAll(() => server.stop());

/** A new symbol's price for every test: crypto trades around the clock, and BTC/USDT's tick is 0.01. */
const setPrice = async (price: number) => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price } });
  expect(res.status, res.text).toBe(200);
  await settle();
};
const settle = async () => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
};
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `trail-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const place = async (user: FactoryUser, body: Record<string, unknown>) => {
  const res = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', time_in_force: 'gtc', ...body } });
  await settle();
  return res;
};
const replace = async (user: FactoryUser, brokerOrderId: string, body: Record<string, unknown>) => {
  const res = await server.http('PATCH', `/api/equity/orders/${brokerOrderId}`, { token: user.tokens.access_token, body: { asset_class: 'crypto', ...body } });
  await settle();
  return res;
};
const orderOf = async (user: FactoryUser, brokerOrderId: string) =>
  (await server.http('GET', `/api/equity/orders/${brokerOrderId}?asset_class=crypto`, { token: user.tokens.access_token })).body as Record<string, unknown>;
const account = async (user: FactoryUser) => (await server.http('GET', '/api/equity/account?asset_class=crypto', { token: user.tokens.access_token })).body as { cash: number; buying_power: number };
const positions = async (user: FactoryUser) =>
  (await server.http('GET', '/api/equity/positions?asset_class=crypto', { token: user.tokens.access_token })).body.items as { symbol: string; qty: number }[];
/** The order's frames on /ws/equity/orders, as the outbox holds them, in order. */
const framesOf = async (user: FactoryUser, brokerOrderId: string) =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, user.user.id), eq(outboxEvents.channel, 'orders'))).orderBy(asc(outboxEvents.id)))
    .map((row) => row.frame as { event_type: string; broker_order_id: string; payload: { stop_price?: string; hwm?: string } })
    .filter((frame) => frame.broker_order_id === brokerOrderId);

describe('a trailing sell stop on paper', () => {
  it('starts at its trail below the price, follows each new high (stop_price, metadata.hwm, a replaced frame), not a fall, and sells at market at the trail', async () => {
    await setPrice(50000);
    const user = await trader('trail_sell');
    expect((await place(user, { side: 'buy', qty: 0.02, order_type: 'market' })).status).toBe(201);
    const placed = await place(user, { side: 'sell', qty: 0.02, order_type: 'trailing_stop', trail_percent: 2 });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'trailing_stop', stop_price: 49000, limit_price: null, metadata: { trail_percent: 2, hwm: 50000 } });
    const id = placed.body.broker_order_id as string;
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', order_type: 'trailing_stop', stop_price: 49000 });
    // It holds the units it sells, as every working sell does.
    const more = await place(user, { side: 'sell', qty: 0.01, order_type: 'market' });
    expect([more.status, more.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);

    await setPrice(51000);
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', stop_price: 49980, metadata: { trail_percent: 2, hwm: 51000 } });
    // A fall moves nothing.
    await setPrice(50500);
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', stop_price: 49980, metadata: { hwm: 51000 } });
    await setPrice(52000);
    expect(await orderOf(user, id)).toMatchObject({ stop_price: 50960, metadata: { hwm: 52000 } });
    expect((await framesOf(user, id)).filter((frame) => frame.event_type === 'replaced').map((frame) => frame.payload)).toEqual([
      expect.objectContaining({ stop_price: '49980', hwm: '51000' }),
      expect.objectContaining({ stop_price: '50960', hwm: '52000' }),
    ]);

    // Just above its stop it rests; at it, it sells everything at market.
    await setPrice(50961);
    expect((await orderOf(user, id)).status).toBe('open');
    await setPrice(50960);
    const filled = await orderOf(user, id);
    expect(filled).toMatchObject({ status: 'filled', filled_qty: 0.02, order_type: 'trailing_stop', stop_price: 50960 });
    expect(filled.avg_fill_price).toBeLessThanOrEqual(50960);
    expect(await positions(user)).toEqual([]);
  });

  it('takes a new trail by PATCH, set again from its mark; refuses a stop_price or a limit for it, and a trail for another type', async () => {
    await setPrice(50000);
    const user = await trader('trail_replace');
    expect((await place(user, { side: 'buy', qty: 0.01, order_type: 'market' })).status).toBe(201);
    const placed = await place(user, { side: 'sell', qty: 0.01, order_type: 'trailing_stop', trail_price: 1000 });
    expect(placed.body).toMatchObject({ stop_price: 49000, metadata: { trail_price: 1000, hwm: 50000 } });
    const id = placed.body.broker_order_id as string;
    await setPrice(50800);
    expect(await orderOf(user, id)).toMatchObject({ stop_price: 49800, metadata: { hwm: 50800 } });
    await setPrice(50500);

    const tighter = await replace(user, id, { trail_percent: 1 });
    expect(tighter.status, tighter.text).toBe(200);
    // 1 % of the mark 50,800 is 508: the stop is 50,292, and the price trail is gone.
    expect(tighter.body).toMatchObject({ order_type: 'trailing_stop', stop_price: 50292, metadata: { trail_percent: 1, hwm: 50800 } });
    expect(tighter.body.metadata).not.toHaveProperty('trail_price');
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', stop_price: 50292, metadata: { trail_percent: 1 } });
    // A trail whose stop would sit at or above the price triggers at once: the broker refuses it.
    const atOnce = await replace(user, id, { trail_price: 100 });
    expect([atOnce.status, atOnce.body.code]).toEqual([422, 'BROKER_REJECTED']);
    expect(atOnce.body.message).toContain('would trigger immediately');
    expect(await orderOf(user, id)).toMatchObject({ stop_price: 50292, metadata: { trail_percent: 1 } });

    for (const body of [{ stop_price: 49000 }, { limit_price: 49000 }]) {
      const refused = await replace(user, id, body);
      expect([refused.status, refused.body.code], refused.text).toEqual([422, 'VALIDATION_ERROR']);
    }
    const limit = await place(user, { side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000 });
    const trailOnLimit = await replace(user, limit.body.broker_order_id as string, { trail_percent: 3 });
    expect([trailOnLimit.status, trailOnLimit.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(trailOnLimit.body.message).toContain('trail_percent');
  });
});

describe('a trailing buy stop on paper', () => {
  it('holds buying power at its current stop, follows each new low down, releases the hold as it moves, and buys at market at the trail', async () => {
    await setPrice(50000);
    const user = await trader('trail_buy');
    const before = await account(user);
    const placed = await place(user, { side: 'buy', qty: 0.3, order_type: 'trailing_stop', trail_price: 500 });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'trailing_stop', stop_price: 50500, metadata: { trail_price: 500, hwm: 50000 } });
    const id = placed.body.broker_order_id as string;
    const held = await account(user);
    expect(held.cash).toBe(before.cash);
    // 0.3 BTC at its stop of 50,500 (15,150) with the fees on it is held out of the buying power.
    const holdAt50500 = before.buying_power - held.buying_power;
    expect(holdAt50500).toBeGreaterThan(15150);
    expect(holdAt50500).toBeLessThan(15150 * 1.01);

    await setPrice(49000);
    expect(await orderOf(user, id)).toMatchObject({ status: 'open', stop_price: 49500, metadata: { hwm: 49000 } });
    const left = await account(user);
    expect(before.buying_power - left.buying_power).toBeLessThan(holdAt50500);
    // A buy the cash would pay for but the buying power left beside the hold would not is refused.
    const qty = Math.ceil(((left.buying_power + 500) / 49000) * 1000) / 1000;
    expect(qty * 49000).toBeLessThan(left.cash);
    const tooMuch = await place(user, { side: 'buy', qty, order_type: 'market' });
    expect([tooMuch.status, tooMuch.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);

    await setPrice(49500);
    expect(await orderOf(user, id)).toMatchObject({ status: 'filled', filled_qty: 0.3 });
    expect(await positions(user)).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', qty: 0.3 })]);
  });
});

describe('what a trailing stop refuses', () => {
  it('answers 422 for a missing or doubled trail, a trail out of bounds, fields that do not belong, and a trail off the tick grid', async () => {
    await setPrice(50000);
    const user = await trader('trail_refuse');
    expect((await place(user, { side: 'buy', qty: 0.01, order_type: 'market' })).status).toBe(201);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ order_type: 'trailing_stop' }, 'VALIDATION_ERROR', 'trail_percent'],
      [{ order_type: 'trailing_stop', trail_percent: 2, trail_price: 100 }, 'VALIDATION_ERROR', 'trail_price'],
      [{ order_type: 'trailing_stop', trail_percent: 51 }, 'VALIDATION_ERROR', 'trail_percent'],
      [{ order_type: 'trailing_stop', trail_percent: 0 }, 'VALIDATION_ERROR', 'trail_percent'],
      [{ order_type: 'trailing_stop', trail_percent: 2, stop_price: 49000 }, 'VALIDATION_ERROR', 'stop_price'],
      [{ order_type: 'trailing_stop', trail_percent: 2, limit_price: 49000 }, 'VALIDATION_ERROR', 'limit_price'],
      [{ order_type: 'market', trail_percent: 2 }, 'VALIDATION_ERROR', 'trail_percent'],
      [{ order_type: 'stop', stop_price: 49000, trail_price: 100 }, 'VALIDATION_ERROR', 'trail_price'],
      [{ order_type: 'trailing_stop', trail_price: 100.005 }, 'RISK_RULE_VIOLATION', 'tick'],
    ];
    for (const [body, code, words] of cases) {
      const res = await place(user, { side: 'sell', qty: 0.01, ...body });
      expect([res.status, res.body.code], `${JSON.stringify(body)}: ${res.text}`).toEqual([422, code]);
      expect(res.text).toContain(words);
    }
    const bracket = await place(user, { side: 'buy', qty: 0.01, order_type: 'trailing_stop', trail_percent: 2, bracket: { take_profit: 60000, stop_loss: 40000 } });
    expect([bracket.status, bracket.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    // Nothing was placed by any of them: only the first buy.
    const list = await server.http('GET', '/api/equity/orders?asset_class=crypto&size=100', { token: user.tokens.access_token });
    expect(list.body.items).toHaveLength(1);
  });

  it('previews a trailing stop at the stop its trail would start at', async () => {
    await setPrice(50000);
    const user = await trader('trail_preview');
    const res = await server.http('POST', '/api/equity/orders/preview', {
      token: user.tokens.access_token,
      body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.1, order_type: 'trailing_stop', trail_percent: 1 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ order_type: 'trailing_stop', last_price: 50000, reference_price: 50500, notional: 5050 });
  });
});

/** The user's working orders and their legs, by client order id. */
const workingOf = async (user: FactoryUser) =>
  (
    (await server.http('GET', '/api/equity/orders?asset_class=crypto&status=open&size=100', { token: user.tokens.access_token })).body.items as {
      client_order_id: string;
      broker_order_id: string;
      order_type: string;
      side: string;
      qty: number;
      limit_price: number | null;
      stop_price: number | null;
      metadata: Record<string, unknown>;
    }[]
  ).sort((a, b) => a.client_order_id.localeCompare(b.client_order_id));

describe('a bracket whose stop leg trails', () => {
  it('places a take-profit and a trailing stop from the entry’s fill, trails it up with the price, and the stop’s fill cancels the take-profit', async () => {
    await setPrice(50000);
    const user = await trader('trail_bracket');
    const entry = await place(user, { side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'tb-1', bracket: { take_profit: 60000, trail_percent: 2 } });
    expect(entry.status, entry.text).toBe(201);
    expect(entry.body.bracket).toEqual({ take_profit: 60000, stop_loss: null, stop_loss_limit: null, trail_percent: 2 });
    const filled = await orderOf(user, entry.body.broker_order_id as string);
    expect(filled.status).toBe('filled');
    const fillPrice = filled.avg_fill_price as number;
    const legs = await workingOf(user);
    expect(legs.map((leg) => [leg.client_order_id, leg.order_type, leg.side, leg.qty])).toEqual([
      ['tb-1:sl', 'trailing_stop', 'sell', 0.01],
      ['tb-1:tp', 'limit', 'sell', 0.01],
    ]);
    const [stopLeg, takeProfit] = legs as [(typeof legs)[number], (typeof legs)[number]];
    // Its mark is the entry's fill; its stop 2 % below, down onto the cent.
    expect(stopLeg.metadata).toMatchObject({ trail_percent: 2, hwm: fillPrice, parent_client_order_id: 'tb-1' });
    expect(stopLeg.stop_price).toBe(Math.floor(fillPrice * 0.98 * 100) / 100);
    expect(takeProfit.limit_price).toBe(60000);

    await setPrice(52000);
    expect(await orderOf(user, stopLeg.broker_order_id)).toMatchObject({ status: 'open', stop_price: 50960, metadata: { hwm: 52000 } });
    await setPrice(50960);
    expect(await orderOf(user, stopLeg.broker_order_id)).toMatchObject({ status: 'filled', filled_qty: 0.01 });
    expect(await orderOf(user, takeProfit.broker_order_id)).toMatchObject({ status: 'canceled' });
    expect(await positions(user)).toEqual([]);
  });
});

describe('an oto: an entry and one exit leg', () => {
  it('places only the take-profit on the fill, which holds the position; or only a stop leg', async () => {
    await setPrice(50000);
    const user = await trader('oto');
    const entry = await place(user, { side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'oto-1', order_class: 'oto', bracket: { take_profit: 55000 } });
    expect(entry.status, entry.text).toBe(201);
    expect(entry.body).toMatchObject({ bracket: { take_profit: 55000, stop_loss: null }, metadata: { order_class: 'oto' } });
    expect((await workingOf(user)).map((leg) => [leg.client_order_id, leg.order_type, leg.limit_price])).toEqual([['oto-1:tp', 'limit', 55000]]);
    // The leg holds what it sells.
    const sell = await place(user, { side: 'sell', qty: 0.01, order_type: 'market' });
    expect([sell.status, sell.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    await setPrice(55000);
    expect(await positions(user)).toEqual([]);

    const stopOnly = await place(user, { side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'oto-2', order_class: 'oto', bracket: { stop_loss: 50000 } });
    expect(stopOnly.status, stopOnly.text).toBe(201);
    expect((await workingOf(user)).map((leg) => [leg.client_order_id, leg.order_type, leg.stop_price])).toEqual([['oto-2:sl', 'stop', 50000]]);
    await setPrice(50000);
    expect(await positions(user)).toEqual([]);
  });

  it('answers 422 for a bracket or an oto whose legs do not fit its class, and for a trail off the grid', async () => {
    await setPrice(50000);
    const user = await trader('oto_refuse');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ bracket: { take_profit: 60000 } }, 'VALIDATION_ERROR', 'bracket.stop_loss'],
      [{ bracket: { trail_percent: 2 } }, 'VALIDATION_ERROR', 'bracket.take_profit'],
      [{ bracket: { take_profit: 60000, stop_loss: 45000, trail_percent: 2 } }, 'VALIDATION_ERROR', 'bracket.trail_percent'],
      [{ bracket: { take_profit: 60000, trail_percent: 2, stop_loss_limit: 44000 } }, 'VALIDATION_ERROR', 'bracket.stop_loss_limit'],
      [{ order_class: 'oto', bracket: { take_profit: 60000, stop_loss: 45000 } }, 'VALIDATION_ERROR', 'an oto takes one exit leg'],
      [{ order_class: 'oto', bracket: {} }, 'VALIDATION_ERROR', 'an oto takes one exit leg'],
      [{ order_class: 'oto' }, 'VALIDATION_ERROR', 'is required for an oto order'],
      [{ order_class: 'simple', bracket: { take_profit: 60000, stop_loss: 45000 } }, 'VALIDATION_ERROR', 'is not taken by a simple order'],
      [{ bracket: { take_profit: 60000, trail_percent: 60 } }, 'VALIDATION_ERROR', 'bracket.trail_percent'],
      [{ bracket: { take_profit: 60000, trail_price: 10.005 } }, 'RISK_RULE_VIOLATION', 'trail price'],
      [{ order_class: 'oto', bracket: { stop_loss: 51000 } }, 'BROKER_REJECTED', 'stop_loss 51000 must be below'],
    ];
    for (const [body, code, words] of cases) {
      const res = await place(user, { side: 'buy', qty: 0.01, order_type: 'market', ...body });
      expect([res.status, res.body.code], `${JSON.stringify(body)}: ${res.text}`).toEqual([422, code]);
      expect(res.text).toContain(words);
    }
    expect(await positions(user)).toEqual([]);
  });
});

describe('an oco: two exits of a held position', () => {
  it('works its limit and its stop leg at once, holds the units once, and the stop’s fill cancels the limit', async () => {
    await setPrice(50000);
    const user = await trader('oco');
    expect((await place(user, { side: 'buy', qty: 0.02, order_type: 'market' })).status).toBe(201);
    const oco = await place(user, { side: 'sell', qty: 0.02, order_type: 'limit', limit_price: 55000, client_order_id: 'oco-1', order_class: 'oco', bracket: { stop_loss: 48000 } });
    expect(oco.status, oco.text).toBe(201);
    expect(oco.body).toMatchObject({ client_order_id: 'oco-1', order_type: 'limit', limit_price: 55000, bracket: { take_profit: null, stop_loss: 48000 }, metadata: { order_class: 'oco' } });
    expect((await workingOf(user)).map((leg) => [leg.client_order_id, leg.order_type, leg.limit_price, leg.stop_price, leg.qty])).toEqual([
      ['oco-1', 'limit', 55000, null, 0.02],
      ['oco-1:sl', 'stop', null, 48000, 0.02],
    ]);
    // The pair sells the same units: nothing is left to sell, and nothing was counted twice.
    const more = await place(user, { side: 'sell', qty: 0.001, order_type: 'market' });
    expect([more.status, more.body.code]).toEqual([422, 'INSUFFICIENT_FUNDS']);
    expect(more.body.message).toContain('0.02');

    await setPrice(48000);
    expect(await orderOf(user, oco.body.broker_order_id as string)).toMatchObject({ status: 'canceled' });
    expect(await workingOf(user)).toEqual([]);
    expect(await positions(user)).toEqual([]);
  });

  it('the limit’s fill cancels the stop leg; a cancel of one leg cancels the pair; a trailing stop leg trails from the price at placement', async () => {
    await setPrice(50000);
    const user = await trader('oco_two');
    expect((await place(user, { side: 'buy', qty: 0.02, order_type: 'market' })).status).toBe(201);
    const first = await place(user, { side: 'sell', qty: 0.01, order_type: 'limit', limit_price: 52000, client_order_id: 'oco-a', order_class: 'oco', bracket: { trail_percent: 5 } });
    expect(first.status, first.text).toBe(201);
    const legs = await workingOf(user);
    expect(legs.find((leg) => leg.client_order_id === 'oco-a:sl')).toMatchObject({ order_type: 'trailing_stop', stop_price: 47500, metadata: { trail_percent: 5, hwm: 50000 } });
    await setPrice(52000);
    expect(await orderOf(user, first.body.broker_order_id as string)).toMatchObject({ status: 'filled' });
    expect(await workingOf(user)).toEqual([]);
    expect(await positions(user)).toEqual([expect.objectContaining({ qty: 0.01 })]);

    const second = await place(user, { side: 'sell', qty: 0.01, order_type: 'limit', limit_price: 60000, client_order_id: 'oco-b', order_class: 'oco', bracket: { stop_loss: 45000, stop_loss_limit: 44900 } });
    expect(second.status, second.text).toBe(201);
    const stopLeg = (await workingOf(user)).find((leg) => leg.client_order_id === 'oco-b:sl')!;
    expect(stopLeg).toMatchObject({ order_type: 'stop', stop_price: 45000, metadata: { stop_limit_price: '44900' } });
    const canceled = await server.http('DELETE', `/api/equity/orders/${stopLeg.broker_order_id}?asset_class=crypto`, { token: user.tokens.access_token });
    await settle();
    expect(canceled.status, canceled.text).toBe(204);
    expect(await orderOf(user, second.body.broker_order_id as string)).toMatchObject({ status: 'canceled' });
    expect(await workingOf(user)).toEqual([]);
  });

  it('answers 422 for an oco that is not a sell limit with one stop leg below it, or beyond what is held', async () => {
    await setPrice(50000);
    const user = await trader('oco_refuse');
    expect((await place(user, { side: 'buy', qty: 0.01, order_type: 'market' })).status).toBe(201);
    const base = { side: 'sell', qty: 0.01, order_type: 'limit', limit_price: 55000, order_class: 'oco' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...base, bracket: undefined }, 'VALIDATION_ERROR', 'is required for an oco order'],
      [{ ...base, bracket: { take_profit: 56000, stop_loss: 48000 } }, 'VALIDATION_ERROR', 'bracket.take_profit'],
      [{ ...base, bracket: {} }, 'VALIDATION_ERROR', 'bracket.stop_loss'],
      [{ ...base, side: 'buy', bracket: { stop_loss: 48000 } }, 'VALIDATION_ERROR', 'order_class'],
      [{ ...base, order_type: 'market', limit_price: undefined, bracket: { stop_loss: 48000 } }, 'VALIDATION_ERROR', 'order_class'],
      [{ ...base, bracket: { stop_loss: 50000 } }, 'BROKER_REJECTED', 'would trigger immediately'],
      [{ ...base, qty: 0.02, bracket: { stop_loss: 48000 } }, 'INSUFFICIENT_FUNDS', 'held'],
    ];
    for (const [body, code, words] of cases) {
      const res = await place(user, body);
      expect([res.status, res.body.code], `${JSON.stringify(body)}: ${res.text}`).toEqual([422, code]);
      expect(res.text).toContain(words);
    }
    expect(await workingOf(user)).toEqual([]);
  });
});
