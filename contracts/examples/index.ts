// One example request and one example answer per operation of the OpenAPI document, keyed by
// operation id (server/http/openapi.ts `operationIdOf`: `auth.login` → `authLogin`), written
// per area beside this file. server/http/openapi.ts puts them into the document;
// test/integration/openapi-examples.test.ts lists every operation without one and parses each
// with its procedure's own schemas.
import { ADMIN_SYSTEM_EXAMPLES } from './admin-system.ts';
import { ADMIN_USER_EXAMPLES } from './admin-users.ts';
import { ANALYSIS_EXAMPLES } from './analysis.ts';
import { AUDIT_EXAMPLES } from './audit.ts';
import { AUTH_EXAMPLES } from './auth.ts';
import { BACKTEST_EXAMPLES } from './backtest.ts';
import { SWEEP_EXAMPLES } from './backtest-sweeps.ts';
import { BOT_EXAMPLES } from './bot.ts';
import { HEALTH_EXAMPLES } from './health.ts';
import { KEY_EXAMPLES } from './keys.ts';
import { LIVE_EXAMPLES } from './live.ts';
import { MARKET_EXAMPLES } from './market.ts';
import { NOTIFICATION_EXAMPLES } from './notifications.ts';
import { ORDER_EXAMPLES } from './orders.ts';
import { PORTFOLIO_EXAMPLES } from './portfolio.ts';
import { SIGNAL_EXAMPLES } from './signals.ts';
import type { OperationExample } from './types.ts';

export { errorExampleOf, errorSummaryOf, validationErrorExample } from './errors.ts';
export { degradedHealthExample } from './health.ts';
export type { OperationExample } from './types.ts';

const AREAS: readonly Record<string, OperationExample>[] = [
  AUTH_EXAMPLES,
  ADMIN_USER_EXAMPLES,
  ADMIN_SYSTEM_EXAMPLES,
  MARKET_EXAMPLES,
  KEY_EXAMPLES,
  ORDER_EXAMPLES,
  PORTFOLIO_EXAMPLES,
  BACKTEST_EXAMPLES,
  SWEEP_EXAMPLES,
  ANALYSIS_EXAMPLES,
  LIVE_EXAMPLES,
  BOT_EXAMPLES,
  AUDIT_EXAMPLES,
  NOTIFICATION_EXAMPLES,
  SIGNAL_EXAMPLES,
  HEALTH_EXAMPLES,
];

const EXAMPLES = new Map<string, OperationExample>();
for (const area of AREAS) {
  for (const [id, found] of Object.entries(area)) {
    if (EXAMPLES.has(id)) throw new Error(`Two example modules give examples of ${id}`);
    EXAMPLES.set(id, found);
  }
}

/** The examples of the operation `operationId`, or undefined when none are written (the test lists it). */
export const examplesOf = (operationId: string): OperationExample | undefined => EXAMPLES.get(operationId);

/** Every operation id examples are written for: each must name an operation of the document (the test checks). */
export const exampledOperationIds = (): string[] => [...EXAMPLES.keys()];
