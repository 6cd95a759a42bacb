// Every error code the service answers with, and the one HTTP status each maps to.
// Adding a code without a status fails to compile (the switch is exhaustive).
import { z } from 'zod';

export const ZAppErrorCode = z.enum([
  'VALIDATION_ERROR',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'METHOD_NOT_ALLOWED',
  'UNSUPPORTED_MEDIA_TYPE',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'SERVICE_HALTED',
  'SERVICE_UNAVAILABLE',
  'RATE_LIMIT_EXCEEDED',
  'RATE_LIMIT_LIVE_DAILY',
  'BROKER_NOT_CONFIGURED',
  'LIVE_NOT_ENABLED',
  'PAPER_VALIDATION_REQUIRED',
  'CONFIRM_TOKEN_INVALID',
  'BOTCHECK_FAILED',
  'ORDER_NOT_FOUND',
  'REPORT_NOT_FOUND',
  'IDEMPOTENCY_CONFLICT',
  'RISK_RULE_VIOLATION',
  'MARKET_CLOSED',
  'INSUFFICIENT_FUNDS',
  'BROKER_REJECTED',
  'ORDER_NOT_CANCELABLE',
  'INVALID_SYMBOL',
  'INVALID_ASSET_CLASS',
  'STRATEGY_NOT_FOUND',
  'INSUFFICIENT_DATA',
  'INLINE_REQUIRES_QUICK',
  'LLM_BUDGET_EXCEEDED',
  'BROKER_UNAVAILABLE',
  'DELIVERY_FAILED',
  'FEATURE_DISABLED',
]);
export type TAppErrorCode = z.infer<typeof ZAppErrorCode>;

export const statusOf = (code: TAppErrorCode): number => {
  switch (code) {
    case 'BAD_REQUEST':
    case 'INLINE_REQUIRES_QUICK':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
    case 'BROKER_NOT_CONFIGURED':
    case 'LIVE_NOT_ENABLED':
    case 'PAPER_VALIDATION_REQUIRED':
    case 'CONFIRM_TOKEN_INVALID':
    case 'BOTCHECK_FAILED':
      return 403;
    case 'NOT_FOUND':
    case 'ORDER_NOT_FOUND':
    case 'REPORT_NOT_FOUND':
      return 404;
    case 'CONFLICT':
    case 'IDEMPOTENCY_CONFLICT':
      return 409;
    case 'METHOD_NOT_ALLOWED':
      return 405;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'HEADERS_TOO_LARGE':
      return 431;
    case 'VALIDATION_ERROR':
    case 'RISK_RULE_VIOLATION':
    case 'MARKET_CLOSED':
    case 'INSUFFICIENT_FUNDS':
    case 'BROKER_REJECTED':
    case 'ORDER_NOT_CANCELABLE':
    case 'INVALID_SYMBOL':
    case 'INVALID_ASSET_CLASS':
    case 'STRATEGY_NOT_FOUND':
    case 'INSUFFICIENT_DATA':
      return 422;
    case 'RATE_LIMIT_EXCEEDED':
    case 'RATE_LIMIT_LIVE_DAILY':
    case 'LLM_BUDGET_EXCEEDED':
      return 429;
    case 'INTERNAL_ERROR':
      return 500;
    case 'BROKER_UNAVAILABLE':
    case 'DELIVERY_FAILED':
      return 502;
    case 'SERVICE_HALTED':
    case 'SERVICE_UNAVAILABLE':
    case 'FEATURE_DISABLED':
      return 503;
  }
};

export const ZFieldError = z.object({
  path: z.string(),
  message: z.string(),
});
export type TFieldError = z.infer<typeof ZFieldError>;

/** The body of every REST error (DESIGN §5). */
export const ZErrorBody = z.object({
  code: ZAppErrorCode,
  message: z.string(),
  status: z.number().int(),
  errors: z.array(ZFieldError).optional(),
});
export type TErrorBody = z.infer<typeof ZErrorBody>;
