// Refresh-token families (rotation with reuse detection) and failed-login throttling.
import { bigint, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { users } from './users.ts';

export const refreshTokenFamilies = pgTable(
  'refresh_token_families',
  {
    id: uuid('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    revokedAt: tsColumn('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('refresh_token_families_user_idx').on(t.userId)],
);

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    jti: uuid('jti').primaryKey(),
    familyId: uuid('family_id')
      .notNull()
      .references(() => refreshTokenFamilies.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    issuedAt: createdAt(),
    expiresAt: tsColumn('expires_at').notNull(),
    usedAt: tsColumn('used_at'),
  },
  (t) => [index('refresh_tokens_family_idx').on(t.familyId), index('refresh_tokens_expires_idx').on(t.expiresAt)],
);

export const loginFailures = pgTable(
  'login_failures',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    usernameKey: text('username_key').notNull(),
    address: text('address').notNull(),
    failedAt: createdAt(),
  },
  (t) => [index('login_failures_lookup_idx').on(t.usernameKey, t.address, t.failedAt)],
);
