// Token attacks against the authenticated routes, immediate effect of deactivation, secret
// rotation, and what the logs must never hold. Every rejection is the same 401 envelope.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../server/app.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/observability/logger.ts';
import {
  adminEnv,
  createTestDatabase,
  dataDirFromTemplate,
  loginAdmin,
  registerAndLogin,
  startTestServer,
  uniqueName,
  type HttpResult,
  type TestServer,
} from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(adminEnv);
});
afterAll(() => server.stop());

const OTHER_SECRET = 'an-entirely-different-signing-secret-0123456789';

const keyOf = (secret: string) => new TextEncoder().encode(secret);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
const nowSec = () => Math.floor(Date.now() / 1000);

/** Claims the server itself would put in an access token for `sub`. */
const accessClaims = (sub: string, overrides: JWTPayload = {}): JWTPayload => ({
  sub,
  type: 'access',
  ver: 0,
  jti: randomUUID(),
  iat: nowSec(),
  exp: nowSec() + 600,
  ...overrides,
});

const sign = (claims: JWTPayload, { alg = 'HS256', secret = server.config.AUTH_SECRET_KEY } = {}) =>
  new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(keyOf(secret));

const expectUnauthorized = (res: HttpResult) => {
  expect(res.status, res.text).toBe(401);
  expect(res.body).toEqual({ code: 'UNAUTHORIZED', status: 401, message: expect.any(String) });
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
};

const me = (token: string, target: TestServer = server) => target.http('GET', '/api/auth/me', { token });
const refresh = (refreshToken: string, target: TestServer = server) =>
  target.http('POST', '/api/auth/refresh', { body: { refresh_token: refreshToken } });

describe('forged and tampered tokens', () => {
  it('control: a token built here with the real secret, HS256 and full claims is accepted', async () => {
    // Proves the rejections below come from the one thing each test changes.
    const { user } = await registerAndLogin(server, 'sec_ctl');
    const res = await me(await sign(accessClaims(String(user.id))));
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).toBe(user.id);
  });

  it('rejects an unsigned alg "none" token for a real user', async () => {
    const { user, tokens } = await registerAndLogin(server, 'sec_none');
    for (const alg of ['none', 'None', 'NONE']) {
      const unsigned = `${b64url({ alg, typ: 'JWT' })}.${b64url(accessClaims(String(user.id)))}.`;
      expectUnauthorized(await me(unsigned));
    }
    // The same trick on a refresh token, claims copied from a real one.
    const refreshUnsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${tokens.refresh_token.split('.')[1]}.`;
    expectUnauthorized(await refresh(refreshUnsigned));
    // Header swapped to none, real signature left on.
    const [, payload, signature] = tokens.access_token.split('.');
    expectUnauthorized(await me(`${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`));
  });

  it('rejects a token signed with a different secret, at /me and at /refresh', async () => {
    const { user, tokens } = await registerAndLogin(server, 'sec_other');
    expectUnauthorized(await me(await sign(accessClaims(String(user.id)), { secret: OTHER_SECRET })));
    const forgedRefresh = await sign(decode(tokens.refresh_token), { secret: OTHER_SECRET });
    expectUnauthorized(await refresh(forgedRefresh));
    // The rejected forgery had no side effect on the real session.
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it.each(['HS384', 'HS512'])('rejects a token signed with %s even with the real secret', async (alg) => {
    const { user, tokens } = await registerAndLogin(server, 'sec_alg');
    expectUnauthorized(await me(await sign(accessClaims(String(user.id)), { alg })));
    expectUnauthorized(await refresh(await sign(decode(tokens.refresh_token), { alg })));
  });

  it('rejects an expired access token with otherwise valid claims', async () => {
    const { user } = await registerAndLogin(server, 'sec_exp');
    const expired = await sign(accessClaims(String(user.id), { iat: nowSec() - 3600, exp: nowSec() - 1800 }));
    expectUnauthorized(await me(expired));
  });

  it.each(['exp', 'iat', 'jti', 'sub', 'type'])('rejects a correctly signed access token without %s', async (claim) => {
    const { user } = await registerAndLogin(server, 'sec_claim');
    const claims = accessClaims(String(user.id));
    delete claims[claim];
    expectUnauthorized(await me(await sign(claims)));
  });

  it('rejects a refresh token used as an access token, and an access token used to refresh', async () => {
    const { tokens } = await registerAndLogin(server, 'sec_type');
    expectUnauthorized(await me(tokens.refresh_token));
    expectUnauthorized(await refresh(tokens.access_token));
    // Both tokens still do their own job.
    expect((await me(tokens.access_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it('rejects a correctly signed token whose type is neither access nor refresh', async () => {
    const { user } = await registerAndLogin(server, 'sec_type2');
    expectUnauthorized(await me(await sign(accessClaims(String(user.id), { type: 'admin' }))));
  });

  it("rejects a real token whose sub was changed to another user's id, signature kept", async () => {
    const alice = await registerAndLogin(server, 'sec_alice');
    const bob = await registerAndLogin(server, 'sec_bob');
    const [header, , signature] = alice.tokens.access_token.split('.');
    const tampered = `${header}.${b64url({ ...decode(alice.tokens.access_token), sub: String(bob.user.id) })}.${signature}`;
    expectUnauthorized(await me(tampered));
    const [rHeader, , rSignature] = alice.tokens.refresh_token.split('.');
    const tamperedRefresh = `${rHeader}.${b64url({ ...decode(alice.tokens.refresh_token), sub: String(bob.user.id) })}.${rSignature}`;
    expectUnauthorized(await refresh(tamperedRefresh));
  });

  it('rejects a correctly signed token for a user id that does not exist', async () => {
    expectUnauthorized(await me(await sign(accessClaims('2000000000'))));
  });

  it('rejects a correctly signed token whose sub is not a canonical positive integer', async () => {
    const { user } = await registerAndLogin(server, 'sec_sub');
    const id = String(user.id);
    // Several of these read as the real id under a loose number parse.
    for (const sub of ['abc', '', '0', '-1', `${id}.0`, `0${id}`, ` ${id}`, `${id} `, '1e0', `0x${user.id.toString(16)}`, 'null']) {
      expectUnauthorized(await me(await sign(accessClaims(sub))));
    }
    // sub as a JSON number rather than a string.
    expectUnauthorized(await me(await sign({ ...accessClaims(id), sub: user.id } as unknown as JWTPayload)));
  });
});

describe('deactivation', () => {
  it("ends a user's unexpired access and refresh tokens at once; after activation the user can log in again", async () => {
    const victim = await registerAndLogin(server, 'sec_deact');
    const second = await server.http('POST', '/api/auth/login', { body: { username: victim.username, password: victim.password } });
    expect(second.status).toBe(200);
    // The user is cached as active by now.
    expect((await me(victim.tokens.access_token)).status).toBe(200);

    const admin = await loginAdmin(server);
    const deactivated = await server.http('POST', `/api/admin/users/${victim.user.id}/deactivate`, { token: admin.access_token });
    expect(deactivated.status, deactivated.text).toBe(200);

    expectUnauthorized(await me(victim.tokens.access_token));
    expectUnauthorized(await me(second.body.access_token));
    expectUnauthorized(await refresh(victim.tokens.refresh_token));
    expectUnauthorized(await refresh(second.body.refresh_token));

    const activated = await server.http('POST', `/api/admin/users/${victim.user.id}/activate`, { token: admin.access_token });
    expect(activated.status, activated.text).toBe(200);
    const login = await server.http('POST', '/api/auth/login', { body: { username: victim.username, password: victim.password } });
    expect(login.status, login.text).toBe(200);
    expect((await me(login.body.access_token)).status).toBe(200);
    expect((await refresh(login.body.refresh_token)).status).toBe(200);
    // Sessions ended by the deactivation stay ended.
    expectUnauthorized(await refresh(victim.tokens.refresh_token));
  });

  it('takes effect on the very next request of the same instance, every time, and activation revives no token', async () => {
    // The instance caches users; it must not wait for its own change notification to drop one.
    // One round can pass by luck while that notification races the response, so repeat.
    const victim = await registerAndLogin(server, 'sec_deact_race');
    const admin = await loginAdmin(server);
    const outcomes: string[] = [];
    let token = victim.tokens.access_token;
    for (let round = 0; round < 25; round++) {
      expect((await me(token)).status).toBe(200);
      expect((await server.http('POST', `/api/admin/users/${victim.user.id}/deactivate`, { token: admin.access_token })).status).toBe(200);
      const afterDeactivate = (await me(token)).status;
      expect((await server.http('POST', `/api/admin/users/${victim.user.id}/activate`, { token: admin.access_token })).status).toBe(200);
      const afterActivate = (await me(token)).status;
      outcomes.push(`${afterDeactivate}/${afterActivate}`);
      token = (await server.services.auth.issueSession({ user: (await server.services.users.get(victim.user.id))! })).access_token;
    }
    expect(outcomes).toEqual(Array.from({ length: 25 }, () => '401/401'));
  });
});

describe('changing AUTH_SECRET_KEY', () => {
  it('a token signed with a previous secret is rejected', async () => {
    const { user } = await registerAndLogin(server, 'sec_oldkey');
    expectUnauthorized(await me(await sign(accessClaims(String(user.id)), { secret: `previous-${server.config.AUTH_SECRET_KEY}` })));
  });

  it('restarting on the same database with a new secret invalidates every issued token', async () => {
    const first = await startTestServer({ AUTH_SECRET_KEY: 'first-signing-secret-for-this-test-0123456789' });
    let second: TestServer | undefined;
    try {
      const { tokens, username, password, user } = await registerAndLogin(first, 'sec_rotate');
      // Stop without dropping the database, then start on it again with another secret.
      await first.close();
      second = await startTestServer(
        { AUTH_SECRET_KEY: 'second-signing-secret-for-this-test-9876543210' },
        { dataDir: first.dataDir, databaseUrl: first.databaseUrl },
      );
      expectUnauthorized(await me(tokens.access_token, second));
      expectUnauthorized(await refresh(tokens.refresh_token, second));
      // The account itself survived: logging in again works under the new secret.
      const login = await second.http('POST', '/api/auth/login', { body: { username, password } });
      expect(login.status, login.text).toBe(200);
      expect((await me(login.body.access_token, second)).body.id).toBe(user.id);
    } finally {
      await second?.stop();
      // Closing is idempotent; this drops the database and the temporary DATA_DIR.
      await first.stop();
    }
  });
});

describe('logs', () => {
  const lines: string[] = [];
  let app: RunningApp;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const dataDir = dataDirFromTemplate();
    const database = await createTestDatabase();
    const config = loadConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, DATABASE_URL: database.url });
    // Trace: whatever any level would print is in the capture.
    app = await startApp(config, { logger: createLogger('trace', { write: (line: string) => void lines.push(line) }) });
    cleanup = async () => {
      await app.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });
  afterAll(() => cleanup?.());

  const call = async (method: string, path: string, reqId: string, opts: { body?: unknown; token?: string } = {}) => {
    const headers: Record<string, string> = { 'x-request-id': reqId };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${app.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const requestLine = (reqId: string) => parsed().find((entry) => entry.msg === 'request' && entry.reqId === reqId);

  it('hold no password and no token, and one request line per request with route template, status and ms', async () => {
    const tag = randomUUID().slice(0, 8);
    const username = uniqueName('sec_log');
    const password = `Pw-${randomUUID()}`;
    const wrongPassword = `Wrong-${randomUUID()}`;

    expect((await call('POST', '/api/auth/register', `reg-${tag}`, { body: { username, email: `${username}@example.com`, password } })).status).toBe(201);
    expect((await call('POST', '/api/auth/login', `bad-${tag}`, { body: { username, password: wrongPassword } })).status).toBe(401);
    const login = await call('POST', '/api/auth/login', `login-${tag}`, { body: { username, password } });
    expect(login.status).toBe(200);
    const { access_token: access, refresh_token: refreshToken } = login.body as { access_token: string; refresh_token: string };
    expect((await call('GET', '/api/auth/me', `me-${tag}`, { token: access })).status).toBe(200);
    const queryToken = await call('GET', `/api/auth/me?token=${access}`, `query-${tag}`);
    expect(queryToken.status).toBe(401);
    expect((await call('GET', `/api/no-such-route?token=${access}`, `unmatched-${tag}`)).status).toBe(404);
    expect((await call('POST', '/api/auth/refresh', `refresh-${tag}`, { body: { refresh_token: refreshToken } })).status).toBe(200);

    const reqIds = ['reg', 'bad', 'login', 'me', 'query', 'unmatched', 'refresh'].map((name) => `${name}-${tag}`);
    // A request's line is written when its response finishes; poll for it rather than assume.
    await waitFor(
      () => Promise.resolve(reqIds.every((id) => requestLine(id))),
      (done) => done,
    );

    const text = lines.join('');
    for (const secret of [password, wrongPassword, access, refreshToken, access.split('.')[2]!, refreshToken.split('.')[2]!, app.services.config.AUTH_SECRET_KEY]) {
      expect(text).not.toContain(secret);
    }

    expect(requestLine(`me-${tag}`)).toMatchObject({ reqId: `me-${tag}`, method: 'GET', route: '/api/auth/me', status: 200, ms: expect.any(Number) });
    expect(requestLine(`login-${tag}`)).toMatchObject({ route: '/api/auth/login', status: 200, ms: expect.any(Number) });
    expect(requestLine(`bad-${tag}`)).toMatchObject({ route: '/api/auth/login', status: 401 });
    // The template, not the raw URL with its query string.
    expect(requestLine(`query-${tag}`)).toMatchObject({ route: '/api/auth/me', status: 401 });
    expect(requestLine(`unmatched-${tag}`)).toMatchObject({ route: 'unmatched', status: 404 });
    for (const entry of parsed()) {
      expect(JSON.stringify(entry)).not.toMatch(/token=/i);
    }
  });
});
