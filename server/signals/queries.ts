// SQL of signal webhooks: the user's hooks and the signals they were sent. The only module that
// knows these tables.
import { and, count, desc, eq, isNull, lt } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { signals, signalWebhooks, type SignalRow, type SignalWebhookRow } from '../db/schema/index.ts';

export type SignalWebhookInsert = typeof signalWebhooks.$inferInsert;
export type SignalInsert = typeof signals.$inferInsert;

export const insertWebhook = async (db: Queryable, values: SignalWebhookInsert): Promise<SignalWebhookRow> => (await db.insert(signalWebhooks).values(values).returning())[0]!;

/** The user's hooks in force (not removed), newest first. */
export const listWebhooks = (db: Queryable, userId: number): Promise<SignalWebhookRow[]> =>
  db
    .select()
    .from(signalWebhooks)
    .where(and(eq(signalWebhooks.userId, userId), isNull(signalWebhooks.deletedAt)))
    .orderBy(desc(signalWebhooks.createdAt), desc(signalWebhooks.id));

/** The hook in force whose token has this hash, whoever's; undefined for a removed one or an old token. */
export const findWebhookByTokenHash = async (db: Queryable, tokenHash: string): Promise<SignalWebhookRow | undefined> =>
  (await db.select().from(signalWebhooks).where(and(eq(signalWebhooks.tokenHash, tokenHash), isNull(signalWebhooks.deletedAt))))[0];

/** One of the user's hooks in force; undefined for another user's, a removed one or none. */
export const findOwnedWebhook = async (db: Queryable, { userId, id }: { userId: number; id: string }): Promise<SignalWebhookRow | undefined> =>
  (await db.select().from(signalWebhooks).where(and(eq(signalWebhooks.id, id), eq(signalWebhooks.userId, userId), isNull(signalWebhooks.deletedAt))))[0];

/** Replaces the token of one of the user's hooks in force; undefined when it has no such hook. */
export const rotateWebhookToken = async (db: Queryable, { userId, id, tokenHash, tokenPrefix, at }: { userId: number; id: string; tokenHash: string; tokenPrefix: string; at: Date }) =>
  (
    await db
      .update(signalWebhooks)
      .set({ tokenHash, tokenPrefix, rotatedAt: at })
      .where(and(eq(signalWebhooks.id, id), eq(signalWebhooks.userId, userId), isNull(signalWebhooks.deletedAt)))
      .returning()
  )[0];

/** Marks one of the user's hooks removed (its signals stay listed); undefined when it has no such hook. */
export const removeWebhook = async (db: Queryable, { userId, id, at }: { userId: number; id: string; at: Date }): Promise<SignalWebhookRow | undefined> =>
  (
    await db
      .update(signalWebhooks)
      .set({ deletedAt: at })
      .where(and(eq(signalWebhooks.id, id), eq(signalWebhooks.userId, userId), isNull(signalWebhooks.deletedAt)))
      .returning()
  )[0];

export const insertSignal = async (db: Queryable, values: SignalInsert): Promise<void> => {
  await db.insert(signals).values(values);
};

export interface SignalDecision {
  status: 'accepted' | 'refused';
  qty?: string | null;
  clientOrderId?: string | null;
  brokerOrderId?: string | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  at: Date;
}

/** Writes a pending signal's outcome; undefined when it was decided already (by another placement of it). */
export const decideSignal = async (db: Queryable, id: string, { status, qty, clientOrderId, brokerOrderId, errorCode, errorMessage, at }: SignalDecision): Promise<SignalRow | undefined> =>
  (
    await db
      .update(signals)
      .set({ status, qty, clientOrderId, brokerOrderId, errorCode: errorCode ?? null, errorMessage: errorMessage ?? null, decidedAt: at })
      .where(and(eq(signals.id, id), eq(signals.status, 'pending')))
      .returning()
  )[0];

export type ListedSignal = SignalRow & { webhookName: string };

/** The user's signals, newest first, with their hooks' names, and how many there are. */
export const listSignals = async (
  db: Queryable,
  { userId, webhookId, status, limit, offset }: { userId: number; webhookId?: string; status?: SignalRow['status']; limit: number; offset: number },
): Promise<{ rows: ListedSignal[]; total: number }> => {
  const where = and(eq(signals.userId, userId), webhookId === undefined ? undefined : eq(signals.webhookId, webhookId), status === undefined ? undefined : eq(signals.status, status));
  const [rows, [counted]] = await Promise.all([
    db
      .select({ signal: signals, webhookName: signalWebhooks.name })
      .from(signals)
      .innerJoin(signalWebhooks, eq(signalWebhooks.id, signals.webhookId))
      .where(where)
      .orderBy(desc(signals.receivedAt), desc(signals.seq))
      .limit(limit)
      .offset(offset),
    db.select({ n: count() }).from(signals).where(where),
  ]);
  return { rows: rows.map(({ signal, webhookName }) => ({ ...signal, webhookName })), total: counted?.n ?? 0 };
};

/** Signals still pending that were received before `before`, oldest first, with their hooks. */
export const listStalePending = async (db: Queryable, { before, limit }: { before: Date; limit: number }) =>
  db
    .select({ signal: signals, webhook: signalWebhooks })
    .from(signals)
    .innerJoin(signalWebhooks, eq(signalWebhooks.id, signals.webhookId))
    .where(and(eq(signals.status, 'pending'), lt(signals.receivedAt, before)))
    .orderBy(signals.receivedAt)
    .limit(limit);
