// Wire shapes of the audit trail: a user's own (GET /api/audit), what was done to their account,
// by them or by an operator; and the operators' view of every record (GET /api/admin/audit).
import { z } from 'zod';
import { intParam, pageOf, requestText, ZPageQuery, ZTimestamp } from './common.ts';

export const ZAuditListQuery = ZPageQuery.extend({
  /** Only records whose action starts with this, e.g. `order.` or `order.placed`. */
  action: requestText().max(64).optional(),
  /** Only the records of one order: its placement, answer, broker events and cancel (by its client order id). */
  client_order_id: requestText().max(64).optional(),
});
export type TAuditListQuery = z.infer<typeof ZAuditListQuery>;

export const ZAuditRecord = z.object({
  id: z.number().int(),
  action: z.string(),
  /** Who did it: the user, an operator, or null for the service itself (a fill, the kill switch). */
  actor_user_id: z.number().int().nullable(),
  request_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  created_at: ZTimestamp,
});
export type TAuditRecord = z.infer<typeof ZAuditRecord>;

export const ZAuditList = pageOf(ZAuditRecord);
export type TAuditList = z.infer<typeof ZAuditList>;

/** The operators' query: every user's records, or one user's (`user_id`). */
export const ZAdminAuditListQuery = ZAuditListQuery.extend({
  user_id: intParam({ min: 1, max: 2_147_483_647 }).optional(),
});
export type TAdminAuditListQuery = z.infer<typeof ZAdminAuditListQuery>;

/** An operator sees whom a record is about and where the request came from. */
export const ZAdminAuditRecord = ZAuditRecord.extend({
  subject_user_id: z.number().int().nullable(),
  address: z.string().nullable(),
});

export const ZAdminAuditList = pageOf(ZAdminAuditRecord);
export type TAdminAuditList = z.infer<typeof ZAdminAuditList>;
