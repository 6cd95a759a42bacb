// The auth sweep removes rows that can never matter again and nothing else.
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authThrottle, outboxEvents, refreshTokenFamilies, refreshTokens } from '../../server/db/schema/index.ts';
import { sweepExpiredAuthRows } from '../../server/jobs/auth-sweep.ts';
import { AUTH_SWEEP, EXPIRE_DAY_ORDERS, FOLD_COUNTS, KILL_SWITCH_SWEEP, PRUNE_EVENTS, RECONCILE_ORDERS, SIGNALS_SWEEP } from '../../server/jobs/index.ts';
import { newUser } from '../support/factories.ts';
import { waitFor } from '../support/wait.ts';
import { registerAndLogin, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ WORKERS_IN_PROCESS: 'false' });
});
afterAll(() => server.stop());

const jtiOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).jti as string;

describe('auth sweep', () => {
  it('deletes expired refresh tokens, emptied families and stale throttle counters (a registration counter after its hour), keeping live ones', async () => {
    const { db } = server.services;
    const live = await registerAndLogin(server, 'sweep_live');
    const stale = await registerAndLogin(server, 'sweep_stale');
    const staleJti = jtiOf(stale.tokens.refresh_token);
    await db.update(refreshTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(refreshTokens.jti, staleJti));
    await db.insert(authThrottle).values([
      { scope: 'login', key: 'someone', address: '127.0.0.1', attempts: 3, windowStartedAt: new Date(Date.now() - 16 * 60_000) },
      { scope: 'login', key: 'someone', address: '127.0.0.2', attempts: 1, windowStartedAt: new Date() },
      { scope: 'register', key: '', address: '127.0.0.3', attempts: 20, windowStartedAt: new Date(Date.now() - 30 * 60_000) },
      { scope: 'register', key: '', address: '127.0.0.4', attempts: 20, windowStartedAt: new Date(Date.now() - 61 * 60_000) },
    ]);

    const removed = await sweepExpiredAuthRows({ db, loginWindowMin: 15, now: new Date() });
    expect(removed).toEqual({ refreshTokens: 1, families: 1, throttles: 2 });
    // A registration counter lives its hour, longer than the login window.
    const registerRows = await db.select().from(authThrottle).where(and(eq(authThrottle.scope, 'register'), inArray(authThrottle.address, ['127.0.0.3', '127.0.0.4'])));
    expect(registerRows.map((row) => row.address)).toEqual(['127.0.0.3']);

    const left = await db.select().from(refreshTokens).where(inArray(refreshTokens.jti, [staleJti, jtiOf(live.tokens.refresh_token)]));
    expect(left.map((row) => row.jti)).toEqual([jtiOf(live.tokens.refresh_token)]);
    expect(await db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.userId, stale.user.id))).toEqual([]);
    expect((await db.select().from(authThrottle).where(eq(authThrottle.key, 'someone'))).map((row) => row.address)).toEqual(['127.0.0.2']);
    // The live session still rotates.
    expect((await server.http('POST', '/api/auth/refresh', { body: { refresh_token: live.tokens.refresh_token } })).status).toBe(200);
  });
});

describe('the job queue (pg-boss)', () => {
  let withWorkers: TestServer;
  beforeAll(async () => {
    withWorkers = await startTestServer({ WORKERS_IN_PROCESS: 'true' });
  });
  afterAll(() => withWorkers.stop());

  it('schedules the auth sweep hourly, and day-order expiry, the kill switch sweep, the counts fold and the signals sweep every minute, and runs the sweep as a queued job', async () => {
    const boss = withWorkers.workers!.boss;
    const schedules = await boss.getSchedules();
    expect(schedules.map((schedule) => [schedule.name, schedule.cron]).sort()).toEqual([[RECONCILE_ORDERS, '* * * * *'], [AUTH_SWEEP, '17 * * * *'], [EXPIRE_DAY_ORDERS, '* * * * *'], [PRUNE_EVENTS, '41 * * * *'], [KILL_SWITCH_SWEEP, '* * * * *'], [FOLD_COUNTS, '* * * * *'], [SIGNALS_SWEEP, '* * * * *']].sort());
    const { db } = withWorkers.services;
    const user = await newUser(withWorkers, { prefix: 'job_sweep' });
    await db.update(refreshTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(refreshTokens.userId, user.user.id));
    await boss.send(AUTH_SWEEP, {});
    const left = await waitFor(() => db.select().from(refreshTokenFamilies).where(eq(refreshTokenFamilies.userId, user.user.id)), (rows) => rows.length === 0, 30_000);
    expect(left).toEqual([]);
  });

  it('prunes events older than EVENTS_RETENTION_HOURS from the outbox, and keeps the newer ones', async () => {
    const boss = withWorkers.workers!.boss;
    const { db, events } = withWorkers.services;
    const user = await newUser(withWorkers, { prefix: 'job_prune' });
    const hour = 3_600_000;
    const frame = { type: 'order_event' };
    await db.transaction((tx) =>
      events.append(tx, [
        { userId: user.user.id, channel: 'orders', frame: { ...frame, age: 'old' }, at: new Date(Date.now() - 73 * hour) },
        { userId: user.user.id, channel: 'orders', frame: { ...frame, age: 'recent' }, at: new Date(Date.now() - 71 * hour) },
      ]),
    );
    await boss.send(PRUNE_EVENTS, {});
    const left = await waitFor(() => db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.user.id)), (rows) => rows.length === 1, 30_000);
    expect(left.map((row) => row.frame.age)).toEqual(['recent']);
  });
});
