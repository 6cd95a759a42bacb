// SQL of the audit trail's reads.
import { and, count, desc, eq, like, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { auditEvents } from '../db/schema/index.ts';

/** `%` and `_` are LIKE's wildcards: a prefix matches them literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/** A page of audit records, newest first: one subject's, or everyone's when none is given. */
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
  const [rows, [counted]] = await Promise.all([
    db
      .select({ id: auditEvents.id, action: auditEvents.action, actorUserId: auditEvents.actorUserId, subjectUserId: auditEvents.subjectUserId, requestId: auditEvents.requestId, address: auditEvents.address, data: auditEvents.data, createdAt: auditEvents.createdAt })
      .from(auditEvents)
      .where(where)
      .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
      .limit(size)
      .offset((page - 1) * size),
    db.select({ total: count() }).from(auditEvents).where(where),
  ]);
  return { rows, total: counted?.total ?? 0 };
};
