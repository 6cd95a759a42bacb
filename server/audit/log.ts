// The audit log: every write that matters records who did it, to whom, and from where, in the
// same transaction as the change itself.
import type { SQL } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { fixedSql } from '../db/fixed-sql.ts';
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
  await db.execute(auditInsertSql([record]));
};

/**
 * The insert of audit records as one SQL statement, for a caller that folds it into a larger
 * statement (a data-modifying CTE): written only when `when` holds, e.g. that the change it
 * records was made by the same statement. The records travel as one JSON parameter: the
 * statement's text is the same for any number of them (one prepared statement), and building it
 * costs a JSON.stringify rather than seven bound values a record.
 */
export const auditInsertSql = (records: readonly AuditRecord[], when?: SQL): SQL => {
  const rows = records.map((record) => ({
    action: record.action,
    actor_user_id: record.actorUserId ?? null,
    subject_user_id: record.subjectUserId ?? null,
    request_id: record.origin?.requestId ?? null,
    address: record.origin?.address ?? null,
    data: record.data ?? {},
    created_at: record.at.toISOString(),
  }));
  return fixedSql`insert into ${auditEvents} (action, actor_user_id, subject_user_id, request_id, address, data, created_at)
    select action, actor_user_id, subject_user_id, request_id, address, data, created_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as records(action text, actor_user_id integer, subject_user_id integer, request_id text, address text, data jsonb, created_at timestamptz)
    ${when ? fixedSql`where ${when}` : fixedSql``}`;
};

/**
 * The removal, as one SQL statement for a larger one, of an order's records of `action` that the
 * running transaction wrote itself, when `when` holds: a change taken back before its commit (an
 * order's intent refused under the account's lock), so that no one has seen them and the log
 * stays append-only for every reader. Records of other transactions are never touched.
 */
export const ownOrderRecordsRemovalSql = ({ subjectUserId, clientOrderId, action }: { subjectUserId: number; clientOrderId: string; action: string }, when: SQL): SQL =>
  fixedSql`delete from ${auditEvents}
    where subject_user_id = ${subjectUserId}::integer and (data->>'client_order_id') = ${clientOrderId}::text and action = ${action}::text
      and xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text and ${when}`;
