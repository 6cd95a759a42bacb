// The audit log: every write that matters records who did it, to whom, and from where, in the
// same transaction as the change itself.
import type { Queryable } from '../db/client.ts';
import { auditEvents } from '../db/schema/index.ts';

/** Where a request came from; carried into every audit record. */
export interface RequestOrigin {
  requestId: string;
  address: string;
}

export interface AuditRecord {
  action: string;
  actorUserId?: number | null;
  subjectUserId?: number | null;
  origin?: RequestOrigin;
  data?: Record<string, unknown>;
  /** The clock's instant of the change. */
  at: Date;
}

export const recordAudit = async (db: Queryable, record: AuditRecord): Promise<void> => {
  await db.insert(auditEvents).values({
    action: record.action,
    actorUserId: record.actorUserId ?? null,
    subjectUserId: record.subjectUserId ?? null,
    requestId: record.origin?.requestId ?? null,
    address: record.origin?.address ?? null,
    data: record.data ?? {},
    createdAt: record.at,
  });
};
