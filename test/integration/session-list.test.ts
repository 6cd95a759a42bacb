// GET /api/auth/sessions, DELETE /api/auth/sessions/{id} and POST /api/auth/sessions/revoke-others:
// a user's live sessions with the current one marked, one ended (its refresh token then fails as
// a revoked one), every other one ended; each revocation audited; another user's session is 404
// like a missing one.
import { createSecretKey } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, refreshTokenFamilies } from '../../server/db/schema/index.ts';
import { newUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-03-09T13:30:00Z');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
});
afterAll(() => server?.stop());

const sessions = (token: string, query = '') => server.http('GET', `/api/auth/sessions${query}`, { token });
const revoke = (token: string, id: string) => server.http('DELETE', `/api/auth/sessions/${id}`, { token });
const revokeOthers = (token: string) => server.http('POST', '/api/auth/sessions/revoke-others', { token });
const refresh = (token: string) => server.http('POST', '/api/auth/refresh', { body: { refresh_token: token } });
const auditOf = (userId: number, action: string) =>
  server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, userId), eq(auditEvents.action, action)));

/** A user with three sessions opened a minute apart: the factory's (first), then two more. */
const userWithThreeSessions = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  clock.advance(60_000);
  const second = await server.services.auth.issueSession({ user: user.auth });
  clock.advance(60_000);
  const third = await server.services.auth.issueSession({ user: user.auth });
  clock.advance(60_000);
  return { user, first: user.tokens, second, third };
};

type SessionItem = { id: string; created_at: string; last_used_at: string; expires_at: string; current: boolean };

describe('GET /api/auth/sessions', () => {
  it('lists the live sessions, most recently used first, the current one marked, and nothing secret', async () => {
    const { first, second, third } = await userWithThreeSessions('sess_list');
    const openedAt = clock.now().toISOString();
    // The first session is refreshed now: it becomes the most recently used, and its new access
    // token still belongs to it.
    const rotated = await refresh(first.refresh_token);
    expect(rotated.status, rotated.text).toBe(200);
    const res = await sessions(rotated.body.access_token);
    expect(res.status, res.text).toBe(200);
    const items = res.body.items as SessionItem[];
    expect(res.body).toMatchObject({ total: 3, page: 1, size: 20 });
    expect(items).toHaveLength(3);
    expect(items.every((item) => Object.keys(item).sort().join() === 'created_at,current,expires_at,id,last_used_at')).toBe(true);
    expect(items[0]).toMatchObject({ current: true, last_used_at: openedAt });
    expect(items.filter((item) => item.current)).toHaveLength(1);
    // Then the two others, newest first, each last used when it was opened.
    expect(items[1]!.created_at > items[2]!.created_at).toBe(true);
    expect(items.slice(1).every((item) => item.last_used_at === item.created_at)).toBe(true);
    expect(new Date(items[0]!.expires_at).getTime() - clock.now().getTime()).toBe(server.config.AUTH_REFRESH_TOKEN_TTL_DAYS * 86_400_000);
    for (const token of [first, second, third, rotated.body]) {
      expect(res.text).not.toContain(token.refresh_token);
      expect(res.text).not.toContain(token.access_token);
    }
    // Another session's access token marks that one.
    const fromThird = (await sessions(third.access_token)).body.items as SessionItem[];
    expect(fromThird.find((item) => item.current)?.created_at).toBe(items[1]!.created_at);
    // Another user's sessions never appear.
    const other = await newUser(server, { prefix: 'sess_list_other' });
    const others = (await sessions(other.tokens.access_token)).body.items as SessionItem[];
    expect(others).toHaveLength(1);
    expect(items.map((item) => item.id)).not.toContain(others[0]!.id);
  });

  it('pages, and answers 422 for a bad page and 401 without a token', async () => {
    const { first } = await userWithThreeSessions('sess_page');
    const page = await sessions(first.access_token, '?page=2&size=2');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 3, page: 2, size: 2 });
    expect(page.body.items).toHaveLength(1);
    const bad = await sessions(first.access_token, '?size=0');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect((await server.http('GET', '/api/auth/sessions')).status).toBe(401);
  });
});

describe('DELETE /api/auth/sessions/{id}', () => {
  it('ends one session (204): its refresh token fails, the others work, and it is audited with the revocation', async () => {
    const { user, first, second } = await userWithThreeSessions('sess_del');
    const before = (await sessions(first.access_token)).body.items as SessionItem[];
    const target = before.find((item) => !item.current && item.created_at === before.map((i) => i.created_at).sort()[1])!;
    const res = await revoke(first.access_token, target.id);
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    const [family] = await server.services.db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.id, target.id));
    expect(family).toMatchObject({ revokedReason: 'revoked' });
    const audits = await auditOf(user.user.id, 'auth.session_revoked');
    expect(audits).toHaveLength(1);
    expect(audits[0]!.data).toEqual({ family_id: target.id, current: false });
    // The second session was the one revoked: its refresh token is refused like any revoked one.
    const refused = await refresh(second.refresh_token);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('UNAUTHORIZED');
    expect((await refresh(first.refresh_token)).status).toBe(200);
    const after = (await sessions(first.access_token)).body.items as SessionItem[];
    expect(after.map((item) => item.id)).not.toContain(target.id);
    expect(after).toHaveLength(2);
    // Ended already: 404, as a missing one.
    expect((await revoke(first.access_token, target.id)).status).toBe(404);
  });

  it("answers 404 NOT_FOUND for another user's session exactly as for a missing one, and leaves it alone", async () => {
    const owner = await newUser(server, { prefix: 'sess_owner' });
    const caller = await newUser(server, { prefix: 'sess_caller' });
    const [ownerSession] = (await sessions(owner.tokens.access_token)).body.items as SessionItem[];
    const foreign = await revoke(caller.tokens.access_token, ownerSession!.id);
    const missing = await revoke(caller.tokens.access_token, '00000000-0000-4000-8000-000000000000');
    const notAUuid = await revoke(caller.tokens.access_token, 'not-a-session');
    for (const res of [foreign, missing, notAUuid]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'Session not found', status: 404 });
    }
    expect((await refresh(owner.tokens.refresh_token)).status).toBe(200);
    expect(await auditOf(owner.user.id, 'auth.session_revoked')).toHaveLength(0);
  });

  it('may end the current session: its refresh token fails, its access token runs out on its own', async () => {
    const user = await newUser(server, { prefix: 'sess_self' });
    const [current] = (await sessions(user.tokens.access_token)).body.items as SessionItem[];
    expect((await revoke(user.tokens.access_token, current!.id)).status).toBe(204);
    expect((await auditOf(user.user.id, 'auth.session_revoked'))[0]!.data).toEqual({ family_id: current!.id, current: true });
    expect((await refresh(user.tokens.refresh_token)).status).toBe(401);
    expect((await sessions(user.tokens.access_token)).body.items).toEqual([]);
  });
});

describe('POST /api/auth/sessions/revoke-others', () => {
  it('ends every session but the current one, audited with the ones it ended', async () => {
    const { user, first, second, third } = await userWithThreeSessions('sess_others');
    const bystander = await newUser(server, { prefix: 'sess_bystander' });
    const [currentId] = ((await sessions(second.access_token)).body.items as SessionItem[]).filter((item) => item.current).map((item) => item.id);
    const res = await revokeOthers(second.access_token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ revoked: 2, kept: currentId });
    for (const token of [first.refresh_token, third.refresh_token]) expect((await refresh(token)).status).toBe(401);
    const left = (await sessions(second.access_token)).body.items as SessionItem[];
    expect(left.map((item) => item.id)).toEqual([currentId]);
    const [audit] = await auditOf(user.user.id, 'auth.sessions_revoked_others');
    expect(audit!.data).toMatchObject({ kept: currentId });
    expect((audit!.data as { family_ids: string[] }).family_ids).toHaveLength(2);
    expect((await refresh(second.refresh_token)).status).toBe(200);
    expect((await refresh(bystander.tokens.refresh_token)).status).toBe(200);
    // Nothing left to end: 0.
    expect((await revokeOthers(second.access_token)).body).toEqual({ revoked: 0, kept: currentId });
  });

  it('answers 409 CONFLICT to an access token that names no session, ending nothing', async () => {
    const user = await newUser(server, { prefix: 'sess_old_token' });
    // An access token as issued before sessions were named in tokens: no `fam` claim.
    const now = Math.floor(clock.now().getTime() / 1000);
    const oldToken = await new SignJWT({ type: 'access', ver: 0 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(user.user.id))
      .setJti(crypto.randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(createSecretKey(Buffer.from(server.config.AUTH_SECRET_KEY, 'utf8')));
    const listed = await sessions(oldToken);
    expect(listed.status).toBe(200);
    expect((listed.body.items as SessionItem[]).map((item) => item.current)).toEqual([false]);
    const res = await revokeOthers(oldToken);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('CONFLICT');
    expect((await refresh(user.tokens.refresh_token)).status).toBe(200);
  });
});

describe('expiry', () => {
  it('leaves a session out once its newest refresh token has expired', async () => {
    const user = await newUser(server, { prefix: 'sess_expired' });
    clock.advance(server.config.AUTH_REFRESH_TOKEN_TTL_DAYS * 86_400_000 + 1000);
    const fresh = await server.services.auth.issueSession({ user: user.auth });
    const items = (await sessions(fresh.access_token)).body.items as SessionItem[];
    expect(items).toHaveLength(1);
    expect(items[0]!.current).toBe(true);
  });
});
