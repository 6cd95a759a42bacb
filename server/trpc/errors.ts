// Error mapping between the domain and tRPC, in one place: AppError → TRPCError with the right
// transport status, any error → the domain code, status and field errors every caller sees,
// and how much of what a caller sent an error may echo.
import { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { DefaultErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { ZodError } from 'zod';
import { statusOf, type TAppErrorCode, type TFieldError } from '../../contracts/errors.ts';
import { DATABASE_RETRY_AFTER_SEC, isDatabaseUnavailable } from '../db/errors.ts';
import { AppError } from '../errors.ts';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC code of an HTTP status; statuses tRPC has no name for fall back to their class. */
const trpcCodeOf = (status: number): TRPC_ERROR_CODE_KEY =>
  TRPC_CODE_BY_STATUS[status] ?? (status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR');

export const toTRPCError = (error: AppError): TRPCError => new TRPCError({ code: trpcCodeOf(error.status), message: error.message, cause: error });

const DOMAIN_CODE_BY_TRPC: Partial<Record<TRPC_ERROR_CODE_KEY, TAppErrorCode>> = {
  // Every request-shape problem the transport finds is a validation error for our callers.
  PARSE_ERROR: 'VALIDATION_ERROR',
  BAD_REQUEST: 'VALIDATION_ERROR',
  UNPROCESSABLE_CONTENT: 'VALIDATION_ERROR',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_SUPPORTED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  TOO_MANY_REQUESTS: 'RATE_LIMIT_EXCEEDED',
  SERVICE_UNAVAILABLE: 'SERVICE_HALTED',
};

// Controls, format characters (bidi overrides among them), unpaired surrogates, private use.
const UNPRINTABLE = /\p{C}/gu;

/**
 * A short printable excerpt of caller-supplied text for an error message: a huge or binary
 * path, header or key is never reflected whole.
 */
export const excerpt = (text: string, max = 40): string => (text.length > max ? `${text.slice(0, max)}…` : text).replace(UNPRINTABLE, '?');

/** Enough to fix a request; a body can produce one issue per element, the answer stays small. */
const MAX_FIELD_ERRORS = 50;

const boundedFieldErrors = (errors: TFieldError[]): TFieldError[] =>
  errors.slice(0, MAX_FIELD_ERRORS).map(({ path, message }) => ({ path: excerpt(path, 100), message: excerpt(message, 200) }));

export const fieldErrorsOf = (error: ZodError): TFieldError[] =>
  boundedFieldErrors(error.issues.slice(0, MAX_FIELD_ERRORS).map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));

export interface DomainErrorData {
  domainCode: TAppErrorCode;
  errors?: TFieldError[];
  retryAfterSec?: number;
}

/**
 * Finds the domain meaning of any error tRPC hands us. A ZodError or SyntaxError is the
 * caller's fault only under a request-shape code (tRPC's input parsing says BAD_REQUEST): the
 * same error under INTERNAL_SERVER_ERROR is an output that failed its own schema, or our own
 * code parsing something, and that is a server bug (500, logged by the transport).
 */
export const describeError = (error: TRPCError): DomainErrorData & { message: string } => {
  // Not a bug but the database's absence: the same request may succeed once it is back.
  const cause = isDatabaseUnavailable(error.cause) ? new AppError('SERVICE_UNAVAILABLE', undefined, { retryAfterSec: DATABASE_RETRY_AFTER_SEC }) : error.cause;
  if (cause instanceof AppError) {
    return {
      domainCode: cause.code,
      message: excerpt(cause.message, 200),
      errors: cause.errors && boundedFieldErrors(cause.errors),
      retryAfterSec: cause.retryAfterSec,
    };
  }
  const domainCode = DOMAIN_CODE_BY_TRPC[error.code] ?? 'INTERNAL_ERROR';
  if (domainCode === 'INTERNAL_ERROR') {
    // Never echo an unexpected error's message: it may hold internals.
    return { domainCode, message: 'Internal server error' };
  }
  if (domainCode !== 'VALIDATION_ERROR') return { domainCode, message: excerpt(error.message, 200) };
  if (cause instanceof ZodError) {
    return { domainCode, message: 'Request validation failed', errors: fieldErrorsOf(cause) };
  }
  if (cause instanceof SyntaxError) {
    return { domainCode, message: 'Malformed JSON body', errors: [{ path: '', message: excerpt(cause.message, 120) }] };
  }
  // The transport's own refusals (a batch that is not an object, ...) still name what was wrong.
  const message = excerpt(error.message, 200);
  return { domainCode, message, errors: [{ path: '', message }] };
};

/**
 * What a failed server-side call tells its caller (domain code, message, field errors,
 * Retry-After). A server bug (an output failing its own schema among them) is told as nothing
 * more than that, and handed to `logBug` with its cause.
 */
export const describeFailure = (cause: unknown, logBug: (cause: unknown) => void): DomainErrorData & { message: string } => {
  const error = cause instanceof TRPCError ? cause : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause });
  const described = describeError(error);
  if (described.domainCode === 'INTERNAL_ERROR') logBug(error.cause ?? error);
  return described;
};

/**
 * The error shape typed clients receive: no stack, ever; data rebuilt from what callers may see.
 * Its codes and `httpStatus` follow the domain code's status, and tRPC derives the HTTP status
 * of the answer from `httpStatus`, so the body and the status line always agree.
 */
export const formatError = ({ shape, error }: { shape: DefaultErrorShape; error: TRPCError }) => {
  const described = describeError(error);
  const httpStatus = statusOf(described.domainCode);
  const code = trpcCodeOf(httpStatus);
  return {
    ...shape,
    code: TRPC_ERROR_CODES_BY_KEY[code],
    message: described.message,
    data: {
      code,
      httpStatus,
      path: shape.data.path,
      domainCode: described.domainCode,
      errors: described.errors,
      retryAfterSec: described.retryAfterSec,
    },
  };
};
