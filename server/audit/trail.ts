// A user's own audit trail: the records whose subject is the user, newest first, a page at a
// time. The request address is left out: an operator's is not the user's to see.
import type { TAuditList, TAuditListQuery } from '../../contracts/audit.ts';
import type { Db } from '../db/client.ts';
import { listSubjectRecords } from './queries.ts';

export type AuditTrail = ReturnType<typeof createAuditTrail>;

export const createAuditTrail = ({ db }: { db: Db }) => ({
  listFor: async ({ user, query }: { user: { id: number }; query: TAuditListQuery }): Promise<TAuditList> => {
    const { rows, total } = await listSubjectRecords(db, { subjectUserId: user.id, actionPrefix: query.action, page: query.page, size: query.size });
    return {
      items: rows.map((row) => ({ id: row.id, action: row.action, actor_user_id: row.actorUserId, request_id: row.requestId, data: row.data, created_at: row.createdAt.toISOString() })),
      total,
      page: query.page,
      size: query.size,
    };
  },
});
