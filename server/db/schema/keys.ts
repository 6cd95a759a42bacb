// Exchange and broker API keys of users, encrypted at rest (AES-256-GCM, see server/keys/crypto.ts).
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';

export const exchangeKeys = pgTable(
  'exchange_keys',
  {
    userId: integer('user_id').notNull(),
    id: integer('id').notNull().generatedAlwaysAsIdentity(),
    assetClass: text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull(),
    exchange: text('exchange').notNull(),
    label: text('label').notNull(),
    permissions: text('permissions').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    paperMode: boolean('paper_mode').notNull(),
    apiKeyEnc: text('api_key_enc').notNull(),
    apiSecretEnc: text('api_secret_enc').notNull(),
    /** HMAC of the api key: finds the same key held by another user without storing it in clear. */
    apiKeyFingerprint: text('api_key_fingerprint').notNull(),
    accountNoEnc: text('account_no_enc'),
    accountProductCode: text('account_product_code'),
    baseUrl: text('base_url'),
    createdAt: createdAt(),
    updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.id] }),
    index('exchange_keys_id_idx').on(t.id),
    index('exchange_keys_fingerprint_idx').on(t.apiKeyFingerprint),
    index('exchange_keys_active_idx').on(t.userId, t.assetClass).where(sql`${t.isActive}`),
  ],
);

export type ExchangeKeyRow = typeof exchangeKeys.$inferSelect;
