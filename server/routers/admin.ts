// /api/admin: operator routes. Every one is audited and stays open while the service is halted.
import { ZHaltRequest, ZHaltState, ZUserIdPath, ZUserList, ZUserListQuery } from '../../contracts/admin.ts';
import { ZUserResponse } from '../../contracts/auth.ts';
import { listUsers, setUserActive } from '../auth/admin.ts';
import { toUserResponse } from '../auth/users.ts';
import { adminProcedure, router } from '../trpc/init.ts';

const tags = ['admin'];
const openapi = (method: 'GET' | 'POST', path: `/${string}`, summary: string) => ({ method, path, tags, summary, protect: true });

export const adminRouter = router({
  listUsers: adminProcedure
    .meta({ openapi: openapi('GET', '/admin/users', 'List users, newest first'), haltExempt: true })
    .input(ZUserListQuery)
    .output(ZUserList)
    .query(({ ctx, input }) => listUsers({ db: ctx.services.db, page: input })),

  deactivateUser: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{id}/deactivate', 'Deactivate a user; its tokens stop working at once'), haltExempt: true, errors: ['NOT_FOUND', 'CONFLICT'] })
    .input(ZUserIdPath)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) =>
      toUserResponse(await setUserActive({ db: ctx.services.db, changes: ctx.services.changes, users: ctx.services.users, actor: ctx.user, userId: input.id, active: false, origin: ctx.origin })),
    ),

  activateUser: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/users/{id}/activate', 'Reactivate a user'), haltExempt: true, errors: ['NOT_FOUND'] })
    .input(ZUserIdPath)
    .output(ZUserResponse)
    .mutation(async ({ ctx, input }) =>
      toUserResponse(await setUserActive({ db: ctx.services.db, changes: ctx.services.changes, users: ctx.services.users, actor: ctx.user, userId: input.id, active: true, origin: ctx.origin })),
    ),

  halt: adminProcedure
    .meta({ openapi: openapi('POST', '/admin/halt', 'Halt or resume the whole service'), haltExempt: true })
    .input(ZHaltRequest)
    .output(ZHaltState)
    .mutation(({ ctx, input }) => ctx.services.halt.set({ halted: input.halted, actorUserId: ctx.user.id, origin: ctx.origin })),
});
