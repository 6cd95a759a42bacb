// The outbound request budget shared through the database: two limiters over one database (two
// service instances; on Postgres each with a connection pool of its own), many concurrent callers
// of one key on each, a budget of 10 a second with a burst of 10, and one clock both read (moved
// by hand). Grants are counted, never timed: together the instances never get more than the
// bucket refills, one alone gets all of it, a pause set by one holds the other, unused tokens go
// back, and callers are refused rather than left hanging when the database does not answer.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLimiter } from '../../server/brokers/alpaca/limiter.ts';
import { readBudget } from '../../server/brokers/limits/queries.ts';
import { createSharedRequestLimiter, type SharedLimiterOptions } from '../../server/brokers/limits/shared-limiter.ts';
import { BrokerUnavailableError } from '../../server/brokers/types.ts';
import { manualClock } from '../../server/clock.ts';
import { openDatabase, type Db, type DatabaseHandle } from '../../server/db/client.ts';
import { capturedLogger } from '../support/logs.ts';
import { createTestDatabase, dataDirFromTemplate } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const PER_SECOND = 10;
const BURST = 10;
/** What each instance may hold for callers yet to come with this budget (prefetchOf): it bounds the overshoot. */
const PREFETCH = 1;

const clock = manualClock('2026-03-10T15:00:00.000Z');
const { logger } = capturedLogger('silent');
const handles: DatabaseHandle[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
/** Instance A's database and instance B's: two pools on Postgres, the one PGlite in-process. */
let dbA: Db;
let dbB: Db;

beforeAll(async () => {
  const database = await createTestDatabase();
  const dataDir = dataDirFromTemplate();
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }), database.drop);
  const open = async () => {
    const handle = await openDatabase({ databaseUrl: database.url, dataDir, poolSize: 3 });
    handles.push(handle);
    return handle.db;
  };
  dbA = await open();
  dbB = database.url ? await open() : dbA;
});

afterAll(async () => {
  for (const handle of handles) await handle.close();
  for (const cleanup of cleanups) await cleanup();
});

let budgets = 0;
const budgetName = () => `us:key:test-${process.pid}-${++budgets}`;

/** How many times each limiter has looked at the budget for its waiting callers (its onLook). */
const looks = new Map<RequestLimiter, number>();

const limiterOn = (db: Db, name: string, options: Partial<SharedLimiterOptions> = {}): RequestLimiter => {
  const limiter: RequestLimiter = createSharedRequestLimiter({
    db,
    clock,
    logger,
    name,
    requestsPerMinute: PER_SECOND * 60,
    burst: BURST,
    onLook: () => looks.set(limiter, (looks.get(limiter) ?? 0) + 1),
    ...options,
  });
  cleanups.unshift(() => limiter.close());
  return limiter;
};

/** Starts `count` callers on the limiter; each grant is recorded with the clock's time when it came. */
const callers = (limiter: RequestLimiter, count: number, grants: number[]) => {
  for (let i = 0; i < count; i++) limiter.take().then(() => grants.push(clock.now().getTime()), () => undefined);
};

/**
 * Waits until `expected` grants in all, then until each limiter has no caller left or has looked
 * at the budget twice more (the second look began after the first ended, so after the grants
 * counted and the clock's last move): no further grant may come at this clock time.
 */
const settlesAt = async (limiters: RequestLimiter[], grants: number[][], expected: number) => {
  const total = () => grants.reduce((sum, list) => sum + list.length, 0);
  await waitFor(() => Promise.resolve(total()), (count) => count >= expected);
  const from = limiters.map((limiter) => looks.get(limiter) ?? 0);
  await waitFor(
    () => Promise.resolve(limiters.every((limiter, i) => limiter.waiting === 0 || (looks.get(limiter) ?? 0) >= from[i]! + 2)),
    (settled) => settled,
  );
  expect(total()).toBe(expected);
};

/** The most grants in any window of `windowMs` of the clock. */
const busiestWindow = (times: number[], windowMs: number) => {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
};

/** A limiter of a fresh budget whose burst its callers have just used up. */
const emptied = async () => {
  const limiter = limiterOn(dbA, budgetName());
  const grants: number[] = [];
  callers(limiter, BURST, grants);
  await settlesAt([limiter], [grants], BURST);
  return { limiter, grants };
};

describe('the request budget shared through the database', () => {
  it('two instances with many callers each never get more together than the bucket holds and refills', async () => {
    const name = budgetName();
    const [a, b] = [limiterOn(dbA, name), limiterOn(dbB, name)];
    const grantsA: number[] = [];
    const grantsB: number[] = [];
    const startMs = clock.now().getTime();
    // More callers than the budget serves in the test: neither instance runs out of them (one that
    // did could hold a token ahead that no caller of it takes).
    callers(a, 50, grantsA);
    callers(b, 50, grantsB);
    // The burst, once, between the two: 10, not 10 each.
    await settlesAt([a, b], [grantsA, grantsB], BURST);
    // Then what refills, whole tokens only: 2.5 a quarter second.
    for (let step = 1; step <= 12; step++) {
      clock.advance(250);
      await settlesAt([a, b], [grantsA, grantsB], Math.floor(BURST + (PER_SECOND * (clock.now().getTime() - startMs)) / 1_000));
    }
    expect(grantsA.length + grantsB.length).toBe(40);
    expect(a.waiting + b.waiting).toBe(60);
    // In any second: the burst, a second's refill, and what each instance may hold ahead (the documented bound).
    expect(busiestWindow([...grantsA, ...grantsB], 1_000)).toBeLessThanOrEqual(BURST + PER_SECOND + 2 * PREFETCH);
  });

  it('one instance alone gets the whole budget, not a share of it', async () => {
    const name = budgetName();
    const alone = limiterOn(dbA, name);
    // Another instance knows the key but sends nothing: no share is set aside for it.
    limiterOn(dbB, name);
    const grants: number[] = [];
    callers(alone, 25, grants);
    await settlesAt([alone], [grants], BURST);
    clock.advance(1_000);
    await settlesAt([alone], [grants], BURST + PER_SECOND);
    clock.advance(500);
    await settlesAt([alone], [grants], 25);
  });

  it('a pause set by one instance (a 429 Retry-After) holds the other, which starts again from an empty bucket', async () => {
    const name = budgetName();
    const [a, b] = [limiterOn(dbA, name), limiterOn(dbB, name)];
    a.pause(500);
    await waitFor(() => readBudget(dbA, name), (row) => row?.pausedUntil !== null && row?.pausedUntil !== undefined);
    const grants: number[] = [];
    callers(b, 3, grants);
    await settlesAt([b], [grants], 0);
    clock.advance(400);
    await settlesAt([b], [grants], 0);
    // 100 ms after the pause: one token has refilled, not the burst.
    clock.advance(200);
    await settlesAt([b], [grants], 1);
    clock.advance(200);
    await settlesAt([b], [grants], 3);
  });

  it('gives back the tokens it held for callers who did not come', async () => {
    const name = budgetName();
    const limiter = limiterOn(dbA, name, { holdMs: 200 });
    await limiter.take();
    // One for the caller, one held ahead.
    expect((await readBudget(dbA, name))?.tokens).toBe(BURST - 1 - PREFETCH);
    clock.advance(200);
    // Back in the bucket (no refill is counted by a give-back: that is the next take's).
    await waitFor(() => readBudget(dbA, name), (row) => row?.tokens === BURST - 1);
  });

  it('close() refuses the waiting callers and every later one', async () => {
    const { limiter } = await emptied();
    const waiting = [limiter.take(), limiter.take()];
    await waitFor(() => Promise.resolve(limiter.waiting), (count) => count === 2);
    limiter.close();
    for (const refused of waiting) await expect(refused).rejects.toThrow(/closed/);
    await expect(limiter.take()).rejects.toBeInstanceOf(BrokerUnavailableError);
  });

  it('a caller whose signal aborts leaves the queue; the others keep their turn', async () => {
    const { limiter, grants } = await emptied();
    const controller = new AbortController();
    const abandoned = limiter.take(controller.signal);
    callers(limiter, 1, grants);
    controller.abort();
    await expect(abandoned).rejects.toThrow(/abandoned/);
    clock.advance(100);
    await settlesAt([limiter], [grants], BURST + 1);
    expect(limiter.waiting).toBe(0);
  });

  it('refuses the waiting callers when the database fails or does not answer, and sends nothing', async () => {
    // Stand-ins for a database that is down: one refuses at once, one never answers.
    const failing = {
      insert: () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    } as unknown as Db;
    const silent = { insert: () => ({ values: () => ({ onConflictDoUpdate: () => ({ returning: () => new Promise(() => undefined) }) }) }) } as unknown as Db;
    const down = limiterOn(failing, budgetName());
    await expect(down.take()).rejects.toThrow(/shared request budget could not be read \(connect ECONNREFUSED/);
    const hung = limiterOn(silent, budgetName(), { answerTimeoutMs: 50 });
    await expect(Promise.all([hung.take(), hung.take()])).rejects.toThrow(/no answer within 50 ms/);
    expect(hung.waiting).toBe(0);
  });
});
