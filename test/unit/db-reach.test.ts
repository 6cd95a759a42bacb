// Start-up's wait for the database (server/db/client.ts untilReachable): what it retries, how
// long it waits between tries, what it logs, and when it gives up. The clock and the sleep are
// injected: a wait moves the clock on by what it asked for, and nothing sleeps.
import { describe, expect, it } from 'vitest';
import { DatabaseNotReachedError, untilReachable } from '../../server/db/client.ts';

const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
const refused = () => coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');

const harness = () => {
  let clock = 0;
  const waits: number[] = [];
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  return {
    waits,
    warnings,
    options: (timeoutSec: number) => ({
      timeoutSec,
      now: () => clock,
      sleep: (ms: number) => {
        waits.push(ms);
        clock += ms;
        return Promise.resolve();
      },
      logger: { warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ fields, msg }) } as never,
    }),
  };
};

/** A connect that fails with each of `failures` in turn, then answers. */
const connectAfter = (failures: Error[]) => {
  let calls = 0;
  const connect = () => {
    const failure = failures[calls++];
    return failure ? Promise.reject(failure) : Promise.resolve('connected');
  };
  return { connect, calls: () => calls };
};

describe('start-up waiting for the database', () => {
  it('waits for a database that comes up later, backing off, and logs why each time', async () => {
    const { waits, warnings, options } = harness();
    const starting = coded('57P03', 'the database system is starting up');
    const { connect, calls } = connectAfter([refused(), refused(), refused(), starting, refused(), refused(), refused(), refused()]);
    expect(await untilReachable(connect, options(60))).toBe('connected');
    expect(calls()).toBe(9);
    // 250 ms, doubled after each failure, never more than 5 s.
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect(warnings).toHaveLength(8);
    expect(warnings[0]).toEqual({ msg: 'the database cannot be reached yet; start-up waits for it', fields: { attempt: 1, retryInMs: 250, reason: 'connect ECONNREFUSED 127.0.0.1:5432', giveUpInSec: 60 } });
    expect(warnings[3]?.fields.reason).toBe('57P03: the database system is starting up');
  });

  it('gives up after DB_CONNECT_TIMEOUT_SEC with the last reason, having waited no longer', async () => {
    const { waits, options } = harness();
    const failures = Array.from({ length: 100 }, refused);
    const failing = untilReachable(connectAfter(failures).connect, options(12));
    await expect(failing).rejects.toBeInstanceOf(DatabaseNotReachedError);
    await expect(failing).rejects.toThrow('the database could not be reached within DB_CONNECT_TIMEOUT_SEC (12 s); last error: connect ECONNREFUSED 127.0.0.1:5432');
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBe(12_000);
  });

  it('with DB_CONNECT_TIMEOUT_SEC=0 tries once', async () => {
    const { waits, options } = harness();
    const { connect, calls } = connectAfter([refused()]);
    await expect(untilReachable(connect, options(0))).rejects.toBeInstanceOf(DatabaseNotReachedError);
    expect(calls()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('does not wait out what waiting cannot change: a wrong password, a missing database', async () => {
    for (const failure of [coded('28P01', 'password authentication failed for user "app"'), coded('3D000', 'database "trading" does not exist')]) {
      const { waits, options } = harness();
      await expect(untilReachable(connectAfter([failure]).connect, options(60))).rejects.toBe(failure);
      expect(waits).toEqual([]);
    }
  });

  it("never logs a URL's credentials, should a driver message carry them", async () => {
    const { warnings, options } = harness();
    const leaky = coded('ENOTFOUND', 'getaddrinfo ENOTFOUND postgres://app:s3cret@db.internal:5432/trading');
    await untilReachable(connectAfter([leaky]).connect, options(60));
    expect(JSON.stringify(warnings)).not.toContain('s3cret');
    expect(warnings[0]?.fields.reason).toBe('getaddrinfo ENOTFOUND postgres://db.internal:5432/trading');
  });
});
