// Password hashing with argon2id (the library default; parameters at OWASP's minimum or above),
// and the service's bounded use of it: argon2 runs on libuv's thread pool, which file reads and
// other crypto share, so a flood of logins must wait its turn instead of taking every thread.
import { hash, verify } from '@node-rs/argon2';
import { AppError } from '../errors.ts';
import { createWorkQueue, QueueFullError, type WorkQueue } from './work-queue.ts';

const OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

export const verifyPassword = async (passwordHash: string, password: string): Promise<boolean> => {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
};

/**
 * A hash to verify against when the username is unknown, so that a login for a user that does
 * not exist costs the same time as one for a user that does.
 */
export const createDummyHash = (): Promise<string> => hashPassword(`no-such-user-${Math.random()}`);

export interface Passwords {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
  readonly queue: Pick<WorkQueue, 'running' | 'waiting'>;
}

/** How long a caller refused for a full queue is told to wait: the queue drains in moments. */
const BUSY_RETRY_AFTER_SEC = 1;

/**
 * Hashing and verifying through one queue: at most `concurrency` at once, `maxWaiting` waiting
 * in arrival order; beyond that 429 RATE_LIMIT_EXCEEDED (Retry-After: 1) at once.
 */
export const createPasswords = ({ concurrency, maxWaiting }: { concurrency: number; maxWaiting: number }): Passwords => {
  const queue = createWorkQueue({ concurrency, maxWaiting });
  const queued = async <T>(task: () => Promise<T>): Promise<T> => {
    try {
      return await queue.run(task);
    } catch (error) {
      if (error instanceof QueueFullError) {
        throw new AppError('RATE_LIMIT_EXCEEDED', 'Too many password checks in progress; try again shortly', { retryAfterSec: BUSY_RETRY_AFTER_SEC });
      }
      throw error;
    }
  };
  return {
    hash: (password) => queued(() => hashPassword(password)),
    verify: (passwordHash, password) => queued(() => verifyPassword(passwordHash, password)),
    queue,
  };
};
