// Live promotion over HTTP: readiness from the paper record, the confirm token's state table row
// by row (issue, enable, expiry through the injected clock, reissue, wrong owner, reuse,
// concurrent enable), delivery to the log (once, under its key) or by e-mail to a local SMTP
// sink, and the bot check against a local siteverify fake.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { auditEvents, liveConfirmTokens, liveFlags } from '../../server/db/schema/index.ts';
import { newPaperRecord, newUser, type FactoryUser } from '../support/factories.ts';
import { startFakeBotCheck } from '../support/fake-botcheck.ts';
import { startFakeSmtp } from '../support/fake-smtp.ts';
import { capturedLogger } from '../support/logs.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const clock = manualClock('2026-06-01T12:00:00Z');
const logs = capturedLogger('info');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ RISK_PAPER_MIN_DAYS: '90', RISK_PAPER_MIN_TRADES: '3' }, undefined, { clock, logger: logs.logger });
});
afterAll(() => server.stop());

const DAY = 86_400_000;
const fresh = async (user: FactoryUser): Promise<FactoryUser> => ({ ...user, tokens: await server.services.auth.issueSession({ user: user.auth }) });
const call = (srv: TestServer, user: FactoryUser, path: string, body: Record<string, unknown>) => srv.http('POST', `/api/operations/live/${path}`, { token: user.tokens.access_token, body });

/** A user whose crypto paper record passes: 100 days, 3 filled orders. */
const validated = async (srv: TestServer, prefix: string) => {
  const user = await newUser(srv, { prefix });
  await newPaperRecord(srv, { userId: user.user.id, assetClass: 'crypto', firstAt: new Date(clock.now().getTime() - 100 * DAY), filled: 3 });
  return user;
};

/** The tokens the log shows for a user, in order. */
const loggedTokens = (userId: number): string[] =>
  logs.lines.filter((line) => line.userId === userId && typeof line.live_confirm_token === 'string').map((line) => line.live_confirm_token as string);

const issue = async (user: FactoryUser, assetClass = 'crypto') => {
  const res = await call(server, user, 'confirm/issue', { asset_class: assetClass });
  expect(res.status, res.text).toBe(201);
  return loggedTokens(user.user.id).at(-1)!;
};
const enable = (user: FactoryUser, token: string) => call(server, user, 'enable', { confirm_token: token });
const liveFlag = async (userId: number) =>
  (await server.services.db.select().from(liveFlags).where(and(eq(liveFlags.userId, userId), eq(liveFlags.assetClass, 'crypto'))))[0]?.liveEnabled ?? false;

describe('POST /api/operations/live/readiness', () => {
  it('counts paper days from the first paper order and filled paper orders, and says what is missing', async () => {
    const user = await newUser(server, { prefix: 'ready' });
    const none = await call(server, user, 'readiness', { asset_class: 'crypto' });
    expect(none.status, none.text).toBe(200);
    expect(none.body).toMatchObject({ ok: false, asset_class: 'crypto', paper_days: 0, paper_trades: 0, required_days: 90, required_trades: 3 });
    expect(none.body.reasons).toHaveLength(2);

    await newPaperRecord(server, { userId: user.user.id, assetClass: 'crypto', firstAt: new Date(clock.now().getTime() - 89 * DAY - 1000), filled: 3 });
    const short = await call(server, user, 'readiness', { asset_class: 'crypto' });
    expect(short.body).toMatchObject({ ok: false, paper_days: 89, paper_trades: 3 });
    expect(short.body.reasons).toEqual(['89 days of paper trading; 90 required']);

    clock.advance(DAY);
    const later = await fresh(user);
    const ok = await call(server, later, 'readiness', { asset_class: 'crypto' });
    expect(ok.body).toMatchObject({ ok: true, paper_days: 90, paper_trades: 3, reasons: [] });
    // Another asset class has its own record.
    expect((await call(server, later, 'readiness', { asset_class: 'us_equity' })).body.ok).toBe(false);
    expect((await call(server, later, 'readiness', { asset_class: 'forex' })).status).toBe(422);
  });
});

describe('the confirm token, row by row', () => {
  it('(none) → issue: 403 PAPER_VALIDATION_REQUIRED without a passing paper record, nothing stored', async () => {
    const user = await newUser(server, { prefix: 'unready' });
    await newPaperRecord(server, { userId: user.user.id, assetClass: 'crypto', firstAt: new Date(clock.now().getTime() - 100 * DAY), filled: 2 });
    const res = await call(server, user, 'confirm/issue', { asset_class: 'crypto' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('PAPER_VALIDATION_REQUIRED');
    expect(await server.services.db.select().from(liveConfirmTokens).where(eq(liveConfirmTokens.userId, user.user.id))).toEqual([]);
  });

  it('(none) → active: 201 with the expiry; only the sha256 is stored; the token is logged once at warn under live_confirm_token', async () => {
    const user = await validated(server, 'issue');
    const res = await call(server, user, 'confirm/issue', { asset_class: 'crypto' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ asset_class: 'crypto', expires_at: new Date(clock.now().getTime() + 12 * 3_600_000).toISOString(), delivery: 'log' });
    const tokens = loggedTokens(user.user.id);
    expect(tokens).toHaveLength(1);
    const token = tokens[0]!;
    const line = logs.lines.find((entry) => entry.live_confirm_token === token)!;
    expect(line.level).toBe('warn');
    // Exactly once in the whole log, and nowhere in the database.
    expect(logs.text().split(token).length - 1).toBe(1);
    const [stored] = await server.services.db.select().from(liveConfirmTokens).where(eq(liveConfirmTokens.userId, user.user.id));
    expect(stored!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(token.slice(4, 20));
    const [audit] = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'live.confirm_issued')));
    expect(JSON.stringify(audit!.data)).not.toContain(token);
  });

  it('active → consumed: enable sets live_enabled for the token’s asset class, audited in its transaction; a reuse is 403', async () => {
    const user = await validated(server, 'enable');
    const token = await issue(user);
    expect(await liveFlag(user.user.id)).toBe(false);
    const res = await enable(user, token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ asset_class: 'crypto', live_enabled: true });
    expect(await liveFlag(user.user.id)).toBe(true);
    const status = await server.http('GET', '/api/operations/live/status', { token: user.tokens.access_token });
    expect(status.body.crypto.live_enabled).toBe(true);
    const audited = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'live.enabled')));
    expect(audited.map((row) => row.data)).toEqual([{ asset_class: 'crypto' }]);

    const reuse = await enable(user, token);
    expect([reuse.status, reuse.body.code]).toEqual([403, 'CONFIRM_TOKEN_INVALID']);
  });

  it('active → expired: 12 hours later enable is 403 and the flag stays off', async () => {
    const user = await validated(server, 'expire');
    const token = await issue(user);
    clock.advance(12 * 3_600_000);
    const late = await enable(await fresh(user), token);
    expect([late.status, late.body.code]).toEqual([403, 'CONFIRM_TOKEN_INVALID']);
    expect(await liveFlag(user.user.id)).toBe(false);
  });

  it('active → inactive: a reissue makes the earlier token unusable; the new one works', async () => {
    const user = await validated(server, 'reissue');
    const first = await issue(user);
    const second = await issue(user, 'crypto');
    expect(second).not.toBe(first);
    expect((await enable(user, first)).status).toBe(403);
    expect((await enable(user, second)).status).toBe(200);
  });

  it('another user’s token is 403 and stays usable by its owner; a wrong or forged token is 403', async () => {
    const owner = await validated(server, 'owner');
    const other = await validated(server, 'other');
    const token = await issue(owner);
    const stolen = await enable(other, token);
    expect([stolen.status, stolen.body.code]).toEqual([403, 'CONFIRM_TOKEN_INVALID']);
    expect(await liveFlag(other.user.id)).toBe(false);
    const [nonce] = token.slice(4).split('.');
    for (const wrong of ['nonsense', `${token}x`, `lct_${nonce}.${'A'.repeat(43)}`]) {
      const res = await enable(owner, wrong);
      expect([res.status, res.body.code], wrong).toEqual([403, 'CONFIRM_TOKEN_INVALID']);
    }
    expect((await enable(owner, token)).status).toBe(200);
    expect((await call(server, owner, 'enable', {})).status).toBe(422);
  });

  it('two enables at once with one token: exactly one 200', async () => {
    const user = await validated(server, 'race');
    const token = await issue(user);
    const answers = await Promise.all([enable(user, token), enable(user, token), enable(user, token)]);
    expect(answers.map((res) => res.status).sort()).toEqual([200, 403, 403]);
    const audited = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, user.user.id), eq(auditEvents.action, 'live.enabled')));
    expect(audited).toHaveLength(1);
  });
});

describe('with SMTP and the bot check configured', () => {
  it('e-mails the token to the user (not the log), and enable needs a bot check that the verifier accepts', async () => {
    const smtp = await startFakeSmtp();
    const verifier = await startFakeBotCheck({ secret: 'botcheck-secret-value' });
    const mailLogs = capturedLogger('info');
    const other = await startTestServer(
      {
        RISK_PAPER_MIN_DAYS: '90',
        RISK_PAPER_MIN_TRADES: '3',
        SMTP_HOST: smtp.host,
        SMTP_PORT: String(smtp.port),
        SMTP_FROM: 'trading@example.com',
        BOTCHECK_SECRET_KEY: 'botcheck-secret-value',
        BOTCHECK_VERIFY_URL: verifier.url,
      },
      undefined,
      { clock, logger: mailLogs.logger },
    );
    try {
      const user = await validated(other, 'mailed');
      const res = await call(other, user, 'confirm/issue', { asset_class: 'crypto' });
      expect(res.status, res.text).toBe(201);
      expect(res.body.delivery).toBe('email');
      const message = smtp.messages.find((sent) => sent.to.includes(`${user.username}@example.com`))!;
      const token = /Confirmation token: (\S+)/.exec(message.text)![1]!;
      expect(mailLogs.text()).not.toContain(token);
      expect(mailLogs.lines.some((line) => 'live_confirm_token' in line)).toBe(false);

      const without = await call(other, user, 'enable', { confirm_token: token });
      expect([without.status, without.body.code]).toEqual([403, 'BOTCHECK_FAILED']);
      const refused = await call(other, user, 'enable', { confirm_token: token, botcheck_token: 'fail-me' });
      expect([refused.status, refused.body.code]).toEqual([403, 'BOTCHECK_FAILED']);
      // A failed bot check leaves the token active.
      const passed = await call(other, user, 'enable', { confirm_token: token, botcheck_token: 'pass-123' });
      expect(passed.status, passed.text).toBe(200);
      expect(verifier.requests.at(-1)).toEqual({ contentType: 'application/x-www-form-urlencoded;charset=UTF-8', form: { secret: 'botcheck-secret-value', response: 'pass-123', remoteip: '127.0.0.1' } });
      expect(mailLogs.text()).not.toContain('botcheck-secret-value');

      // A verifier that cannot be reached fails the check closed.
      await verifier.close();
      const next = await call(other, user, 'confirm/issue', { asset_class: 'crypto' });
      expect(next.status).toBe(201);
      const second = /Confirmation token: (\S+)/.exec(smtp.messages.at(-1)!.text)![1]!;
      const down = await call(other, user, 'enable', { confirm_token: second, botcheck_token: 'pass-456' });
      expect([down.status, down.body.code]).toEqual([403, 'BOTCHECK_FAILED']);
    } finally {
      await other.stop();
      await smtp.close();
      await verifier.close().catch(() => undefined);
    }
  });
});
