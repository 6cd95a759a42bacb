// The security checks every operation of the router must pass, run over the routes themselves
// (so a new route is covered the day it is added): no token, a refresh token in place of an
// access token, the wrong role, the halt switch, another user's resource, and text the database
// cannot store in any parameter or string of a body.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertReport } from '../../server/analysis/queries.ts';
import { insertResult, insertSweep } from '../../server/backtest/queries.ts';
import { restRoutesOf, type RestRoute } from '../../server/http/routes.ts';
import { botRuns } from '../../server/db/schema/index.ts';
import { appRouter } from '../../server/routers/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { badValuesFor, describePath, inputTextsOf, placeAt, topLevelFieldsOf } from '../support/input-strings.ts';
import { startTestServer, type TestServer, type TestUser } from '../support/server.ts';
import { insertChannel } from '../../server/notifications/queries.ts';

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

/** A run of the owner's bot, as a start writes it. */
const ownedBotRun = async (server: TestServer, owner: TestUser) => {
  const runId = randomUUID().slice(0, 12);
  await server.services.db.insert(botRuns).values({
    userId: owner.user.id,
    runId,
    assetClass: 'crypto',
    symbols: ['BTC/USDT'],
    strategyName: 'sma_crossover',
    strategyParams: { fast: 2, slow: 4 },
    liveMode: false,
    timeframe: '1m',
    startedAt: server.services.clock.now(),
  });
  return runId;
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

/** The owner's notification channel, inserted as a row (its destination is never reached here). */
const ownedChannel = async (server: TestServer, owner: TestUser) => {
  const id = randomUUID();
  await insertChannel(server.services.db, { id, userId: owner.user.id, name: 'owned', kind: 'slack', targetEnc: 'v1:not:a:target', events: ['fill'], createdAt: server.services.clock.now() });
  return { id, query: '', body: { enabled: false } };
};
/** The owner's signal webhook. */
const ownedWebhook = async (server: TestServer, owner: TestUser) =>
  (await server.services.signals.webhooks.create({ user: { id: owner.user.id }, origin: { requestId: 'test', address: '127.0.0.1' }, liveAllowed: true, input: { name: 'owned', asset_class: 'crypto', mode: 'paper', max_lag_sec: 120 } })).id;

const OWNED: Record<string, (server: TestServer, owner: TestUser) => Promise<string | { id: string; query: string; body?: unknown }>> = {
  'auth.revokeSession': ownedSession,
  'auth.revokeApiKey': async (server: TestServer, owner: TestUser) =>
    (await server.services.apiKeys.create({ user: { id: owner.user.id }, input: { name: 'owned', scopes: ['read'] }, origin: { requestId: 'test', address: '127.0.0.1' } })).id,
  'signals.rotateWebhook': ownedWebhook,
  'signals.removeWebhook': ownedWebhook,
  'analysis.getReport': ownedReport,
  'analysis.reportTraces': ownedReport,
  'analysis.deleteReport': ownedReport,
  'equity.replaceOrder': ownedOrder,
  'equity.closePosition': ownedPosition,
  'exchangeKeys.update': ownedKey,
  'exchangeKeys.remove': ownedKey,
  'equity.getOrder': ownedOrder,
  'equity.cancelOrder': ownedOrder,
  'bot.drift': ownedBotRun,
  'notifications.update': ownedChannel,
  'notifications.remove': ownedChannel,
  'notifications.test': ownedChannel,
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

describe('text the database cannot store', () => {
  // The fuzzer's case, over every route: a NUL in each path and query parameter, and a NUL or a
  // lone surrogate (JSON's "\ud800" escape; a URL cannot carry one) in every string of a body at
  // any depth, record keys and free-form values included. Places come from the input schema, so
  // a new route or field is covered at once. An admin passes every auth check, so each request
  // reaches its input schema: the answer is 422 naming the field, never a 500 from the database.
  const NUL = '\u0000';
  const LONE_SURROGATE = '\ud800';
  type ProcedureDef = { type: string; inputs: unknown[] };
  const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: ProcedureDef }>).map(([name, procedure]) => [name, procedure._def] as const);
  const procedureDef = (name: string) => procedures.find(([procedure]) => procedure === name)![1];

  interface Probe {
    what: string;
    path: string;
    body?: unknown;
    /** The field the 422 must name (an error inside it, `bars.0.date`, names it too). */
    field: string;
  }

  const probesOf = (route: RestRoute): Probe[] => {
    const inputs = procedureDef(route.procedure).inputs;
    const at = (overrides: Record<string, string>) => route.template.replace(/\{([^}]+)\}/g, (_, name: string) => overrides[name] ?? String(NOWHERE));
    const emptyBody = route.readsBody ? {} : undefined;
    const probes: Probe[] = route.paramNames.map((name) => ({ what: `path ${name}`, path: at({ [name]: '%00' }), body: emptyBody, field: name }));
    if (!route.readsBody) {
      const fields = inputs.flatMap(topLevelFieldsOf).filter((name) => !route.paramNames.includes(name));
      probes.push(...fields.map((name) => ({ what: `query ${name}`, path: `${at({})}?${name}=%00`, field: name })));
      return probes;
    }
    const places = inputs.flatMap((input) => inputTextsOf(input).texts);
    // A field that takes no text (an enum, a flag, a number) gets a NUL all the same, as a URL's parameters do.
    const textless = inputs.flatMap(topLevelFieldsOf).filter((name) => !route.paramNames.includes(name) && !places.some(({ path: [first] }) => first && 'field' in first && first.field === name));
    probes.push(...textless.map((name) => ({ what: `body ${name} = NUL`, path: at({}), body: { [name]: NUL }, field: name })));
    for (const place of places) {
      const first = place.path[0];
      if (first && 'field' in first && route.paramNames.includes(first.field)) continue;
      for (const [name, bad] of [['NUL', NUL], ['lone surrogate', LONE_SURROGATE]] as const) {
        for (const leaf of badValuesFor(place.kind, bad)) {
          const { value, errorPath } = placeAt(place.path, leaf, bad);
          probes.push({ what: `body ${describePath(place.path)} = ${name} ${JSON.stringify(leaf)}`, path: at({}), body: value, field: errorPath });
        }
      }
    }
    return probes;
  };

  /** How an answer falls short of 422 VALIDATION_ERROR naming `field`; undefined when it is one. */
  const shortfall = (status: number, code: unknown, errors: unknown, field: string): string | undefined => {
    const paths = Array.isArray(errors) ? errors.map((error: { path?: unknown }) => String(error.path)) : [];
    if (status === 422 && code === 'VALIDATION_ERROR' && paths.some((path) => path === field || path.startsWith(`${field}.`))) return undefined;
    return `${status} ${String(code)} ${JSON.stringify(errors)}`;
  };

  const withInput = routes.filter((route) => !route.takesNoInput);
  it('probes every route that takes input, parameters and bodies alike', () => {
    expect(withInput.length).toBeGreaterThan(40);
    expect(withInput.filter((route) => probesOf(route).length === 0).map((route) => route.template)).toEqual([]);
  });

  it.each(withInput.map((route) => [`${route.method} ${route.template}`, route] as const))('%s answers 422 naming the field', async (_name, route) => {
    const problems: string[] = [];
    for (const probe of probesOf(route)) {
      const res = await server.http(route.method, probe.path, { token: admin.tokens.access_token, body: probe.body });
      const problem = shortfall(res.status, res.body?.code, res.body?.errors, probe.field);
      if (problem) problems.push(`${probe.what}: ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  it('/trpc answers 422 naming the field too, for every query and mutation', async () => {
    const problems: string[] = [];
    let probes = 0;
    for (const [name, def] of procedures) {
      if (def.type === 'subscription') continue;
      for (const place of def.inputs.flatMap((input) => inputTextsOf(input).texts)) {
        for (const bad of [NUL, LONE_SURROGATE]) {
          for (const leaf of badValuesFor(place.kind, bad)) {
            const { value, errorPath } = placeAt(place.path, leaf, bad);
            const input = JSON.stringify({ json: value });
            const res =
              def.type === 'query'
                ? await server.http('GET', `/trpc/${name}?input=${encodeURIComponent(input)}`, { token: admin.tokens.access_token })
                : await server.http('POST', `/trpc/${name}`, { token: admin.tokens.access_token, rawBody: input, headers: { 'content-type': 'application/json' } });
            const data = res.body?.error?.json?.data;
            const problem = shortfall(res.status, data?.domainCode, data?.errors, errorPath);
            if (problem) problems.push(`${name} ${describePath(place.path)} ${JSON.stringify(leaf)}: ${problem}`);
            probes++;
          }
        }
      }
    }
    expect(probes).toBeGreaterThan(200);
    expect(problems).toEqual([]);
  });
});
