// SQL on broker access tokens (broker_tokens): the only module that knows their columns. The
// right to issue a token is a lease in the `leases` table (server/brokers/simulator/queries.ts).
import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { brokerTokens, type BrokerTokenRow } from '../../db/schema/index.ts';

export const findBrokerToken = async (db: Queryable, keyHash: string): Promise<BrokerTokenRow | undefined> =>
  (await db.select().from(brokerTokens).where(eq(brokerTokens.keyHash, keyHash)))[0];

/** Saves the key's token, replacing the one before. */
export const saveBrokerToken = async (db: Queryable, values: { keyHash: string; accessTokenEnc: string; issuedAt: Date; expiresAt: Date; at: Date }): Promise<void> => {
  const { at, ...fields } = values;
  await db
    .insert(brokerTokens)
    .values({ ...fields, updatedAt: at })
    .onConflictDoUpdate({ target: brokerTokens.keyHash, set: { accessTokenEnc: fields.accessTokenEnc, issuedAt: fields.issuedAt, expiresAt: fields.expiresAt, updatedAt: at } });
};

/**
 * Deletes the key's token if it is still the one issued at `issuedAt` (the ciphertext differs on
 * every write, so the issue instant names the token): a newer one saved meanwhile stays.
 */
export const deleteBrokerToken = async (db: Queryable, { keyHash, issuedAt }: { keyHash: string; issuedAt: Date }): Promise<void> => {
  await db.delete(brokerTokens).where(and(eq(brokerTokens.keyHash, keyHash), eq(brokerTokens.issuedAt, issuedAt)));
};
