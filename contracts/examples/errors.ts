// Example error bodies of the OpenAPI document: one per error code, the ErrorBody envelope as the
// runtime writes it. Each message is one the service really answers with for that code (the
// call site is named beside it), so a reader of the document learns what a client will see.
// The table is a Record over every code: adding a code without an example fails to compile.
import { statusOf, type TAppErrorCode, type TErrorBody } from '../errors.ts';

/** When the code is answered (the example's summary), and what the service says then. */
interface ErrorCase {
  summary: string;
  message: string;
}

const ERROR_CASES: Readonly<Record<TAppErrorCode, ErrorCase>> = {
  // trpc/errors.ts describeError: the input fails its schema; the 422 of each operation names a field of its own input.
  VALIDATION_ERROR: { summary: 'The request fails its input schema', message: 'Request validation failed' },
  // http/malformed.ts: Node's parser refuses the request.
  BAD_REQUEST: { summary: 'The HTTP request is malformed', message: 'Malformed HTTP request' },
  // trpc/init.ts authorize.
  UNAUTHORIZED: { summary: 'No valid access token', message: 'Missing bearer token' },
  // trpc/init.ts authorize.
  FORBIDDEN: { summary: 'The caller’s role or account does not allow it', message: 'Admin role required' },
  // users/users.ts (operator routes); other routes name what they did not find.
  NOT_FOUND: { summary: 'What the path names does not exist', message: 'User not found' },
  // auth/auth.ts register.
  CONFLICT: { summary: 'The request clashes with the current state', message: 'Username or e-mail is already registered' },
  // http/rest.ts bodyOf, with the default BODY_LIMIT_BYTES.
  PAYLOAD_TOO_LARGE: { summary: 'The body is larger than BODY_LIMIT_BYTES', message: 'Body larger than 1048576 bytes' },
  // http/server.ts notAllowed.
  METHOD_NOT_ALLOWED: { summary: 'The path does not take this method', message: 'PUT is not allowed here; allowed: GET' },
  // http/io.ts unreadableBody.
  UNSUPPORTED_MEDIA_TYPE: { summary: 'The body is declared as a media type the route does not read', message: 'Content-Type text/plain is not accepted here; send application/json' },
  // http/malformed.ts.
  HEADERS_TOO_LARGE: { summary: 'The request headers are too large', message: 'Request headers too large' },
  // http/rest.ts: the cause is logged, never echoed.
  INTERNAL_ERROR: { summary: 'A fault of the service', message: 'Internal server error' },
  // trpc/init.ts guard (errors.ts default message).
  SERVICE_HALTED: { summary: 'An operator has halted the service', message: 'The service is halted by an operator' },
  // trpc/errors.ts describeError: the database does not answer (errors.ts default message).
  SERVICE_UNAVAILABLE: { summary: 'The database cannot be reached', message: 'The database cannot be reached; try again shortly' },
  // orders/gates.ts minuteLimitError, with the default RATE_LIMIT_ORDERS_PER_MIN; auth routes count failed attempts.
  RATE_LIMIT_EXCEEDED: { summary: 'Too many requests in the window (see Retry-After)', message: 'More than 30 orders a minute' },
  // orders/gates.ts, with the default LIVE_DAILY_TRADE_LIMIT.
  RATE_LIMIT_LIVE_DAILY: { summary: 'The day’s live orders are used up', message: 'The daily limit of 10 live orders is reached; it resets at 00:00 UTC' },
  // brokers/registry.ts.
  BROKER_NOT_CONFIGURED: { summary: 'No broker key to act with', message: 'No active us_equity broker key is registered' },
  // orders/gates.ts.
  LIVE_NOT_ENABLED: { summary: 'Live trading is not enabled for the asset class', message: 'Live trading is not enabled for us_equity' },
  // live/promotion.ts issue, with the default RISK_PAPER_MIN_DAYS and RISK_PAPER_MIN_TRADES.
  PAPER_VALIDATION_REQUIRED: {
    summary: 'The paper record does not yet qualify for live trading',
    message: 'Paper validation is not passed for us_equity: 34 days of paper trading; 90 required; 12 filled paper orders; 50 required',
  },
  // live/promotion.ts enable.
  CONFIRM_TOKEN_INVALID: { summary: 'The confirm token is not valid', message: 'The confirm token is not valid (wrong, expired, already used or replaced by a newer one)' },
  // live/botcheck.ts.
  BOTCHECK_FAILED: { summary: 'The bot check failed', message: 'The bot check failed' },
  // orders/reads.ts.
  ORDER_NOT_FOUND: { summary: 'No such order of the caller', message: 'Order not found' },
  // analysis/analysis.ts.
  REPORT_NOT_FOUND: { summary: 'No such report of the caller', message: 'Report not found' },
  // orders/duplicates.ts.
  IDEMPOTENCY_CONFLICT: { summary: 'The client_order_id was used for another order', message: 'This client_order_id was used for a different order' },
  // orders/risk.ts, the emergency lock (the first rule of the risk gate).
  RISK_RULE_VIOLATION: {
    summary: 'A risk rule refuses the order',
    message: 'Trading is locked by the emergency lock until 2026-12-03T00:00:00.000Z; until then buys are refused (sells of what is held and closes are accepted)',
  },
  // orders/risk.ts checkMarketHours (a Saturday; the next session opens on Monday).
  MARKET_CLOSED: { summary: 'The market is closed', message: 'The us_equity market is closed at 2026-11-28T15:00:00.000Z; it next opens at 2026-11-30T14:30:00.000Z' },
  // brokers/funds.ts buyRefusalMessage (the risk gate and the simulator say the same).
  INSUFFICIENT_FUNDS: { summary: 'The buying power or the held quantity does not cover the order', message: 'The buy costs 37611 (189 × 199 + fee 0), more than the buying power 24778' },
  // brokers/errors.ts refusedError, with the KIS adapter's reason (brokers/kis/mapping.ts).
  BROKER_REJECTED: { summary: 'The broker refused the order', message: 'The broker refused the order: KIS has no bracket orders' },
  // orders/commands.ts cancel.
  ORDER_NOT_CANCELABLE: { summary: 'The order is past canceling or replacing', message: 'The order is filled and cannot be canceled' },
  // backtest/backtests.ts.
  INVALID_SYMBOL: { summary: 'The symbol is not a registered instrument', message: 'ZZZZ is not a registered us_equity instrument' },
  // backtest/backtests.ts: each backtest route serves one family of asset classes.
  INVALID_ASSET_CLASS: { summary: 'The asset class is not served by this route', message: 'asset_class must be us_equity or kr_equity (crypto runs at POST /api/backtest/run)' },
  // backtest/backtests.ts.
  STRATEGY_NOT_FOUND: { summary: 'No strategy of that name', message: 'No strategy named sma_crosover; see GET /api/strategy/list' },
  // backtest/backtests.ts.
  INSUFFICIENT_DATA: { summary: 'Too few daily bars in the range', message: 'No daily bars of AAPL between 2026-01-02 and 2026-06-30' },
  // analysis/analysis.ts.
  INLINE_REQUIRES_QUICK: { summary: 'inline is for mode quick only', message: 'inline runs only mode quick; queue the others' },
  // analysis/analysis.ts, with the default LLM_DAILY_BUDGET_USD.
  LLM_BUDGET_EXCEEDED: { summary: 'The day’s LLM budget is used up', message: 'Your daily LLM budget of 5 USD is used up; it resets at 00:00 UTC' },
  // brokers/errors.ts unavailableError (a placement).
  BROKER_UNAVAILABLE: { summary: 'The broker could not be reached', message: 'The broker could not be reached; the order was not placed' },
  // live/promotion.ts issue.
  DELIVERY_FAILED: { summary: 'The confirmation e-mail could not be sent', message: 'The confirmation e-mail could not be sent; ask for a new token' },
  // orders/gates.ts; other routes name their own setting.
  FEATURE_DISABLED: { summary: 'A FEATURE_* setting turns this off', message: 'Paper trading is disabled (FEATURE_EQUITY_PAPER)' },
};

/** The example body of `code`: its status is the one the runtime answers it with. */
export const errorExampleOf = (code: TAppErrorCode): TErrorBody => {
  return { code, message: ERROR_CASES[code].message, status: statusOf(code) };
};

/** When `code` is answered, in a few words: the summary of its example in the document. */
export const errorSummaryOf = (code: TAppErrorCode): string => ERROR_CASES[code].summary;

/** A 422 naming the field at fault, or without field errors when the operation takes no input. */
export const validationErrorExample = (field?: string): TErrorBody => ({
  ...errorExampleOf('VALIDATION_ERROR'),
  ...(field === undefined ? {} : { errors: [{ path: field, message: 'Invalid input' }] }),
});
