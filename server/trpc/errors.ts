// Error mapping between the domain and tRPC, in one place: AppError → TRPCError with the right
// transport status, any error → the domain code and field errors every caller sees.
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { DefaultErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { ZodError } from 'zod';
import type { TAppErrorCode, TFieldError } from '../../contracts/errors.ts';
import { AppError } from '../errors.ts';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
};

export const toTRPCError = (error: AppError): TRPCError =>
  new TRPCError({ code: TRPC_CODE_BY_STATUS[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });

const DOMAIN_CODE_BY_TRPC: Partial<Record<TRPC_ERROR_CODE_KEY, TAppErrorCode>> = {
  // Every request-shape problem the transport finds is a validation error for our callers.
  PARSE_ERROR: 'VALIDATION_ERROR',
  BAD_REQUEST: 'VALIDATION_ERROR',
  UNSUPPORTED_MEDIA_TYPE: 'VALIDATION_ERROR',
  UNPROCESSABLE_CONTENT: 'VALIDATION_ERROR',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_SUPPORTED: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  TOO_MANY_REQUESTS: 'RATE_LIMIT_EXCEEDED',
  SERVICE_UNAVAILABLE: 'SERVICE_HALTED',
};

export const fieldErrorsOf = (error: ZodError): TFieldError[] =>
  error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));

export interface DomainErrorData {
  domainCode: TAppErrorCode;
  errors?: TFieldError[];
  retryAfterSec?: number;
}

/** Finds the domain meaning of any error tRPC hands us. */
export const describeError = (error: TRPCError): DomainErrorData & { message: string } => {
  const cause = error.cause;
  if (cause instanceof AppError) {
    return { domainCode: cause.code, message: cause.message, errors: cause.errors, retryAfterSec: cause.retryAfterSec };
  }
  if (cause instanceof ZodError) {
    return { domainCode: 'VALIDATION_ERROR', message: 'Request validation failed', errors: fieldErrorsOf(cause) };
  }
  if (cause instanceof SyntaxError) {
    return { domainCode: 'VALIDATION_ERROR', message: 'Malformed JSON body', errors: [{ path: '', message: cause.message }] };
  }
  const domainCode = DOMAIN_CODE_BY_TRPC[error.code] ?? 'INTERNAL_ERROR';
  // Never echo an unexpected error's message: it may hold internals.
  const message = domainCode === 'INTERNAL_ERROR' ? 'Internal server error' : error.message;
  return { domainCode, message };
};

/** The error shape typed clients receive: no stack, ever; data rebuilt from what callers may see. */
export const formatError = ({ shape, error }: { shape: DefaultErrorShape; error: TRPCError }) => {
  const described = describeError(error);
  return {
    ...shape,
    message: described.message,
    data: {
      code: shape.data.code,
      httpStatus: shape.data.httpStatus,
      path: shape.data.path,
      domainCode: described.domainCode,
      errors: described.errors,
      retryAfterSec: described.retryAfterSec,
    },
  };
};
