// The audit trail as users and operators read it, newest first, a page at a time: a user sees the
// records whose subject they are, without the request address (an operator's is not theirs to
// see); an operator sees every record, or one user's, with whom it is about and where from.
import type { TAdminAuditList, TAdminAuditListQuery, TAuditList, TAuditListQuery } from '../../contracts/audit.ts';
import type { Db } from '../db/client.ts';
import { listAuditRecords } from './queries.ts';

export type AuditTrail = ReturnType<typeof createAuditTrail>;

type AuditRow = Awaited<ReturnType<typeof listAuditRecords>>['rows'][number];

/** A record as an operator reads it; a user's view leaves out the subject (themselves) and the address. */
const operatorRecordOf = (row: AuditRow): TAdminAuditList['items'][number] => ({
  id: row.id,
  action: row.action,
  actor_user_id: row.actorUserId,
  subject_user_id: row.subjectUserId,
  request_id: row.requestId,
  address: row.address,
  data: row.data,
  created_at: row.createdAt.toISOString(),
});

export const createAuditTrail = ({ db }: { db: Db }) => {
  const pageOf = async (query: TAuditListQuery, subjectUserId: number | undefined) => {
    const { rows, total } = await listAuditRecords(db, { subjectUserId, actionPrefix: query.action, clientOrderId: query.client_order_id, page: query.page, size: query.size });
    return { items: rows.map(operatorRecordOf), total, page: query.page, size: query.size };
  };
  return {
    listFor: async ({ user, query }: { user: { id: number }; query: TAuditListQuery }): Promise<TAuditList> => {
      const page = await pageOf(query, user.id);
      return { ...page, items: page.items.map(({ subject_user_id: _subject, address: _address, ...own }) => own) };
    },
    listAll: ({ query }: { query: TAdminAuditListQuery }): Promise<TAdminAuditList> => pageOf(query, query.user_id),
  };
};
