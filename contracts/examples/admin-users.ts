// Examples of the operator's routes about users under /api/admin: the user list and detail, the
// audit trail, deactivation, live controls and the force stop of a bot.
import type { ZAdminUserDetail, ZUserIdPath, ZUserList, ZUserListQuery } from '../admin.ts';
import type { ZAdminAuditList, ZAdminAuditListQuery } from '../audit.ts';
import type { ZUserResponse } from '../auth.ts';
import type { ZBotForceStopped } from '../bot.ts';
import type { ZLiveDisabled, ZLockCleared, ZUserAssetClassRequest } from '../live.ts';
import { EXAMPLE_AUDIT_RECORD } from './audit.ts';
import { EXAMPLE_USER } from './auth.ts';
import { EXAMPLE_BOT } from './bot.ts';
import { example, type OperationExample } from './types.ts';

/** A paper-only account's live state: never enabled, no lock, nothing counted today. */
const PAPER_ONLY = { live_enabled: false, first_live_order_at: null, locked_until: null, live_orders_today: 0, daily_limit: 10, lock_reason: null };

export const ADMIN_USER_EXAMPLES: Record<string, OperationExample> = {
  adminListUsers: example<typeof ZUserListQuery, typeof ZUserList>({
    input: { page: 1, size: 20 },
    output: {
      items: [EXAMPLE_USER, { id: 43, username: 'bob_swing', email: 'bob@example.com', role: 'user', is_active: false, created_at: '2026-09-14T12:00:05.000Z' }],
      total: 2,
      page: 1,
      size: 20,
    },
  }),
  adminUserDetail: example<typeof ZUserIdPath, typeof ZAdminUserDetail>({
    input: { user_id: 42 },
    output: {
      ...EXAMPLE_USER,
      live: {
        crypto: { live_enabled: true, first_live_order_at: '2026-11-20T09:30:12.000Z', locked_until: null, live_orders_today: 3, daily_limit: 10, lock_reason: null },
        us_equity: PAPER_ONLY,
        kr_equity: PAPER_ONLY,
      },
      bot: EXAMPLE_BOT,
    },
  }),
  adminAuditLog: example<typeof ZAdminAuditListQuery, typeof ZAdminAuditList>({
    input: { page: 1, size: 20, action: 'order.', client_order_id: 'dca-btc-2026-12-02-001', user_id: 42 },
    output: { items: [{ ...EXAMPLE_AUDIT_RECORD, subject_user_id: 42, address: '203.0.113.24' }], total: 1, page: 1, size: 20 },
  }),
  adminDeactivateUser: example<typeof ZUserIdPath, typeof ZUserResponse>({ input: { user_id: 43 }, output: { id: 43, username: 'bob_swing', email: 'bob@example.com', role: 'user', is_active: false, created_at: '2026-09-14T12:00:05.000Z' } }),
  adminActivateUser: example<typeof ZUserIdPath, typeof ZUserResponse>({ input: { user_id: 43 }, output: { id: 43, username: 'bob_swing', email: 'bob@example.com', role: 'user', is_active: true, created_at: '2026-09-14T12:00:05.000Z' } }),
  adminDisableLive: example<typeof ZUserAssetClassRequest, typeof ZLiveDisabled>({ input: { user_id: 42, asset_class: 'crypto' }, output: { user_id: 42, asset_class: 'crypto', live_enabled: false } }),
  adminClearLock: example<typeof ZUserAssetClassRequest, typeof ZLockCleared>({ input: { user_id: 42, asset_class: 'crypto' }, output: { user_id: 42, asset_class: 'crypto', locked_until: null, cleared: true } }),
  adminStopUserBot: example<typeof ZUserIdPath, typeof ZBotForceStopped>({
    input: { user_id: 42 },
    output: { ...EXAMPLE_BOT, is_running: false, stopped_at: '2026-12-02T04:20:00.000Z', stopped_by: 'admin', ts: '2026-12-02T04:20:00.000Z', user_id: 42 },
  }),
};
