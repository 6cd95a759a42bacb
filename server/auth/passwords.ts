// Password hashing with argon2id (the library default; parameters at OWASP's minimum or above).
import { hash, verify } from '@node-rs/argon2';

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
