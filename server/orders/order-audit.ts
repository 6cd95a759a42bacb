// The order service's audit writer: an order's audit record, written in the caller's transaction
// (or on its own), stamped by the clock.
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Queryable } from '../db/client.ts';
import { auditRecordOf, type AuditedOrder } from './records.ts';

export type OrderAudit = (tx: Queryable, row: AuditedOrder, action: string, data: Record<string, unknown>, origin?: RequestOrigin) => Promise<void>;

export const createOrderAudit =
  (clock: Clock): OrderAudit =>
  (tx, row, action, data, origin) =>
    recordAudit(tx, auditRecordOf(row, action, data, clock.now(), origin));
