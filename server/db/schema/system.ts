// Service-wide state every instance must agree on (the operator halt, for one).
import { bigint, doublePrecision, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tsColumn } from './columns.ts';

export const systemState = pgTable('system_state', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<Record<string, unknown>>().notNull(),
  // Raised by every write: an instance keeps the newest state it has read, whatever order its
  // reloads finish in.
  version: bigint('version', { mode: 'number' }).notNull().default(0),
  updatedAt: tsColumn('updated_at').notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

/** Work one instance must do at a time (the price walk, resting-order matching): a lease in the database. */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: tsColumn('expires_at').notNull(),
});

/**
 * The outbound request budget of one broker key or exchange host, shared by every instance: a
 * token bucket (tokens left as of `refilled_at`). Instances take tokens from it in small batches
 * (server/brokers/limits/shared-limiter.ts). `name` is `us:key:<sha256 of the key>`,
 * `kr:host:<origin>` and the like, never a secret.
 */
export const brokerRequestBudgets = pgTable('broker_request_budgets', {
  name: text('name').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  /** What the latest take granted: RETURNING sees only the updated row, so the take records it. */
  granted: integer('granted').notNull(),
  /** Never moves back, whichever instance's clock wrote last; in the future during a pause. */
  refilledAt: tsColumn('refilled_at').notNull(),
  /** Set from a broker's 429 Retry-After: no instance takes a token before it. */
  pausedUntil: tsColumn('paused_until'),
});
