// Bounds on what a caller can make the service do: without an account, the tRPC batch cap (a
// longer batch is refused whole, before any call runs), failed logins per client address (any
// username, unknown ones included) and registrations per client address; with one, an analysis
// flood held to the per-user rate limit on every transport (queue rows and jobs included).
import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYSIS_QUEUE } from '../../server/analysis/analysis.ts';
import { manualClock } from '../../server/clock.ts';
import { rowsOf } from '../../server/db/client.ts';
import { analysisQueue, auditEvents, authThrottle, users } from '../../server/db/schema/index.ts';
import { FACTORY_PASSWORD, newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, uniqueName, type TestServer } from '../support/server.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The body of a tRPC batch over HTTP (superjson): each call's input under its index. */
const batchBody = (inputs: unknown[]) => JSON.stringify(Object.fromEntries(inputs.map((input, index) => [index, { json: input }])));

describe('tRPC batches over HTTP', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it(`refuses a batch of more than TRPC_MAX_BATCH_SIZE (50) calls whole with one 422, before any call runs`, async () => {
    expect(server.config.TRPC_MAX_BATCH_SIZE).toBe(50);
    const usernames = Array.from({ length: 51 }, () => uniqueName('batch'));
    const res = await server.http('POST', `/trpc/${usernames.map(() => 'auth.login').join(',')}?batch=1`, {
      headers: JSON_HEADERS,
      rawBody: batchBody(usernames.map((username) => ({ username, password: 'wrong-password' }))),
    });
    expect(res.status, res.text).toBe(422);
    // One error for the whole batch, not one per call.
    expect(Array.isArray(res.body)).toBe(false);
    expect(res.body.error.json.data, res.text).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422 });
    expect(res.body.error.json.message).toMatch(/batch/i);
    // No login ran: nothing audited, nothing counted.
    const { db } = server.services;
    expect(await db.select().from(authThrottle).where(inArray(authThrottle.key, usernames.map((name) => name.toLowerCase())))).toEqual([]);
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login_failed'))).toEqual([]);
  });

  it('runs a batch of exactly 50 calls, each answered', async () => {
    const res = await server.http('GET', `/trpc/${Array.from({ length: 50 }, () => 'auth.me').join(',')}?batch=1`);
    expect(Array.isArray(res.body), res.text).toBe(true);
    expect(res.body).toHaveLength(50);
    expect(res.body.every((answer: any) => answer.error?.json?.data?.domainCode === 'UNAUTHORIZED')).toBe(true);
    // The same batch plus one is refused, GET as POST.
    const over = await server.http('GET', `/trpc/${Array.from({ length: 51 }, () => 'auth.me').join(',')}?batch=1`);
    expect(over.status).toBe(422);
    expect(over.body.error.json.data.domainCode).toBe('VALIDATION_ERROR');
  });
});

// The test client stands for the proxy (TRUST_PROXY=1) and for the clients behind it: each
// request names its client address in X-Forwarded-For.
const from = (address: string) => ({ 'x-forwarded-for': address });

describe('failed logins per client address (LOGIN_MAX_FAILURES_PER_ADDRESS)', () => {
  const PER_ADDRESS = 4;
  const clock = manualClock('2026-03-09T13:30:00Z');
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_MAX_FAILURES: '3', LOGIN_MAX_FAILURES_PER_ADDRESS: String(PER_ADDRESS), TRUST_PROXY: '1' }, undefined, { clock });
  });
  afterAll(() => server.stop());

  const login = (username: string, password: string, address: string) => server.http('POST', '/api/auth/login', { body: { username, password }, headers: from(address) });
  const failedFrom = async (address: string) =>
    (await server.services.db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login_failed'))).filter((row) => row.address === address);

  it('counts every failed login from one address, unknown usernames included: new usernames buy no more guesses', async () => {
    const user = await newUser(server, { prefix: 'addr_victim' });
    for (let attempt = 0; attempt < PER_ADDRESS; attempt++) {
      expect((await login(uniqueName('nobody'), 'wrong-password', '203.0.113.10')).status).toBe(401);
    }
    const refused = await login(uniqueName('nobody'), 'wrong-password', '203.0.113.10');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // Even the right password, from that address; not from another one.
    expect((await login(user.username, FACTORY_PASSWORD, '203.0.113.10')).status).toBe(429);
    expect((await login(user.username, FACTORY_PASSWORD, '198.51.100.10')).status).toBe(200);
    // Refused attempts ran no password check: only the four are audited.
    expect(await failedFrom('203.0.113.10')).toHaveLength(PER_ADDRESS);
    // The window ends on the injected clock.
    clock.advance(15 * 60_000 + 1000);
    expect((await login(user.username, FACTORY_PASSWORD, '203.0.113.10')).status).toBe(200);
  });

  it('lets exactly the limit through of a parallel burst, and of a tRPC batch, of new usernames', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => login(uniqueName('burst'), 'wrong-password', '203.0.113.11')));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(PER_ADDRESS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - PER_ADDRESS);

    const calls = Array.from({ length: 20 }, () => ({ username: uniqueName('batched'), password: 'wrong-password' }));
    const batch = await server.http('POST', `/trpc/${calls.map(() => 'auth.login').join(',')}?batch=1`, {
      headers: { ...JSON_HEADERS, ...from('203.0.113.12') },
      rawBody: batchBody(calls),
    });
    const codes = (batch.body as any[]).map((answer) => answer.error?.json?.data?.domainCode);
    expect(codes.filter((code) => code === 'UNAUTHORIZED')).toHaveLength(PER_ADDRESS);
    expect(codes.filter((code) => code === 'RATE_LIMIT_EXCEEDED')).toHaveLength(20 - PER_ADDRESS);
    expect(await failedFrom('203.0.113.12')).toHaveLength(PER_ADDRESS);
  });

  it('a successful login gives back only its own attempt: one known account cannot wipe the address count', async () => {
    const user = await newUser(server, { prefix: 'addr_known' });
    for (let attempt = 0; attempt < PER_ADDRESS - 1; attempt++) {
      expect((await login(uniqueName('nobody'), 'wrong-password', '203.0.113.13')).status).toBe(401);
    }
    expect((await login(user.username, FACTORY_PASSWORD, '203.0.113.13')).status).toBe(200);
    // The success counted nothing and cleared nothing: one failure left, then 429.
    expect((await login(uniqueName('nobody'), 'wrong-password', '203.0.113.13')).status).toBe(401);
    expect((await login(uniqueName('nobody'), 'wrong-password', '203.0.113.13')).status).toBe(429);
  });

  it('keeps the per-username limit, and an attempt that limit refused costs the address nothing', async () => {
    const user = await newUser(server, { prefix: 'addr_user' });
    for (let attempt = 0; attempt < 3; attempt++) expect((await login(user.username, 'wrong-password', '203.0.113.14')).status).toBe(401);
    expect((await login(user.username, FACTORY_PASSWORD, '203.0.113.14')).status).toBe(429);
    // The address still has a failure to spend on another username.
    expect((await login(uniqueName('nobody'), 'wrong-password', '203.0.113.14')).status).toBe(401);
    expect((await login(user.username, FACTORY_PASSWORD, '198.51.100.14')).status).toBe(200);
  });

  it('counts an IPv6 client by its /64: rotating addresses inside it buys nothing', async () => {
    for (let attempt = 0; attempt < PER_ADDRESS; attempt++) {
      expect((await login(uniqueName('nobody'), 'wrong-password', `2001:db8:1:2::${attempt + 1}`)).status).toBe(401);
    }
    expect((await login(uniqueName('nobody'), 'wrong-password', '2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await login(uniqueName('nobody'), 'wrong-password', '2001:db8:1:3::1')).status).toBe(401);
    const [row] = await server.services.db
      .select()
      .from(authThrottle)
      .where(and(eq(authThrottle.scope, 'login_address'), eq(authThrottle.address, '2001:db8:1:2::/64')));
    expect(row?.attempts).toBe(PER_ADDRESS);
  });
});

describe('registrations per client address (REGISTER_MAX_PER_HOUR)', () => {
  const PER_HOUR = 3;
  const clock = manualClock('2026-03-09T13:30:00Z');
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ REGISTER_MAX_PER_HOUR: String(PER_HOUR), TRUST_PROXY: '1' }, undefined, { clock });
  });
  afterAll(() => server.stop());

  const registration = (prefix = 'reg') => {
    const username = uniqueName(prefix);
    return { username, email: `${username}@example.com`, password: 'password123' };
  };
  const register = (address: string, body = registration()) => server.http('POST', '/api/auth/register', { body, headers: from(address) });
  const usersNamed = (names: string[]) => server.services.db.select().from(users).where(inArray(users.username, names));

  it('answers 429 with Retry-After past the limit in an hour, creating no user; other addresses still register; the next hour opens again', async () => {
    for (let count = 0; count < PER_HOUR; count++) expect((await register('203.0.113.20')).status).toBe(201);
    const refusedBody = registration();
    const refused = await register('203.0.113.20', refusedBody);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await usersNamed([refusedBody.username])).toEqual([]);
    // Through /trpc the same limit holds: it is the domain's, not the route's.
    const viaTrpc = await server.http('POST', '/trpc/auth.register', { headers: { ...JSON_HEADERS, ...from('203.0.113.20') }, rawBody: JSON.stringify({ json: registration() }) });
    expect(viaTrpc.status).toBe(429);
    expect(viaTrpc.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect((await register('198.51.100.20')).status).toBe(201);
    clock.advance(3_600_000 + 1000);
    expect((await register('203.0.113.20')).status).toBe(201);
  });

  it('lets exactly the limit through of a parallel burst from one address', async () => {
    const bodies = Array.from({ length: 10 }, () => registration('reg_burst'));
    const answers = await Promise.all(bodies.map((body) => register('203.0.113.21', body)));
    expect(answers.filter((res) => res.status === 201)).toHaveLength(PER_HOUR);
    expect(answers.filter((res) => res.status === 429)).toHaveLength(10 - PER_HOUR);
    expect(await usersNamed(bodies.map((body) => body.username))).toHaveLength(PER_HOUR);
  });
});

describe('an analysis flood (RATE_LIMIT_ANALYSES_PER_MIN, 5 a minute per user) on every transport', () => {
  const FLOOD = 20;
  // The clock stands still: the bucket refills nothing during the test.
  const clock = manualClock('2026-03-10T15:00:00Z');
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ WORKERS_IN_PROCESS: 'false' }, undefined, { clock });
  });
  afterAll(() => server.stop());

  const request = { symbol: 'AAPL', mode: 'quick' };
  const auth = (user: FactoryUser) => ({ authorization: `Bearer ${user.tokens.access_token}` });
  const viaRest = (user: FactoryUser) => server.http('POST', '/api/equity/analyze', { token: user.tokens.access_token, body: request });
  const viaTrpc = (user: FactoryUser) => server.http('POST', '/trpc/analysis.analyze', { headers: { ...JSON_HEADERS, ...auth(user) }, rawBody: JSON.stringify({ json: request }) });
  const viaBatch = (user: FactoryUser, calls: number) =>
    server.http('POST', `/trpc/${Array.from({ length: calls }, () => 'analysis.analyze').join(',')}?batch=1`, {
      headers: { ...JSON_HEADERS, ...auth(user) },
      rawBody: batchBody(Array.from({ length: calls }, () => request)),
    });
  /** The domain code of each answer: null for a success. */
  const codesOf = (answers: { body: any }[]) => answers.map(({ body }) => body?.code ?? body?.error?.json?.data?.domainCode ?? null);
  const batchCodes = (res: { body: any }) => (res.body as any[]).map((answer) => answer.error?.json?.data?.domainCode ?? null);
  const queuedFor = async (user: FactoryUser) => ({
    rows: (await server.services.db.select().from(analysisQueue).where(eq(analysisQueue.userId, user.user.id))).length,
    jobs: (
      await rowsOf<{ id: string }>(server.services.db, sql`select id from pgboss.job where name = ${ANALYSIS_QUEUE} and (data->>'userId')::integer = ${user.user.id}`)
    ).length,
  });
  const expectFive = (codes: (string | null)[]) => {
    expect(codes.filter((code) => code === null)).toHaveLength(5);
    expect(codes.filter((code) => code === 'RATE_LIMIT_EXCEEDED')).toHaveLength(codes.length - 5);
  };

  it.each([
    ['REST', async (user: FactoryUser) => codesOf(await Promise.all(Array.from({ length: FLOOD }, () => viaRest(user))))],
    ['single tRPC calls', async (user: FactoryUser) => codesOf(await Promise.all(Array.from({ length: FLOOD }, () => viaTrpc(user))))],
    ['one tRPC batch', async (user: FactoryUser) => batchCodes(await viaBatch(user, FLOOD))],
  ])('%s: 5 of 20 queued, the rest 429; 5 queue rows and 5 jobs', async (_transport, flood) => {
    expect(server.config.RATE_LIMIT_ANALYSES_PER_MIN).toBe(5);
    const user = await newUser(server, { prefix: 'an_flood' });
    expectFive(await flood(user));
    expect(await queuedFor(user)).toEqual({ rows: 5, jobs: 5 });
  });

  it('one bucket per user across the transports at once', async () => {
    const user = await newUser(server, { prefix: 'an_mixed' });
    const [rest, single, batch] = await Promise.all([
      Promise.all(Array.from({ length: 7 }, () => viaRest(user))),
      Promise.all(Array.from({ length: 7 }, () => viaTrpc(user))),
      viaBatch(user, 7),
    ]);
    expectFive([...codesOf(rest), ...codesOf(single), ...batchCodes(batch)]);
    expect(await queuedFor(user)).toEqual({ rows: 5, jobs: 5 });
    // A refusal through tRPC carries Retry-After as REST does.
    const over = await viaTrpc(user);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });
});
