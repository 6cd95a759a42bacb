// Signal webhooks (DESIGN §6 "Integrations"): a user's hooks (their tokens kept as hashes) and
// every signal a hook was sent, with what became of it. A removed hook keeps its row, marked
// deleted, so that its signals stay listed with its name.
import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tsColumn } from './columns.ts';
import { decimal } from './instruments.ts';
import { users } from './users.ts';

const assetClass = () => text('asset_class', { enum: ['crypto', 'us_equity', 'kr_equity'] }).notNull();
const mode = () => text('mode', { enum: ['paper', 'live'] }).notNull();

export const signalWebhooks = pgTable(
  'signal_webhooks',
  {
    id: uuid('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    assetClass: assetClass(),
    mode: mode(),
    maxLagSec: integer('max_lag_sec').notNull(),
    /** Hex SHA-256 of the token; a rotation replaces it, so the old token finds no hook. */
    tokenHash: text('token_hash').notNull(),
    /** The token's first characters, shown in lists. */
    tokenPrefix: text('token_prefix').notNull(),
    /** Hex SHA-256 of the hook's id and its passphrase; null when it has none. */
    passphraseHash: text('passphrase_hash'),
    createdAt: createdAt(),
    rotatedAt: tsColumn('rotated_at'),
    deletedAt: tsColumn('deleted_at'),
  },
  (t) => [uniqueIndex('signal_webhooks_token_key').on(t.tokenHash), index('signal_webhooks_user_idx').on(t.userId)],
);

export const signals = pgTable(
  'signals',
  {
    id: uuid('id').primaryKey(),
    /** Arrival order, for signals received at one instant (a burst of alerts). */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => signalWebhooks.id, { onDelete: 'cascade' }),
    assetClass: assetClass(),
    mode: mode(),
    receivedAt: tsColumn('received_at').notNull(),
    status: text('status', { enum: ['pending', 'accepted', 'refused', 'invalid'] }).notNull(),
    symbol: text('symbol'),
    side: text('side', { enum: ['buy', 'sell'] }),
    orderType: text('order_type'),
    /** The quantity ordered: the signal's, or what its fraction came to at placement. */
    qty: decimal('qty'),
    qtyPct: decimal('qty_pct'),
    alertId: text('alert_id'),
    /** The validated body without its passphrase: what a placement (or its retry after a restart) orders. */
    payload: jsonb('payload').$type<Record<string, unknown>>(),
    clientOrderId: text('client_order_id'),
    brokerOrderId: text('broker_order_id'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    decidedAt: tsColumn('decided_at'),
  },
  (t) => [
    index('signals_user_received_idx').on(t.userId, t.receivedAt, t.seq),
    // The list's filters (one hook's signals, one outcome's): a page reads a page, whatever the share.
    index('signals_user_webhook_received_idx').on(t.userId, t.webhookId, t.receivedAt, t.seq),
    index('signals_user_status_received_idx').on(t.userId, t.status, t.receivedAt, t.seq),
    // The sweep's read: the few signals still waiting for their placement.
    index('signals_pending_idx').on(t.receivedAt).where(sql`${t.status} = 'pending'`),
  ],
);

export type SignalWebhookRow = typeof signalWebhooks.$inferSelect;
export type SignalRow = typeof signals.$inferSelect;
