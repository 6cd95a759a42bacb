// The service's KIS token store: one row per app key and domain in broker_tokens, shared by every
// instance, the token encrypted with the key cipher (as the keys themselves are), and the right
// to issue a lease in the `leases` table, named after the row. So an instance that starts, or
// one that did not issue, reads the token the others use instead of asking KIS for another.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { KeyCipher } from '../../keys/crypto.ts';
import type { KisStoredToken, KisTokenStore } from '../kis/index.ts';
import { releaseLease, takeLease } from '../../db/leases.ts';
import { deleteBrokerToken, findBrokerToken, saveBrokerToken } from './token-queries.ts';

const leaseName = (key: string) => `kis-token:${key}`;

export const createKisTokenStore = ({ db, cipher, clock }: { db: Db; cipher: KeyCipher; clock: Clock }): KisTokenStore => {
  const get = async (key: string): Promise<(KisStoredToken & { issuedAtDate: Date }) | undefined> => {
    const row = await findBrokerToken(db, key);
    // A row another secret wrote (AUTH_SECRET_KEY or ENCRYPTION_SALT changed) is as good as none: a new token replaces it.
    const accessToken = row && cipher.decrypt(row.accessTokenEnc);
    return row && accessToken ? { accessToken, issuedAt: row.issuedAt.getTime(), expiresAt: row.expiresAt.getTime(), issuedAtDate: row.issuedAt } : undefined;
  };
  return {
    get: async (key) => {
      const found = await get(key);
      return found && { accessToken: found.accessToken, issuedAt: found.issuedAt, expiresAt: found.expiresAt };
    },
    put: (key, token) =>
      saveBrokerToken(db, { keyHash: key, accessTokenEnc: cipher.encrypt(token.accessToken), issuedAt: new Date(token.issuedAt), expiresAt: new Date(token.expiresAt), at: clock.now() }),
    drop: async (key, accessToken) => {
      const found = await get(key);
      if (found?.accessToken === accessToken) await deleteBrokerToken(db, { keyHash: key, issuedAt: found.issuedAtDate });
    },
    claimIssue: (key, holder, nowMs, ttlMs) => takeLease(db, { name: leaseName(key), holder, now: new Date(nowMs), ttlMs }),
    releaseIssue: (key, holder) => releaseLease(db, { name: leaseName(key), holder }),
  };
};
