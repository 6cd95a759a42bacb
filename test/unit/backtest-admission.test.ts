// The per-user bound on running backtests: counted before anything is awaited, released when a
// run ends (by an answer or by an error), and kept per user.
import { describe, expect, it } from 'vitest';
import { createRunAdmission } from '../../server/backtest/admission.ts';
import { AppError } from '../../server/errors.ts';

/** A run that lasts until the test ends it. */
const heldRun = () => {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { work: () => done, finish, fail };
};

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
};

describe('createRunAdmission', () => {
  it('refuses a user past the bound with 429 and Retry-After, while other users still run', async () => {
    const admission = createRunAdmission(2);
    const first = heldRun();
    const second = heldRun();
    const a = admission.hold(1, first.work);
    const b = admission.hold(1, second.work);
    const refused = await refusal(admission.hold(1, () => Promise.resolve('third')));
    expect(refused.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.retryAfterSec).toBe(1);
    expect(refused.message).toContain('at most 2 at once');
    // Another user is not held back by the first one's runs.
    await expect(admission.hold(2, () => Promise.resolve('other user'))).resolves.toBe('other user');
    first.finish('one');
    second.finish('two');
    await expect(Promise.all([a, b])).resolves.toEqual(['one', 'two']);
    await expect(admission.hold(1, () => Promise.resolve('after'))).resolves.toBe('after');
  });

  it('gives the slot back when a run fails', async () => {
    const admission = createRunAdmission(1);
    const failing = heldRun();
    const run = admission.hold(7, failing.work);
    expect((await refusal(admission.hold(7, () => Promise.resolve('x')))).code).toBe('RATE_LIMIT_EXCEEDED');
    failing.fail(new Error('worker died'));
    await expect(run).rejects.toThrow('worker died');
    await expect(admission.hold(7, () => Promise.resolve('again'))).resolves.toBe('again');
  });

  it('gives the slot back when the work throws before it returns a promise', async () => {
    const admission = createRunAdmission(1);
    await expect(
      admission.hold(3, () => {
        throw new Error('bad request');
      }),
    ).rejects.toThrow('bad request');
    await expect(admission.hold(3, () => Promise.resolve('next'))).resolves.toBe('next');
  });
});
