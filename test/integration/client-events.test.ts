// The client's real-time half against the running server: tRPC subscriptions over /trpc's
// WebSocket (hello, then tracked order events), and followOrders across a server restart: it
// reconnects by itself, resumes after its last event and backfills through GET /api/equity/orders.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTradingClient, type TChannelState, type TOrderEventFrame, type TOrderList } from '../../client/index.ts';
import type { TOrdersFrame } from '../../contracts/events.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, dataDirFromTemplate, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

let server: TestServer;
let admin: FactoryUser;
let keyCount = 0;
const dataDir = dataDirFromTemplate();

const env = { SIM_TICK_INTERVAL_MS: '0', RATE_LIMIT_ORDERS_PER_MIN: '1000', AUTH_SECRET_KEY: 'client-events-secret-key-0123456789', ENCRYPTION_SALT: 'client-events-salt-0123456789' };

beforeAll(async () => {
  // The restart test needs a DATA_DIR and database of its own that outlive one server.
  server = await startTestServer(env, { dataDir, databaseUrl: process.env.DATABASE_URL ? await databaseFor() : '' });
  admin = await newUser(server, { role: 'admin', prefix: 'cev_admin' });
  const price = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(price.status, price.text).toBe(200);
});
afterAll(async () => {
  await server?.stop();
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

let dropDatabase: (() => Promise<void>) | undefined;
const databaseFor = async () => {
  const { createTestDatabase } = await import('../support/server.ts');
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  return database.url;
};

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `cev-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const buy = (user: FactoryUser, clientOrderId: string) =>
  server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: clientOrderId } });
const until = <T>(probe: () => T, accept: (value: T) => boolean, ms = 15_000) => waitFor(() => Promise.resolve(probe()), accept, ms);

describe('tRPC subscriptions over WebSocket', () => {
  it('events.orders sends hello, then the order events with their ids', async () => {
    const user = await trader('cev_sub');
    const client = createTradingClient({ url: server.url, token: user.tokens.access_token });
    const received: { id: string | undefined; frame: TOrdersFrame }[] = [];
    const subscription = client.trpc.events.orders.subscribe(undefined, {
      onData: (value) => {
        if ('type' in value) received.push({ id: undefined, frame: value });
        else received.push({ id: value.id, frame: value.data });
      },
    });
    try {
      await until(() => received.length, (n) => n >= 1);
      expect(received[0]!.frame).toEqual({ type: 'hello', asset_classes: ['crypto'], user_id: user.user.id });
      expect((await buy(user, 'cev-sub-1')).status).toBe(201);
      await until(() => received.length, (n) => n >= 4);
      expect(received.slice(1).map(({ frame }) => (frame.type === 'order_event' ? frame.event_type : frame.type))).toEqual(['placed', 'accepted', 'fill']);
      for (const { id, frame } of received.slice(1)) expect(frame.type === 'order_event' && frame.event_id).toBe(id);
    } finally {
      subscription.unsubscribe();
      await client.close();
    }
  });

  it('refuses a subscription without a token (UNAUTHORIZED)', async () => {
    const client = createTradingClient({ url: server.url });
    const error = await new Promise<unknown>((resolve) => {
      const subscription = client.trpc.events.orders.subscribe(undefined, { onError: (err) => (subscription.unsubscribe(), resolve(err)) });
    });
    await client.close();
    expect(error).toMatchObject({ data: { domainCode: 'UNAUTHORIZED' } });
  });
});

describe('followOrders', () => {
  it('comes back after a server restart by itself, resumes after its last event and backfills', async () => {
    const user = await trader('cev_follow');
    const client = createTradingClient({ url: server.url, token: user.tokens.access_token });
    const events: TOrderEventFrame[] = [];
    const backfills: TOrderList[] = [];
    const states: TChannelState[] = [];
    const follow = client.followOrders({ onEvent: (event) => events.push(event), onBackfill: (_assetClass, orders) => backfills.push(orders), onState: (state) => states.push(state) });
    try {
      await until(() => backfills.length, (n) => n >= 1);
      expect((await buy(user, 'cev-follow-1')).status).toBe(201);
      await until(() => events.length, (n) => n >= 3);

      // The server goes away and comes back on the same port.
      const port = server.port;
      await server.stop();
      server = await startTestServer({ ...env, PORT: String(port) }, { dataDir, databaseUrl: server.databaseUrl });
      await until(() => backfills.length, (n) => n >= 2);
      expect(states).toContain('waiting');
      expect(backfills[1]!.items.map((order) => order.client_order_id)).toContain('cev-follow-1');
      expect((await buy(user, 'cev-follow-2')).status).toBe(201);
      await until(() => events.length, (n) => n >= 6);
      // Each event once, in order, across the restart.
      expect(events.map((event) => `${event.client_order_id}:${event.event_type}`)).toEqual([
        'cev-follow-1:placed',
        'cev-follow-1:accepted',
        'cev-follow-1:fill',
        'cev-follow-2:placed',
        'cev-follow-2:accepted',
        'cev-follow-2:fill',
      ]);
    } finally {
      follow.close();
      await client.close();
    }
  });
});
