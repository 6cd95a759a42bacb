// An order placed before its key's Alpaca stream first listens (the consumer just started, its
// first connections refused): Alpaca (and the fake) sends a trade update only to a stream
// listening when it happens, so the order's fill is never sent. Once the stream listens, the
// account is reconciled with Alpaca, the first time as after every reconnect: the order is filled
// in our books, the fill reaches the user as an order event (and a trade), and an entry whose
// exits the emulator holds has them armed with the reconciling fill.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderFills, orders, orderTriggers, outboxEvents } from '../../server/db/schema/index.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { alpacaServerSettings } from '../support/alpaca-server.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';
import { connect, wsUrl } from '../support/ws.ts';

const aliceKey = { keyId: `PKGAPA${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
const bobKey = { keyId: `PKGAPB${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
/** Long enough for the stream's reconnections to back off for a while (0.5 s doubling, with jitter). */
const RECONNECTED_MS = 40_000;

let alpaca: FakeAlpaca;
let server: TestServer;
let alice: FactoryUser;
let bob: FactoryUser;

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...aliceKey, cash: '100000' }, { ...bobKey, cash: '100000' }], prices: { AAPL: '200' } });
  // No minute's jobs there: their reconcile of every account would settle the order whether or not
  // the stream's first listening does.
  server = await startTestServer(alpacaServerSettings(alpaca));
  alice = await newUser(server, { prefix: 'gap_alice' });
  bob = await newUser(server, { prefix: 'gap_bob' });
});
afterAll(async () => {
  await server?.stop();
  await alpaca?.close();
});

const call = (user: FactoryUser, method: string, path: string, body?: unknown) => server.http(method, path, { token: user.tokens.access_token, ...(body === undefined ? {} : { body }) });
const orderRow = async (user: FactoryUser, clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const fillsOf = async (user: FactoryUser, clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => [fill.executionId, fill.qty, fill.price]);
/** The user's outbox frames of a channel, in the order they were written. */
const framesOf = async (user: FactoryUser, channel: 'orders' | 'live') =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, user.user.id), eq(outboxEvents.channel, channel))).orderBy(outboxEvents.id)).map((row) => row.frame);
/** An order's events as the outbox holds them: [event_type, status]. */
const eventsOf = async (user: FactoryUser, clientOrderId: string) =>
  (await framesOf(user, 'orders')).filter((frame) => frame.client_order_id === clientOrderId).map((frame) => [frame.event_type, frame.status]);

/**
 * Registers the user's Alpaca key with every stream connection refused, and waits until its
 * consumer has been refused at least once: from then on, until `listen`, nothing it places is
 * reported by the stream.
 */
const registerKeyUnheard = async (user: FactoryUser, key: { keyId: string; secretKey: string }) => {
  alpaca.dropStreams(1_000);
  const connections = alpaca.streamConnections;
  const created = await call(user, 'POST', '/api/exchange-keys', { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true, api_key: key.keyId, api_secret: key.secretKey, base_url: alpaca.url });
  expect(created.status, created.text).toBe(201);
  await waitFor(
    () => Promise.resolve(alpaca.streamConnections),
    (count) => count > connections,
  );
  return {
    /** Lets the next connection through and waits for the key's stream to listen. */
    listen: async () => {
      alpaca.dropStreams(0);
      await waitFor(
        () => Promise.resolve(alpaca.listenerCount(key.keyId)),
        (count) => count === 1,
        RECONNECTED_MS,
      );
    },
  };
};

describe('an order placed before its key’s stream first listens', () => {
  it('is filled once the stream listens, and the fill reaches the user as an order event and a trade', async () => {
    const socket = connect(wsUrl(server, '/ws/equity/orders', { token: alice.tokens.access_token }));
    try {
      await socket.next((frame) => frame.type === 'hello');
      const stream = await registerKeyUnheard(alice, aliceKey);
      const placed = await call(alice, 'POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'gap-market-1' });
      expect(placed.status, placed.text).toBe(201);
      // Filled at Alpaca while no stream of the key listened: no update was sent.
      expect(alpaca.books.getByClientOrderId(aliceKey.keyId, 'gap-market-1').status).toBe('filled');
      expect(alpaca.listenerCount(aliceKey.keyId)).toBe(0);
      expect(await orderRow(alice, 'gap-market-1')).toMatchObject({ status: 'accepted', filledQty: '0' });

      await stream.listen();
      const filled = await waitFor(
        () => orderRow(alice, 'gap-market-1'),
        (row) => row?.status === 'filled',
      );
      expect(filled).toMatchObject({ filledQty: '2', avgFillPrice: '200' });
      expect(await fillsOf(alice, 'gap-market-1')).toEqual([['reconcile:gap-market-1:2', '2', '200']]);
      // Told to the user as the stream's fill would have been: on the socket, from the outbox.
      const frame = await socket.next((sent) => sent.type === 'order_event' && sent.client_order_id === 'gap-market-1' && sent.event_type === 'fill');
      expect(frame).toMatchObject({ status: 'filled', filled_qty: 2, avg_fill_price: 200, broker_order_id: placed.body.broker_order_id });
      expect(await eventsOf(alice, 'gap-market-1')).toEqual([
        ['placed', 'pending'],
        ['accepted', 'accepted'],
        ['fill', 'filled'],
      ]);
      expect((await framesOf(alice, 'live')).filter((trade) => trade.type === 'trade')).toEqual([expect.objectContaining({ symbol: 'AAPL', side: 'buy', amount: 2, price: 200 })]);
      // The audit keeps the reconciler's decision.
      const trail = await call(alice, 'GET', '/api/audit?client_order_id=gap-market-1');
      expect(trail.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'order.reconciled', data: expect.objectContaining({ decision: 'linked' }) })]));
    } finally {
      await socket.close();
    }
  });

  it('arms an entry’s emulated exits with the reconciling fill, and they sell as armed', async () => {
    const stream = await registerKeyUnheard(bob, bobKey);
    // A bracket whose stop leg trails, which Alpaca cannot hold: the entry at Alpaca, the exits the emulator's.
    const placed = await call(bob, 'POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'gap-br-1', bracket: { take_profit: 260, trail_price: 5 } });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.metadata).toMatchObject({ emulated_exits: true });
    expect(alpaca.books.getByClientOrderId(bobKey.keyId, 'gap-br-1').status).toBe('filled');
    expect(await orderRow(bob, 'gap-br-1:sl')).toBeUndefined();

    await stream.listen();
    const leg = await waitFor(
      () => orderRow(bob, 'gap-br-1:sl'),
      (row) => row?.status === 'open',
    );
    // Armed from the reconciling fill at 200: a trail of 5 stops at 195.
    expect(leg).toMatchObject({ orderType: 'trailing_stop', stopPrice: '195', qty: '2' });
    expect(await orderRow(bob, 'gap-br-1:tp')).toMatchObject({ status: 'open', orderType: 'limit', limitPrice: '260', qty: '2' });
    expect(await orderRow(bob, 'gap-br-1')).toMatchObject({ status: 'filled', filledQty: '2' });
    const triggers = await server.services.db.select().from(orderTriggers).where(eq(orderTriggers.userId, bob.user.id));
    expect(triggers.map((trigger) => [trigger.clientOrderId, trigger.status]).sort()).toEqual([
      ['gap-br-1:sl', 'working'],
      ['gap-br-1:tp', 'working'],
    ]);
    expect(await eventsOf(bob, 'gap-br-1')).toContainEqual(['fill', 'filled']);
    expect(await eventsOf(bob, 'gap-br-1:sl')).toEqual([['accepted', 'open']]);
    // The account's watch holds the legs: a trade through the stop sells (trades are sent until the watch has the symbol).
    const sold = await waitFor(
      async () => {
        alpaca.setPrice('AAPL', '194');
        return orderRow(bob, 'gap-br-1:sl');
      },
      (row) => row?.status === 'filled',
    );
    expect(sold).toMatchObject({ filledQty: '2', avgFillPrice: '194' });
    expect(await orderRow(bob, 'gap-br-1:tp')).toMatchObject({ status: 'canceled' });
  });
});
