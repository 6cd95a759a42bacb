// A paper order whose placement loses the database (DESIGN §8): the simulator's one transaction
// committed whole or not at all, so the order is either this request's answer or absent, and the
// client's retry with the same client order id gives one order. The broker seam throws the
// error a lost connection gives; runs on PGlite and PostgreSQL alike.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailableError } from '../../server/db/errors.ts';
import { orders, simOrders } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  const admin = await newUser(server, { role: 'admin', prefix: 'dbu_admin' });
  const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } });
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.stop());

const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `${prefix}-key-${process.pid}`, api_secret: 's' } });
  expect(res.status, res.text).toBe(201);
  return user;
};
const place = (user: FactoryUser, clientOrderId: string) =>
  server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: clientOrderId } });
/** The connection error a placement sees when its connection breaks (what the driver gives, marked as the database's). */
const connectionLost = () => new DatabaseUnavailableError(Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }));
/** The simulator, whose in-books placement the order service's paper orders go through. */
const books = () => server.services.simulator;
const rowsOf = async (user: FactoryUser, clientOrderId: string) => ({
  ours: await server.services.db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, clientOrderId))),
  theirs: await server.services.db.select().from(simOrders).where(and(eq(simOrders.userId, user.user.id), eq(simOrders.clientOrderId, clientOrderId))),
});

describe('a paper order whose placement loses the database', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when nothing committed, writes nothing, and the retry places one order', async () => {
    const user = await trader('dbu_none');
    vi.spyOn(books(), 'placeInBooks').mockRejectedValueOnce(connectionLost());
    const lost = await place(user, 'dbu-none-1');
    expect(lost.status, lost.text).toBe(503);
    expect(lost.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(Number(lost.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await rowsOf(user, 'dbu-none-1')).toEqual({ ours: [], theirs: [] });

    const retried = await place(user, 'dbu-none-1');
    expect(retried.status, retried.text).toBe(201);
    const { ours, theirs } = await rowsOf(user, 'dbu-none-1');
    expect(ours).toHaveLength(1);
    expect(theirs.map((row) => row.id)).toEqual([retried.body.broker_order_id]);
  });

  it('answers with the order when its transaction committed before the connection broke, and a retry replays it', async () => {
    const user = await trader('dbu_done');
    const placeForReal = books().placeInBooks.bind(books());
    vi.spyOn(books(), 'placeInBooks').mockImplementationOnce(async (account, request, steps) => {
      await placeForReal(account, request, steps);
      throw connectionLost();
    });
    const answered = await place(user, 'dbu-done-1');
    expect(answered.status, answered.text).toBe(201);
    const retried = await place(user, 'dbu-done-1');
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body.broker_order_id).toBe(answered.body.broker_order_id);
    const { ours, theirs } = await rowsOf(user, 'dbu-done-1');
    expect(ours.map((row) => row.brokerOrderId)).toEqual([answered.body.broker_order_id]);
    expect(theirs.map((row) => row.id)).toEqual([answered.body.broker_order_id]);
  });
});
