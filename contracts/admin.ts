// Wire shapes of the operator routes under /api/admin.
import { z } from 'zod';
import { bodyBoolean, intParam, pageOf, ZPageQuery, ZTimestamp } from './common.ts';
import { ZUserResponse } from './auth.ts';

export const ZUserListQuery = ZPageQuery;
export const ZUserList = pageOf(ZUserResponse);
export type TUserList = z.infer<typeof ZUserList>;

export const ZUserIdPath = z.object({
  id: intParam({ min: 1, max: 2_147_483_647 }),
});

export const ZHaltRequest = z.object({ halted: bodyBoolean() });
export const ZHaltState = z.object({
  halted: z.boolean(),
  updated_at: ZTimestamp.nullable(),
});
export type THaltState = z.infer<typeof ZHaltState>;
