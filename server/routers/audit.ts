// /api/audit: the signed-in user's own audit trail.
import { ZAuditList, ZAuditListQuery } from '../../contracts/audit.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const tags = ['audit'];

export const auditRouter = router({
  list: authedProcedure
    .meta({ apiKeyScope: 'read', openapi: { method: 'GET', path: '/audit', tags, summary: 'Your audit trail: what was done to your account, by you or an operator, newest first', protect: true } })
    .input(ZAuditListQuery)
    .output(ZAuditList)
    .query(({ ctx, input }) => ctx.audit.listFor({ user: ctx.user, query: input })),
});
