// Access tokens of broker app keys, shared by every instance of the service (KIS allows about one
// issuance a minute per key and tells the account holder of each, so every instance must use the
// one token). The app key is never stored: a row is found by a hash of the broker's domain and
// the key. The token is encrypted with the service's key cipher (server/keys/crypto.ts).
import { pgTable, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const brokerTokens = pgTable('broker_tokens', {
  /** SHA-256 (hex) of the domain (paper or live, and its origin) and the app key. */
  keyHash: text('key_hash').primaryKey(),
  /** `v1:…`, the key cipher's text: never the token in clear. */
  accessTokenEnc: text('access_token_enc').notNull(),
  issuedAt: tsColumn('issued_at').notNull(),
  expiresAt: tsColumn('expires_at').notNull(),
  updatedAt: tsColumn('updated_at').notNull().defaultNow(),
});

export type BrokerTokenRow = typeof brokerTokens.$inferSelect;
