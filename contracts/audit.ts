// Wire shapes of a user's own audit trail (GET /api/audit): what was done to their account, by
// them or by an operator, newest first.
import { z } from 'zod';
import { pageOf, requestText, ZPageQuery, ZTimestamp } from './common.ts';

export const ZAuditListQuery = ZPageQuery.extend({
  /** Only records whose action starts with this, e.g. `order.` or `order.placed`. */
  action: requestText().max(64).optional(),
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
