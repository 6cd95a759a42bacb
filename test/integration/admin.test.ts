// /api/admin over HTTP (the role guard is in route-security.test.ts): the user list, deactivate/activate, the halt switch
// and the audit trail every operator action leaves.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../../server/db/schema/index.ts';
import { ADMIN, adminEnv, loginAdmin, registerAndLogin, startTestServer, uniqueName, type HttpResult, type TestServer, type TestUser } from '../support/server.ts';

let server: TestServer;
let adminToken: string;
let adminId: number;

beforeAll(async () => {
  server = await startTestServer(adminEnv);
  adminToken = (await loginAdmin(server)).access_token;
  adminId = (await server.http('GET', '/api/auth/me', { token: adminToken })).body.id;
});
afterAll(() => server.stop());

const USER_KEYS = ['created_at', 'email', 'id', 'is_active', 'role', 'username'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const expectError = (res: HttpResult, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ code, status, message: expect.any(String) });
};

const asAdmin = (method: string, path: string, body?: unknown) => server.http(method, path, { token: adminToken, body });
const login = (username: string, password: string) => server.http('POST', '/api/auth/login', { body: { username, password } });

describe('GET /api/admin/users', () => {
  it('lists users newest first as {items,total,page,size}, without password hashes', async () => {
    const created = [];
    for (let i = 0; i < 3; i++) created.push((await registerAndLogin(server, 'adm_list')).user);
    const res = await asAdmin('GET', '/api/admin/users?size=100');
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['items', 'page', 'size', 'total']);
    expect(res.body).toMatchObject({ page: 1, size: 100, total: expect.any(Number) });
    expect(res.body.items.length).toBe(Math.min(res.body.total, 100));
    const ids = res.body.items.map((u: { id: number }) => u.id);
    // The three newest, in reverse order of creation, and the admin among the rest.
    expect(ids.slice(0, 3)).toEqual(created.map((u) => u.id).reverse());
    expect(ids).toContain(adminId);
    expect(res.body.items[0]).toEqual(created[2]);
    for (const item of res.body.items) expect(Object.keys(item).sort()).toEqual(USER_KEYS);
    expect(res.text).not.toMatch(/password|argon2|hash/i);
  });

  it('pages with page and size', async () => {
    for (let i = 0; i < 3; i++) await registerAndLogin(server, 'adm_page');
    const all = await asAdmin('GET', '/api/admin/users?size=4');
    const first = await asAdmin('GET', '/api/admin/users?page=1&size=2');
    const second = await asAdmin('GET', '/api/admin/users?page=2&size=2');
    expect(first.body).toMatchObject({ page: 1, size: 2, total: all.body.total });
    expect(second.body).toMatchObject({ page: 2, size: 2, total: all.body.total });
    expect([...first.body.items, ...second.body.items]).toEqual(all.body.items);
    const beyond = await asAdmin('GET', `/api/admin/users?page=${all.body.total + 1}&size=1`);
    expect(beyond.status).toBe(200);
    expect(beyond.body.items).toEqual([]);
    // Defaults: page 1, size 20.
    expect((await asAdmin('GET', '/api/admin/users')).body).toMatchObject({ page: 1, size: 20 });
  });

  it.each(['size=0', 'size=101', 'page=0', 'page=-1', 'size=abc', 'page=abc', 'size=1.5'])('answers 422 VALIDATION_ERROR for %s', async (query) => {
    expectError(await asAdmin('GET', `/api/admin/users?${query}`), 422, 'VALIDATION_ERROR');
  });
});

describe('deactivate and activate', () => {
  it('deactivate answers 200 with the user inactive; login then answers 403 (right password) and 401 (wrong)', async () => {
    const target = await registerAndLogin(server, 'adm_deact');
    const res = await asAdmin('POST', `/api/admin/users/${target.user.id}/deactivate`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ...target.user, is_active: false });

    expectError(await login(target.username, target.password), 403, 'FORBIDDEN');
    expectError(await login(target.username, 'not-the-password'), 401, 'UNAUTHORIZED');
    const listed = (await asAdmin('GET', '/api/admin/users?size=100')).body.items.find((u: { id: number }) => u.id === target.user.id);
    expect(listed.is_active).toBe(false);

    const activated = await asAdmin('POST', `/api/admin/users/${target.user.id}/activate`);
    expect(activated.status, activated.text).toBe(200);
    expect(activated.body).toEqual({ ...target.user, is_active: true });
    const again = await login(target.username, target.password);
    expect(again.status, again.text).toBe(200);
    expect((await server.http('GET', '/api/auth/me', { token: again.body.access_token })).body).toEqual(target.user);
  });

  it('both are idempotent', async () => {
    const target = await registerAndLogin(server, 'adm_idem');
    for (const action of ['deactivate', 'deactivate', 'activate', 'activate']) {
      const res = await asAdmin('POST', `/api/admin/users/${target.user.id}/${action}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.is_active).toBe(action === 'activate');
    }
  });

  it.each(['deactivate', 'activate'])('%s of an unknown id answers 404 NOT_FOUND', async (action) => {
    expectError(await asAdmin('POST', `/api/admin/users/1999999999/${action}`), 404, 'NOT_FOUND');
  });

  it.each(['abc', '0', '-1', '1.5', '2147483648'])('deactivate of id %s answers 422 VALIDATION_ERROR', async (id) => {
    expectError(await asAdmin('POST', `/api/admin/users/${id}/deactivate`), 422, 'VALIDATION_ERROR');
  });

  it('an admin cannot deactivate itself (409 CONFLICT) and stays active', async () => {
    expectError(await asAdmin('POST', `/api/admin/users/${adminId}/deactivate`), 409, 'CONFLICT');
    expect((await server.http('GET', '/api/auth/me', { token: adminToken })).body).toMatchObject({ id: adminId, role: 'admin', is_active: true });
    expect((await login(ADMIN.username, ADMIN.password)).status).toBe(200);
  });
});

describe('halt', () => {
  const setHalt = (halted: unknown) => asAdmin('POST', '/api/admin/halt', { halted });
  const meOf = (user: TestUser) => server.http('GET', '/api/auth/me', { token: user.tokens.access_token });

  // Halt is global: whatever a test does, the next one starts on a running service.
  afterEach(async () => {
    const res = await setHalt(false);
    expect(res.status, res.text).toBe(200);
  });

  it('halts every route but health, metrics, admin routes and admin login/refresh; resuming restores them', async () => {
    const user = await registerAndLogin(server, 'adm_halt');
    const target = await registerAndLogin(server, 'adm_halt_t');
    const adminSession = await loginAdmin(server);

    const halted = await setHalt(true);
    expect(halted.status, halted.text).toBe(200);
    expect(halted.body).toEqual({ halted: true, updated_at: expect.stringMatching(ISO) });

    expectError(await meOf(user), 503, 'SERVICE_HALTED');
    const newName = uniqueName('adm_halt_reg');
    expectError(
      await server.http('POST', '/api/auth/register', { body: { username: newName, email: `${newName}@example.com`, password: 'password123' } }),
      503,
      'SERVICE_HALTED',
    );
    expectError(await login(user.username, user.password), 503, 'SERVICE_HALTED');
    expectError(await server.http('POST', '/api/auth/refresh', { body: { refresh_token: user.tokens.refresh_token } }), 503, 'SERVICE_HALTED');

    // An operator can always get a token and act.
    const adminLogin = await login(ADMIN.username, ADMIN.password);
    expect(adminLogin.status, adminLogin.text).toBe(200);
    const adminRefresh = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: adminSession.refresh_token } });
    expect(adminRefresh.status, adminRefresh.text).toBe(200);
    expect((await server.http('GET', '/api/admin/users', { token: adminLogin.body.access_token })).status).toBe(200);
    expect((await asAdmin('POST', `/api/admin/users/${target.user.id}/deactivate`)).status).toBe(200);
    expect((await asAdmin('POST', `/api/admin/users/${target.user.id}/activate`)).status).toBe(200);
    expect((await setHalt(true)).status).toBe(200);

    const health = await server.http('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', db: 'ok' });
    expect((await server.http('GET', '/health/flags')).status).toBe(200);
    expect((await server.http('GET', '/metrics')).status).toBe(200);

    const resumed = await setHalt(false);
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body).toEqual({ halted: false, updated_at: expect.stringMatching(ISO) });

    expect((await meOf(user)).status).toBe(200);
    const again = await login(user.username, user.password);
    expect(again.status, again.text).toBe(200);
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: again.body.refresh_token } })).status).toBe(200);
    expect((await registerAndLogin(server, 'adm_after_halt')).user.role).toBe('user');
  });

  it.each([
    ['"false"', { halted: 'false' }],
    ['"true"', { halted: 'true' }],
    ['1', { halted: 1 }],
    ['0', { halted: 0 }],
    ['null', { halted: null }],
    ['missing', {}],
  ])('answers 422 VALIDATION_ERROR for halted=%s and leaves a running service running', async (_name, body) => {
    const user = await registerAndLogin(server, 'adm_strict');
    expectError(await asAdmin('POST', '/api/admin/halt', body), 422, 'VALIDATION_ERROR');
    expect((await meOf(user)).status).toBe(200);
  });

  it('a malformed body does not resume a halted service either', async () => {
    const user = await registerAndLogin(server, 'adm_strict_h');
    expect((await setHalt(true)).status).toBe(200);
    for (const body of [{ halted: 'false' }, { halted: 0 }, {}]) {
      expectError(await asAdmin('POST', '/api/admin/halt', body), 422, 'VALIDATION_ERROR');
      expectError(await meOf(user), 503, 'SERVICE_HALTED');
    }
    expectError(await server.http('POST', '/api/admin/halt', { token: adminToken, rawBody: '{"halted": false', headers: { 'content-type': 'application/json' } }), 422, 'VALIDATION_ERROR');
    expectError(await meOf(user), 503, 'SERVICE_HALTED');
  });
});

describe('audit', () => {
  it('records every admin action with the admin as actor', async () => {
    const target = await registerAndLogin(server, 'adm_audit');
    expect((await asAdmin('POST', `/api/admin/users/${target.user.id}/deactivate`)).status).toBe(200);
    expect((await asAdmin('POST', `/api/admin/users/${target.user.id}/activate`)).status).toBe(200);
    try {
      expect((await asAdmin('POST', '/api/admin/halt', { halted: true })).status).toBe(200);
    } finally {
      expect((await asAdmin('POST', '/api/admin/halt', { halted: false })).status).toBe(200);
    }

    const { db } = server.services;
    const userRows = await db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.subjectUserId, target.user.id), inArray(auditEvents.action, ['admin.user_deactivate', 'admin.user_activate'])));
    expect(userRows.map((row) => row.action).sort()).toEqual(['admin.user_activate', 'admin.user_deactivate']);
    for (const row of userRows) {
      expect(row.actorUserId).toBe(adminId);
      expect(row.requestId).toEqual(expect.any(String));
    }

    const haltRows = await db.select().from(auditEvents).where(inArray(auditEvents.action, ['admin.halt', 'admin.resume']));
    for (const action of ['admin.halt', 'admin.resume']) {
      expect(haltRows.some((row) => row.action === action && row.actorUserId === adminId)).toBe(true);
    }
    // The refused self-deactivation and the regular user's attempts changed nothing, so left no admin record.
    const byOthers = await db.select().from(auditEvents).where(inArray(auditEvents.action, ['admin.user_deactivate', 'admin.user_activate', 'admin.halt', 'admin.resume']));
    expect(byOthers.every((row) => row.actorUserId === adminId)).toBe(true);
    expect(byOthers.some((row) => row.subjectUserId === adminId)).toBe(false);
  });
});
