// Ending sessions and tokens (token versions), the attempt throttles under parallel guesses,
// login while halted, and token expiry on the injected clock.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, authThrottle, refreshTokenFamilies } from '../../server/db/schema/index.ts';
import { FACTORY_PASSWORD, newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const MAX_FAILURES = 3;
const clock = manualClock('2026-03-09T13:30:00Z');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_FAILURES: String(MAX_FAILURES), AUTH_ACCESS_TOKEN_TTL_MIN: '30' }, undefined, { clock });
});
afterAll(() => server.stop());

const me = (token: string) => server.http('GET', '/api/auth/me', { token });
const refresh = (token: string) => server.http('POST', '/api/auth/refresh', { body: { refresh_token: token } });
const login = (username: string, password: string) => server.http('POST', '/api/auth/login', { body: { username, password } });
const auditOf = (userId: number, action: string) =>
  server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, userId), eq(auditEvents.action, action)));
const origin = { requestId: 'test', address: '127.0.0.1' };

/** A user whose access token has been seen once, so the verified-token cache answers for it next. */
const warmUser = async (prefix: string): Promise<FactoryUser> => {
  const user = await newUser(server, { prefix });
  expect((await me(user.tokens.access_token)).status).toBe(200);
  return user;
};

describe('token versions', () => {
  it('a password change ends every earlier access and refresh token, cached or not', async () => {
    const user = await warmUser('ver_pw');
    const other = await server.services.auth.issueSession({ user: user.auth });
    const changed = await server.http('POST', '/api/auth/password', {
      token: user.tokens.access_token,
      body: { current_password: FACTORY_PASSWORD, new_password: 'brand-new-password' },
    });
    expect(changed.status, changed.text).toBe(204);
    for (const token of [user.tokens.access_token, other.access_token]) expect((await me(token)).status).toBe(401);
    for (const token of [user.tokens.refresh_token, other.refresh_token]) expect((await refresh(token)).status).toBe(401);
    const fresh = await login(user.username, 'brand-new-password');
    expect(fresh.status).toBe(200);
    expect((await me(fresh.body.access_token)).status).toBe(200);
  });

  it('logout-all (204) ends every session and token of the caller and no one else', async () => {
    const user = await warmUser('ver_all');
    const second = await server.services.auth.issueSession({ user: user.auth });
    const bystander = await warmUser('ver_bystander');
    const res = await server.http('POST', '/api/auth/logout-all', { token: user.tokens.access_token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const token of [user.tokens.access_token, second.access_token]) expect((await me(token)).status).toBe(401);
    for (const token of [user.tokens.refresh_token, second.refresh_token]) expect((await refresh(token)).status).toBe(401);
    expect((await me(bystander.tokens.access_token)).status).toBe(200);
    const families = await server.services.db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.userId, user.user.id));
    expect(families.map((family) => family.revokedReason)).toEqual(['logout_all', 'logout_all']);
    expect(await auditOf(user.user.id, 'auth.logout_all')).toHaveLength(1);
    expect((await login(user.username, FACTORY_PASSWORD)).status).toBe(200);
  });

  it('deactivate then activate revives no earlier token, access or refresh', async () => {
    const user = await warmUser('ver_deact');
    const admin = await newUser(server, { role: 'admin' });
    await server.services.users.setActive({ actor: admin.auth, userId: user.user.id, active: false, origin });
    await server.services.users.setActive({ actor: admin.auth, userId: user.user.id, active: true, origin });
    expect((await me(user.tokens.access_token)).status).toBe(401);
    expect((await refresh(user.tokens.refresh_token)).status).toBe(401);
    expect((await login(user.username, FACTORY_PASSWORD)).status).toBe(200);
  });
});

describe('throttles', () => {
  it(`lets exactly ${MAX_FAILURES} of 30 parallel wrong logins be evaluated; the rest answer 429 with Retry-After`, async () => {
    const user = await newUser(server, { prefix: 'thr_login' });
    const answers = await Promise.all(Array.from({ length: 30 }, () => login(user.username, 'wrong-password')));
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 401)).toHaveLength(MAX_FAILURES);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30 - MAX_FAILURES);
    for (const res of answers.filter((answer) => answer.status === 429)) {
      expect(res.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(await auditOf(user.user.id, 'auth.login_failed')).toHaveLength(MAX_FAILURES);
    // The right password is refused too until the window ends, on the injected clock.
    expect((await login(user.username, FACTORY_PASSWORD)).status).toBe(429);
    clock.advance(15 * 60_000 + 1000);
    expect((await login(user.username, FACTORY_PASSWORD)).status).toBe(200);
    const [row] = await server.services.db.select().from(authThrottle).where(and(eq(authThrottle.scope, 'login'), eq(authThrottle.key, user.username.toLowerCase())));
    expect(row).toBeUndefined();
  });

  it('throttles wrong current passwords per user, also in parallel and with the right one after', async () => {
    const user = await newUser(server, { prefix: 'thr_pw' });
    const change = (current: string) =>
      server.http('POST', '/api/auth/password', { token: user.tokens.access_token, body: { current_password: current, new_password: 'another-password-1' } });
    const answers = await Promise.all(Array.from({ length: 12 }, () => change('wrong-password')));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 422)).toHaveLength(MAX_FAILURES);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - MAX_FAILURES);
    expect(answers.find((res) => res.status === 429)?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await auditOf(user.user.id, 'auth.password_change_failed')).toHaveLength(MAX_FAILURES);
    expect((await change(FACTORY_PASSWORD)).status).toBe(429);
    expect((await login(user.username, FACTORY_PASSWORD)).status).toBe(200);
  });
});

describe('login while halted', () => {
  it("answers 503 to a regular user before the password is checked, counting nothing; an admin still logs in", async () => {
    const user = await newUser(server, { prefix: 'halt_login' });
    const admin = await newUser(server, { role: 'admin', prefix: 'halt_admin' });
    const haltedAt = clock.now().toISOString();
    await server.services.halt.set({ halted: true, actor: admin.auth, origin });
    try {
      for (const password of ['wrong-password', FACTORY_PASSWORD]) {
        const res = await login(user.username, password);
        expect(res.status, res.text).toBe(503);
        expect(res.body).toMatchObject({ code: 'SERVICE_HALTED' });
      }
      expect((await login('no_such_user_anywhere', 'whatever-password')).status).toBe(503);
      expect(await auditOf(user.user.id, 'auth.login_failed')).toHaveLength(0);
      expect(await server.services.db.select().from(authThrottle).where(eq(authThrottle.key, user.username.toLowerCase()))).toEqual([]);
      expect((await login(admin.username, FACTORY_PASSWORD)).status).toBe(200);
      const state = await server.http('GET', '/api/admin/halt', { token: admin.tokens.access_token });
      expect(state.status).toBe(200);
      expect(state.body).toEqual({ halted: true, updated_at: haltedAt });
    } finally {
      await server.services.halt.set({ halted: false, actor: admin.auth, origin });
    }
  });
});

describe('the injected clock', () => {
  it('expires an access token at its lifetime, also once the verified-token cache holds it', async () => {
    const user = await warmUser('clock_exp');
    clock.advance(30 * 60_000 - 2000);
    expect((await me(user.tokens.access_token)).status).toBe(200);
    clock.advance(3000);
    const expired = await me(user.tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.body.message).toBe('Token expired');
  });
});
