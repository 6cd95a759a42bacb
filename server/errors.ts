// The one error type domain code throws. The tRPC layer turns it into a TRPCError with the
// matching HTTP status, and the REST facade into the error envelope of DESIGN §5.
import { statusOf, type TAppErrorCode, type TFieldError } from '../contracts/errors.ts';

const DEFAULT_MESSAGES: Partial<Record<TAppErrorCode, string>> = {
  UNAUTHORIZED: 'Not authenticated',
  FORBIDDEN: 'Not allowed',
  NOT_FOUND: 'Not found',
  SERVICE_HALTED: 'The service is halted by an operator',
  SERVICE_UNAVAILABLE: 'The database cannot be reached; try again shortly',
  INTERNAL_ERROR: 'Internal server error',
  VALIDATION_ERROR: 'Request validation failed',
};

export class AppError extends Error {
  readonly code: TAppErrorCode;
  readonly status: number;
  readonly errors: TFieldError[] | undefined;
  /** Seconds a client should wait before retrying (sent as Retry-After). */
  readonly retryAfterSec: number | undefined;

  constructor(
    code: TAppErrorCode,
    message?: string,
    options: { errors?: TFieldError[]; retryAfterSec?: number; cause?: unknown } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code] ?? code.toLowerCase().replaceAll('_', ' '), { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = statusOf(code);
    this.errors = options.errors;
    this.retryAfterSec = options.retryAfterSec;
  }
}
