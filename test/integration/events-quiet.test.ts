// The event bus while nobody listens in this instance: it reads nothing, and the first client
// after a quiet spell gets only what happens from then on, or, resuming after last_event_id,
// exactly what it missed before the live stream. Its own server: no other test's socket may keep
// the bus listening.
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxEvents } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, wsUrl, type TestSocket } from '../support/ws.ts';

let server: TestServer;
let user: FactoryUser;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  const admin = await newUser(server, { role: 'admin', prefix: 'quiet_admin' });
  const price = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(price.status, price.text).toBe(200);
  user = await newUser(server, { prefix: 'quiet' });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `quiet-key-${process.pid}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
});
afterAll(async () => {
  for (const socket of sockets) socket.ws.terminate();
  await server.stop();
});

const ordersChannel = (query: Record<string, string> = {}) => {
  const socket = connect(wsUrl(server, '/ws/equity/orders', { token: user.tokens.access_token, ...query }));
  sockets.push(socket);
  return socket;
};
const buy = async (clientOrderId: string) => {
  const res = await server.http('POST', '/api/equity/orders', {
    token: user.tokens.access_token,
    body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: clientOrderId },
  });
  expect(res.status, res.text).toBe(201);
  await server.services.orders.idle();
};
const ofOrder = (clientOrderId: string, eventType: string) => (frame: Record<string, any>) => frame.client_order_id === clientOrderId && frame.event_type === eventType;
const sequence = (socket: TestSocket) => socket.frames.filter((frame) => frame.type === 'order_event').map((frame) => `${frame.client_order_id}:${frame.event_type}`);

describe('the event bus after a quiet spell', () => {
  it('sends a new client only what happens after it connects, and a resuming one what it missed, once', async () => {
    expect(server.services.events.subscriptionsOf(user.user.id)).toBe(0);
    // Written, and announced, while nobody in this instance listens.
    await buy('quiet-1');
    await server.services.events.poll();

    const fresh = ordersChannel();
    expect((await fresh.next()).type).toBe('hello');
    await buy('quiet-2');
    await fresh.next(ofOrder('quiet-2', 'fill'));
    expect(sequence(fresh)).toEqual(['quiet-2:placed', 'quiet-2:accepted', 'quiet-2:fill']);
    await fresh.close();

    // Quiet again; then a client resumes after the first order's placed event.
    await buy('quiet-3');
    const [placed] = await server.services.db
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(and(eq(outboxEvents.userId, user.user.id), eq(outboxEvents.channel, 'orders')))
      .orderBy(asc(outboxEvents.id))
      .limit(1);
    const resumed = ordersChannel({ last_event_id: String(placed!.id) });
    expect((await resumed.next()).type).toBe('hello');
    await resumed.next(ofOrder('quiet-3', 'fill'));
    await buy('quiet-4');
    await resumed.next(ofOrder('quiet-4', 'fill'));
    expect(sequence(resumed)).toEqual([
      'quiet-1:accepted',
      'quiet-1:fill',
      'quiet-2:placed',
      'quiet-2:accepted',
      'quiet-2:fill',
      'quiet-3:placed',
      'quiet-3:accepted',
      'quiet-3:fill',
      'quiet-4:placed',
      'quiet-4:accepted',
      'quiet-4:fill',
    ]);
  });
});
