// Example of GET /api/audit: the caller's own audit trail.
import type { TAuditRecord, ZAuditList, ZAuditListQuery } from '../audit.ts';
import { example, type OperationExample } from './types.ts';

/** The placement of the order of the orders examples, as its owner's audit trail shows it. */
export const EXAMPLE_AUDIT_RECORD: TAuditRecord = {
  id: 9817,
  action: 'order.placed',
  actor_user_id: 42,
  request_id: 'b7d1e2f3-4a5b-4c6d-8e9f-0a1b2c3d4e5f',
  data: { client_order_id: 'dca-btc-2026-12-02-001', symbol: 'BTC/USDT', side: 'buy', qty: 0.05, order_type: 'limit' },
  created_at: '2026-12-02T04:10:03.498Z',
};

export const AUDIT_EXAMPLES: Record<string, OperationExample> = {
  auditList: example<typeof ZAuditListQuery, typeof ZAuditList>({
    input: { page: 1, size: 20, action: 'order.', client_order_id: 'dca-btc-2026-12-02-001' },
    output: { items: [EXAMPLE_AUDIT_RECORD], total: 1, page: 1, size: 20 },
  }),
};
