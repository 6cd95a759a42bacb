// Refresh-token families (rotation with reuse detection), failed-login throttling, and personal API keys.
import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
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

/**
 * Attempt counters for throttled unauthenticated work: failed logins per username and address
 * (`login`) and per address alone (`login_address`, key ''), password changes per user
 * (`password`), registrations per address (`register`, key ''). One row per key, updated under
 * its row lock, so the count and the decision to let an attempt through are one atomic step.
 * The scope's enum is TypeScript's only: the column is plain text, so a new scope needs no
 * migration.
 */
export const authThrottle = pgTable(
  'auth_throttle',
  {
    scope: text('scope', { enum: ['login', 'login_address', 'password', 'register'] }).notNull(),
    key: text('key').notNull(),
    address: text('address').notNull(),
    attempts: integer('attempts').notNull(),
    windowStartedAt: tsColumn('window_started_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key, t.address] }), index('auth_throttle_window_idx').on(t.windowStartedAt)],
);

/**
 * Personal API keys (DESIGN §6 "Integrations"): a program's credential with scopes. Only the
 * SHA-256 of the secret is kept (a key is 32 random bytes: no salt or slow hash is needed to keep
 * it unguessable); its first characters are kept to tell keys apart in a list.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The secret's first characters (`tsk_` and four more), shown in lists. */
    prefix: text('prefix').notNull(),
    /** Hex SHA-256 of the whole secret. */
    secretHash: text('secret_hash').notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    createdAt: createdAt(),
    expiresAt: tsColumn('expires_at'),
    lastUsedAt: tsColumn('last_used_at'),
    revokedAt: tsColumn('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [uniqueIndex('api_keys_secret_key').on(t.secretHash), index('api_keys_user_idx').on(t.userId)],
);
