// SQL of the audit trail's reads, and the count of records per action that the triggers keep.
import { and, count, desc, eq, like, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { auditCountChanges, auditCounts, auditEvents } from '../db/schema/index.ts';
import { tallyTotal, type Tally } from '../db/tallies.ts';

/** `%` and `_` are LIKE's wildcards: a prefix matches them literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/** Every user's records, counted per action (migration 0016). */
export const auditTally: Tally = { summary: auditCounts, changes: auditCountChanges, key: ['action'] };

/**
 * A page of audit records, newest first: one subject's, or everyone's when none is given. The
 * total is the page's when the page tells it (a page not full, or an empty first page); for
 * everyone's records, by action or not, it is the kept count's (a few dozen rows, whatever the
 * log holds); else it counts the subject's records, or the order's.
 */
export const listAuditRecords = async (
  db: Queryable,
  { subjectUserId, actionPrefix, clientOrderId, page, size }: { subjectUserId: number | undefined; actionPrefix: string | undefined; clientOrderId?: string | undefined; page: number; size: number },
) => {
  const where: SQL | undefined = and(
    subjectUserId === undefined ? undefined : eq(auditEvents.subjectUserId, subjectUserId),
    actionPrefix ? like(auditEvents.action, likePrefix(actionPrefix)) : undefined,
    // Every order record carries its client order id in its data (auditRecordOf in server/orders/records.ts).
    clientOrderId === undefined ? undefined : sql`${auditEvents.data}->>'client_order_id' = ${clientOrderId}`,
  );
  const offset = (page - 1) * size;
  const rows = await db
    .select({ id: auditEvents.id, action: auditEvents.action, actorUserId: auditEvents.actorUserId, subjectUserId: auditEvents.subjectUserId, requestId: auditEvents.requestId, address: auditEvents.address, data: auditEvents.data, createdAt: auditEvents.createdAt })
    .from(auditEvents)
    .where(where)
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(size)
    .offset(offset);
  if ((rows.length > 0 && rows.length < size) || (rows.length === 0 && offset === 0)) return { rows, total: offset + rows.length };
  if (subjectUserId === undefined && clientOrderId === undefined) {
    return { rows, total: await tallyTotal(db, auditTally, actionPrefix ? sql`action like ${likePrefix(actionPrefix)}` : sql`true`) };
  }
  const [counted] = await db.select({ total: count() }).from(auditEvents).where(where);
  return { rows, total: counted?.total ?? 0 };
};
