// The security checks every operation of the router must pass, run over the routes themselves
// (so a new route is covered the day it is added): no token, a refresh token in place of an
// access token, the wrong role, the halt switch, and another user's resource.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertReport } from '../../server/analysis/queries.ts';
import { insertResult, insertSweep } from '../../server/backtest/queries.ts';
import { restRoutesOf, type RestRoute } from '../../server/http/routes.ts';
import { appRouter } from '../../server/routers/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer, type TestUser } from '../support/server.ts';

const routes = restRoutesOf(appRouter, '/api');
/** A user id that no test creates: path parameters point nowhere, so no check changes data. */
const NOWHERE = 2_147_483_000;
const pathOf = (route: RestRoute, id: number | string = NOWHERE) => route.template.replace(/\{[^}]+\}/g, String(id));
const isAdminRoute = (route: RestRoute) => route.procedure.startsWith('admin.');

/**
 * Routes whose path names a resource a user owns, and how to make one for an owner (returning its
 * path id). The cross-user check below runs over these, and a test fails while a non-admin route
 * with a path parameter is missing here.
 */
let keyCount = 0;
const ownedKey = async (server: TestServer, owner: TestUser) => {
  const key = await server.services.keys.create({
    user: { id: owner.user.id },
    input: { asset_class: 'crypto', exchange: 'crypto_exchange', api_key: `route-security-key-${process.pid}-${++keyCount}`, api_secret: 'route-security-secret', paper_mode: true, label: 'default', permissions: 'trade_only' },
    origin: { requestId: 'test', address: '127.0.0.1' },
  });
  return String(key.id);
};

/** An order of the owner, resting at the simulator; its routes need the asset class in the query. */
const ownedOrder = async (server: TestServer, owner: TestUser) => {
  await ownedKey(server, owner);
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  const order = await server.services.orders.place({
    user: { id: owner.user.id },
    request: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc', live_mode: false },
    origin: { requestId: 'test', address: '127.0.0.1' },
  });
  return { id: order.broker_order_id, query: '?asset_class=crypto', body: { asset_class: 'crypto', qty: 0.002 } };
};

/** A BTC position of the owner; the caller gets a key of its own, so that it is asked about its own (absent) position. */
let callerHasKey = false;
const ownedPosition = async (server: TestServer, owner: TestUser) => {
  if (!callerHasKey) {
    await ownedKey(server, user);
    callerHasKey = true;
  }
  await ownedKey(server, owner);
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
  await server.services.orders.place({
    user: { id: owner.user.id },
    request: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', time_in_force: 'gtc', live_mode: false },
    origin: { requestId: 'test', address: '127.0.0.1' },
  });
  await server.services.simulator.idle();
  return { id: 'BTC-USDT', query: '?asset_class=crypto' };
};

/** A stored backtest result of the owner, of one asset class, written as the service stores one. */
const ownedBacktest = (assetClass: 'us_equity' | 'crypto') => async (server: TestServer, owner: TestUser) => {
  const id = randomUUID();
  await insertResult(server.services.db, {
    id,
    userId: owner.user.id,
    assetClass,
    symbol: assetClass === 'crypto' ? 'BTC/USDT' : 'AAPL',
    strategyName: 'buy_and_hold',
    strategyParams: { size: 1 },
    profileName: assetClass === 'crypto' ? 'crypto_default' : 'us_broker_zero',
    currency: assetClass === 'crypto' ? 'USDT' : 'USD',
    startDate: '2024-01-01',
    endDate: '2024-12-31',
    totalReturnPct: 0,
    sharpeRatio: 0,
    maxDrawdownPct: 0,
    winRate: 0,
    totalTrades: 0,
    result: {},
    createdAt: server.services.clock.now(),
  });
  return id;
};

const ownedReport = async (server: TestServer, owner: TestUser) => {
  const id = randomUUID();
  const at = server.services.clock.now();
  await insertReport(server.services.db, { id, userId: owner.user.id, assetClass: 'us_equity', symbol: 'AAPL', mode: 'quick', status: 'done', provider: 'heuristic', model: 'heuristic-rules', promptVersion: 'test', requestedAt: at });
  return id;
};

/** The owner's session (refresh-token family), as GET /api/auth/sessions names it. */
const ownedSession = async (server: TestServer, owner: TestUser) => {
  const listed = await server.http('GET', '/api/auth/sessions', { token: owner.tokens.access_token });
  return (listed.body.items as { id: string }[])[0]!.id;
};

const OWNED: Record<string, (server: TestServer, owner: TestUser) => Promise<string | { id: string; query: string; body?: unknown }>> = {
  'auth.revokeSession': ownedSession,
  'analysis.getReport': ownedReport,
  'analysis.reportTraces': ownedReport,
  'analysis.deleteReport': ownedReport,
  'equity.replaceOrder': ownedOrder,
  'equity.closePosition': ownedPosition,
  'exchangeKeys.update': ownedKey,
  'exchangeKeys.remove': ownedKey,
  'equity.getOrder': ownedOrder,
  'equity.cancelOrder': ownedOrder,
  'backtest.equity.get': ownedBacktest('us_equity'),
  'backtest.crypto.get': ownedBacktest('crypto'),
  'backtest.getSweep': async (server: TestServer, owner: TestUser) => {
    const id = randomUUID();
    await insertSweep(server.services.db, { id, userId: owner.user.id, assetClass: 'us_equity', symbol: 'AAPL', strategyName: 'sma_crossover', result: {}, createdAt: server.services.clock.now() });
    return id;
  },
};

let server: TestServer;
let user: FactoryUser;
let admin: FactoryUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await newUser(server, { prefix: 'sec_user' });
  admin = await newUser(server, { role: 'admin', prefix: 'sec_admin' });
});
afterAll(() => server.stop());

const call = (route: RestRoute, opts: { token?: string; id?: number | string; query?: string; body?: unknown } = {}) =>
  server.http(route.method, `${pathOf(route, opts.id)}${opts.query ?? ''}`, { token: opts.token, body: route.readsBody ? (opts.body ?? {}) : undefined });

describe.each(routes.map((route) => [`${route.method} ${route.template}`, route] as const))('%s', (_name, route) => {
  it.runIf(route.meta.openapi.protect)('answers 401 with WWW-Authenticate without a token, with a refresh token, and with a garbage one', async () => {
    for (const token of [undefined, user.tokens.refresh_token, 'not-a-jwt']) {
      const res = await call(route, { token });
      expect(res.status, res.text).toBe(401);
      expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it.runIf(!route.meta.openapi.protect)('is public: no token is asked for', async () => {
    expect((await call(route)).status).not.toBe(401);
  });

  it.runIf(isAdminRoute(route))('answers 403 FORBIDDEN to a regular user', async () => {
    const res = await call(route, { token: user.tokens.access_token });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('while halted', () => {
  it('every route answers 503 SERVICE_HALTED but the exempt ones, which still answer an admin', async () => {
    await server.services.halt.set({ halted: true, actor: admin.auth, origin: { requestId: 'test', address: '127.0.0.1' } });
    try {
      for (const route of routes) {
        const res = await call(route, { token: route.meta.haltExempt ? admin.tokens.access_token : user.tokens.access_token });
        if (route.meta.haltExempt) expect(res.status, `${route.template}: ${res.text}`).not.toBe(503);
        else expect(res.body, `${route.method} ${route.template}`).toMatchObject({ code: 'SERVICE_HALTED', status: 503 });
      }
    } finally {
      await server.services.halt.set({ halted: false, actor: admin.auth, origin: { requestId: 'test', address: '127.0.0.1' } });
    }
  });
});

describe("another user's resource", () => {
  it('every user-facing route with a path parameter has an ownership fixture', () => {
    const parameterised = routes.filter((route) => route.paramNames.length > 0 && !isAdminRoute(route)).map((route) => route.procedure);
    expect(parameterised.filter((procedure) => !OWNED[procedure])).toEqual([]);
  });

  const owned = routes.filter((route) => OWNED[route.procedure]);
  it.runIf(owned.length > 0).each(owned.map((route) => [`${route.method} ${route.template}`, route] as const))('%s answers 404 as for a missing one', async (_name, route) => {
    const owner = await newUser(server, { prefix: 'sec_owner' });
    const made = await OWNED[route.procedure]!(server, owner);
    const { id, query, body } = typeof made === 'string' ? { id: made, query: '', body: undefined } : made;
    const foreign = await call(route, { token: user.tokens.access_token, id, query, body });
    const missing = await call(route, { token: user.tokens.access_token, query, body });
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body, message: undefined }).toEqual({ ...missing.body, message: undefined });
  });
});
