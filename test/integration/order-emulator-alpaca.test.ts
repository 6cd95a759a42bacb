// The order emulator at Alpaca (DESIGN §6 "Advanced orders"), whose order stream tells a new order
// `accepted` (its `new`) before its fill: a bracket whose stop leg trails, which Alpaca cannot hold
// inside a bracket, has its entry at Alpaca and its exits emulated. When the trailing leg fires,
// its market child's `accepted` is the child's own step, not the leg's: the leg, working since it
// was armed, stays `open` until the child's fill (it used to read `accepted` again in between).
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orders, outboxEvents } from '../../server/db/schema/index.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { alpacaServerSettings } from '../support/alpaca-server.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const alpacaKey = { keyId: `PKEMU${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
let alpaca: FakeAlpaca;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...alpacaKey, cash: '100000' }], prices: { AAPL: '200' } });
  server = await startTestServer(alpacaServerSettings(alpaca));
  alice = await newUser(server, { prefix: 'emu_alpaca' });
});
afterAll(async () => {
  await server?.stop();
  await alpaca?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const orderRow = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
/** An order's events, as the outbox holds them in the order they were written: [event_type, status]. */
const eventsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, alice.user.id), eq(outboxEvents.channel, 'orders'))).orderBy(outboxEvents.id))
    .map((row) => row.frame)
    .filter((frame) => frame.client_order_id === clientOrderId)
    .map((frame) => [frame.event_type, frame.status]);

describe('a bracket whose stop leg trails, at Alpaca: the entry at Alpaca, its exits emulated', () => {
  it('sells through the trailing leg at market; the leg reads open until its child’s fill, never accepted again', async () => {
    const key = await call('POST', '/api/exchange-keys', { asset_class: 'us_equity', exchange: 'us_broker', api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url });
    expect(key.status, key.text).toBe(201);
    // Alpaca sends a trade update only to a stream listening when it happens (the fake too): the
    // entry's fill must find the key's stream taken in, as in real-brokers.test.ts.
    await waitFor(
      () => Promise.resolve(alpaca.listenerCount(alpacaKey.keyId)),
      (count) => count === 1,
    );
    const placed = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'alp-br-1', bracket: { take_profit: 260, trail_price: 5 } });
    expect(placed.status, placed.text).toBe(201);
    const leg = await waitFor(
      () => orderRow('alp-br-1:sl'),
      (row) => row?.status === 'open',
    );
    // Armed from the entry's fill at 200: a trail of 5 stops at 195.
    expect(leg).toMatchObject({ orderType: 'trailing_stop', stopPrice: '195', qty: '2' });
    // A trade through the stop fires the leg; trades are sent until the leg's watch has the symbol.
    const sold = await waitFor(
      async () => {
        alpaca.setPrice('AAPL', '194');
        return orderRow('alp-br-1:sl');
      },
      (row) => row?.status === 'filled',
    );
    expect(sold).toMatchObject({ filledQty: '2', avgFillPrice: '194' });
    expect(await orderRow('alp-br-1:tp')).toMatchObject({ status: 'canceled' });
    await server.services.orders.idle();
    const events = await eventsOf('alp-br-1:sl');
    const triggered = events.findIndex(([type]) => type === 'triggered');
    expect(triggered, JSON.stringify(events)).toBeGreaterThan(0);
    // After the trigger: the child's fill as the leg's, and no step back to accepted.
    expect(events.slice(triggered + 1), JSON.stringify(events)).toEqual([['fill', 'filled']]);
  });
});
