// The bound on concurrent password hashing: the queue's slots, its order and its limit, and the
// 429 a full queue answers (no timing: tasks finish when the test says so).
import { describe, expect, it } from 'vitest';
import { createPasswords, hashPassword } from '../../server/auth/passwords.ts';
import { createWorkQueue, QueueFullError } from '../../server/auth/work-queue.ts';

/** A task that runs until the test finishes it, recording when it started. */
const controlled = (started: number[], id: number) => {
  let finish!: (value: number) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<number>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const task = () => {
    started.push(id);
    return done;
  };
  return { task, finish: () => finish(id), fail: (error: Error) => fail(error) };
};

/** Lets every settled promise's continuations run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createWorkQueue', () => {
  it('runs at most `concurrency` tasks at once and starts the waiting ones in arrival order', async () => {
    const queue = createWorkQueue({ concurrency: 2, maxWaiting: 100 });
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const tasks = Array.from({ length: 7 }, (_, id) => controlled(started, id));
    const outcomes = tasks.map(({ task }) =>
      queue.run(async () => {
        running++;
        most = Math.max(most, running);
        try {
          return await task();
        } finally {
          running--;
        }
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect([queue.running, queue.waiting]).toEqual([2, 5]);
    // Finish out of order: each freed slot goes to the oldest waiting task.
    tasks[1]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    tasks[0]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    // A task that fails frees its slot too, and its caller gets its error.
    tasks[3]!.fail(new Error('argon2 failed'));
    await expect(outcomes[3]).rejects.toThrow('argon2 failed');
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    for (const task of tasks.slice(2)) task.finish();
    await settle();
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await Promise.allSettled(outcomes)).toMatchObject([
      { value: 0 },
      { value: 1 },
      { value: 2 },
      { status: 'rejected' },
      { value: 4 },
      { value: 5 },
      { value: 6 },
    ]);
    expect(most).toBe(2);
    expect([queue.running, queue.waiting]).toEqual([0, 0]);
  });

  it('refuses at once beyond `maxWaiting` waiting tasks, and takes tasks again once there is room', async () => {
    const queue = createWorkQueue({ concurrency: 1, maxWaiting: 2 });
    const started: number[] = [];
    const tasks = Array.from({ length: 4 }, (_, id) => controlled(started, id));
    const accepted = tasks.slice(0, 3).map(({ task }) => queue.run(task));
    await expect(queue.run(tasks[3]!.task)).rejects.toBeInstanceOf(QueueFullError);
    expect(started).toEqual([0]);
    tasks[0]!.finish();
    await settle();
    // One started, one waits: room for one more waiter, not two.
    accepted.push(queue.run(tasks[3]!.task));
    await expect(queue.run(() => Promise.resolve(-1))).rejects.toBeInstanceOf(QueueFullError);
    for (const task of tasks.slice(1)) task.finish();
    expect(await Promise.all(accepted)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
  });
});

describe('createPasswords', () => {
  it('answers 429 RATE_LIMIT_EXCEEDED with Retry-After when the hash queue is full, and verifies through the queue otherwise', async () => {
    const stored = await hashPassword('correct-horse');
    const passwords = createPasswords({ concurrency: 1, maxWaiting: 0 });
    const running = passwords.verify(stored, 'correct-horse');
    await expect(passwords.verify(stored, 'wrong-horse')).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429, retryAfterSec: 1 });
    await expect(passwords.hash('another-password')).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(await running).toBe(true);
    expect(await passwords.verify(stored, 'wrong-horse')).toBe(false);
    expect(passwords.queue).toMatchObject({ running: 0, waiting: 0 });
  });
});
