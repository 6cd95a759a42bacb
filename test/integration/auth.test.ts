// /api/auth over HTTP: the happy paths and every auth error row of the interface.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, refreshTokenFamilies } from '../../server/db/schema/index.ts';
import { registerAndLogin, startTestServer, uniqueName, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_FAILURES: '3' });
});
afterAll(() => server.stop());

const decode = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

describe('register', () => {
  it('creates a user with role user and never returns the password', async () => {
    const username = uniqueName('reg');
    const res = await server.http('POST', '/api/auth/register', {
      body: { username, email: `${username}@example.com`, password: 'password123' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      username,
      email: `${username}@example.com`,
      role: 'user',
      is_active: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });
    expect(res.text).not.toContain('password');
  });

  it('answers 409 for a duplicate username or e-mail, regardless of case', async () => {
    const username = uniqueName('dup');
    const first = await server.http('POST', '/api/auth/register', { body: { username, email: `${username}@example.com`, password: 'password123' } });
    expect(first.status).toBe(201);
    const sameName = await server.http('POST', '/api/auth/register', {
      body: { username: username.toUpperCase(), email: `other_${username}@example.com`, password: 'password123' },
    });
    expect(sameName.status).toBe(409);
    expect(sameName.body).toMatchObject({ code: 'CONFLICT', status: 409 });
    const sameEmail = await server.http('POST', '/api/auth/register', {
      body: { username: `${username}_2`, email: `${username.toUpperCase()}@EXAMPLE.com`, password: 'password123' },
    });
    expect(sameEmail.status).toBe(409);
  });

  it.each([
    ['username too short', { username: 'ab' }, 'username'],
    ['username too long', { username: 'a'.repeat(65) }, 'username'],
    ['username with a dash', { username: 'bad-name' }, 'username'],
    ['username not a string', { username: 12345 }, 'username'],
    ['email malformed', { email: 'not-an-email' }, 'email'],
    ['password too short', { password: 'short7!' }, 'password'],
    ['password too long', { password: 'x'.repeat(129) }, 'password'],
    ['password missing', { password: undefined }, 'password'],
  ])('answers 422 VALIDATION_ERROR for %s', async (_name, override, field) => {
    const username = uniqueName('val');
    const body = { username, email: `${username}@example.com`, password: 'password123', ...override };
    const res = await server.http('POST', '/api/auth/register', { body });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.status).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  });

  it('accepts the length bounds exactly (username 3 and 64, password 8 and 128)', async () => {
    const short = `u${process.pid % 10}${Date.now() % 10}`.slice(0, 3);
    const long = uniqueName('b').padEnd(64, 'x');
    for (const [username, password] of [
      [short, 'p'.repeat(8)],
      [long, 'p'.repeat(128)],
    ] as const) {
      const res = await server.http('POST', '/api/auth/register', { body: { username, email: `${username}@example.com`, password } });
      expect(res.status, res.text).toBe(201);
    }
  });
});

describe('login', () => {
  it('returns a bearer token pair with the documented claims and lifetimes', async () => {
    const { tokens, user } = await registerAndLogin(server, 'login');
    expect(tokens).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 1800 });
    const access = decode(tokens.access_token);
    const refresh = decode(tokens.refresh_token);
    expect(JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString())).toMatchObject({ alg: 'HS256' });
    expect(access).toMatchObject({ sub: String(user.id), type: 'access', jti: expect.any(String) });
    expect(access.exp - access.iat).toBe(30 * 60);
    expect(refresh).toMatchObject({ sub: String(user.id), type: 'refresh' });
    expect(refresh.exp - refresh.iat).toBe(7 * 86_400);
  });

  it('answers 401 for a wrong password and for an unknown user, with the same body', async () => {
    const { username } = await registerAndLogin(server, 'wrongpw');
    const wrong = await server.http('POST', '/api/auth/login', { body: { username, password: 'not-the-password' } });
    const unknown = await server.http('POST', '/api/auth/login', { body: { username: uniqueName('ghost'), password: 'whatever123' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 422 when a field is missing or of the wrong type', async () => {
    expect((await server.http('POST', '/api/auth/login', { body: { username: 'someone' } })).status).toBe(422);
    expect((await server.http('POST', '/api/auth/login', { body: { username: ['a'], password: 1 } })).status).toBe(422);
  });

  it('throttles repeated failures for one username and address with 429 and Retry-After, even with the right password', async () => {
    const { username, password } = await registerAndLogin(server, 'throttle');
    for (let i = 0; i < 3; i++) {
      expect((await server.http('POST', '/api/auth/login', { body: { username, password: 'wrong-password' } })).status).toBe(401);
    }
    const blocked = await server.http('POST', '/api/auth/login', { body: { username, password } });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  it('a successful login clears earlier failures', async () => {
    const { username, password } = await registerAndLogin(server, 'clears');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) await server.http('POST', '/api/auth/login', { body: { username, password: 'wrong-password' } });
      expect((await server.http('POST', '/api/auth/login', { body: { username, password } })).status).toBe(200);
    }
  });
});

describe('me', () => {
  it('returns the current user', async () => {
    const { tokens, user } = await registerAndLogin(server, 'me');
    const res = await server.http('GET', '/api/auth/me', { token: tokens.access_token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(user);
  });

  it('answers 401 with WWW-Authenticate without a token or with a malformed header', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, { authorization: 'Bearer not.a.jwt' }]) {
      const res = await server.http('GET', '/api/auth/me', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});

describe('refresh', () => {
  it('rotates: each call returns a new pair, and the old refresh token is single-use', async () => {
    const { tokens } = await registerAndLogin(server, 'rotate');
    const first = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(first.body.access_token).not.toBe(tokens.access_token);
    expect((await server.http('GET', '/api/auth/me', { token: first.body.access_token })).status).toBe(200);
    const second = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: first.body.refresh_token } });
    expect(second.status).toBe(200);
  });

  it('reuse of a used refresh token answers 401 and revokes the whole family', async () => {
    const { tokens, user } = await registerAndLogin(server, 'reuse');
    const rotated = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } });
    expect(rotated.status).toBe(200);
    const replay = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } });
    expect(replay.status).toBe(401);
    // The legitimate holder's newer token died with the family.
    const newer = await server.http('POST', '/api/auth/refresh', { body: { refresh_token: rotated.body.refresh_token } });
    expect(newer.status).toBe(401);
    // What the rule promises is written: the family revoked for reuse, and one audit record of it.
    const familyId = decode(tokens.refresh_token).fam as string;
    const { db } = server.services;
    const [family] = await db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, familyId));
    expect(family).toMatchObject({ revokedReason: 'reuse', revokedAt: expect.any(Date) });
    const audits = await db.select().from(auditEvents).where(and(eq(auditEvents.action, 'auth.refresh_reuse'), eq(auditEvents.subjectUserId, user.id)));
    expect(audits.map((row) => row.data)).toEqual([{ family_id: familyId }]);
  });

  it('two concurrent refreshes with one token: exactly one wins', async () => {
    const { tokens } = await registerAndLogin(server, 'race');
    const results = await Promise.all(
      [0, 1].map(() => server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('answers 401 for an access token, garbage, and 422 for a missing field', async () => {
    const { tokens } = await registerAndLogin(server, 'refbad');
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.access_token } })).status).toBe(401);
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: 'garbage' } })).status).toBe(401);
    expect((await server.http('POST', '/api/auth/refresh', { body: {} })).status).toBe(422);
  });
});

describe('logout and password change', () => {
  it('logout revokes the family (204, no body)', async () => {
    const { tokens } = await registerAndLogin(server, 'logout');
    const res = await server.http('POST', '/api/auth/logout', { token: tokens.access_token, body: { refresh_token: tokens.refresh_token } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } })).status).toBe(401);
  });

  it('logout with another user’s refresh token answers 401 and leaves it alive', async () => {
    const alice = await registerAndLogin(server, 'lo_a');
    const bob = await registerAndLogin(server, 'lo_b');
    const res = await server.http('POST', '/api/auth/logout', { token: alice.tokens.access_token, body: { refresh_token: bob.tokens.refresh_token } });
    expect(res.status).toBe(401);
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: bob.tokens.refresh_token } })).status).toBe(200);
  });

  it('password change needs the current password, then revokes every session and the new password works', async () => {
    const { tokens, username, password } = await registerAndLogin(server, 'pwchange');
    const second = await server.http('POST', '/api/auth/login', { body: { username, password } });
    const wrong = await server.http('POST', '/api/auth/password', {
      token: tokens.access_token,
      body: { current_password: 'not-it-at-all', new_password: 'new-password-1' },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([{ path: 'current_password', message: 'is incorrect' }]);
    const tooShort = await server.http('POST', '/api/auth/password', { token: tokens.access_token, body: { current_password: password, new_password: 'short' } });
    expect(tooShort.status).toBe(422);

    const ok = await server.http('POST', '/api/auth/password', { token: tokens.access_token, body: { current_password: password, new_password: 'new-password-1' } });
    expect(ok.status).toBe(204);
    for (const refresh of [tokens.refresh_token, second.body.refresh_token]) {
      expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: refresh } })).status).toBe(401);
    }
    expect((await server.http('POST', '/api/auth/login', { body: { username, password } })).status).toBe(401);
    expect((await server.http('POST', '/api/auth/login', { body: { username, password: 'new-password-1' } })).status).toBe(200);
  });
});
