// Which errors mean that the database cannot be reached (server/db/errors.ts), and that every
// caller hears of it as 503 SERVICE_UNAVAILABLE with Retry-After rather than a 500.
import { TRPCError } from '@trpc/server';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { DATABASE_RETRY_AFTER_SEC, DatabaseUnavailableError, isDatabaseUnavailable } from '../../server/db/errors.ts';
import { describeError, formatError } from '../../server/trpc/errors.ts';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
/** A failed statement as drizzle reports it: the driver's error is its cause. */
const failedQuery = (cause: Error) => new DrizzleQueryError('select 1', [], cause);

describe('isDatabaseUnavailable', () => {
  it("knows the driver's lost connections and the server's refusals, through drizzle's wrapping", () => {
    for (const code of ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03', '53300', '08006', '08001', '08P01']) {
      expect(isDatabaseUnavailable(failedQuery(coded(code))), code).toBe(true);
      expect(isDatabaseUnavailable(coded(code)), code).toBe(true);
    }
  });

  it('counts a socket failure only when the database gave it: other clients see the same codes', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']) {
      expect(isDatabaseUnavailable(failedQuery(coded(code))), code).toBe(true);
      expect(isDatabaseUnavailable(new DatabaseUnavailableError(coded(code))), code).toBe(true);
      expect(isDatabaseUnavailable(coded(code), { fromDatabase: true }), code).toBe(true);
      // A broker's or an LLM provider's fetch that failed on its socket is not the database.
      expect(isDatabaseUnavailable(new TypeError('fetch failed', { cause: coded(code) })), code).toBe(false);
    }
    // A connect to a name with several addresses fails with all of them.
    const everyAddress = new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect failed');
    expect(isDatabaseUnavailable(failedQuery(everyAddress))).toBe(true);
  });

  it('leaves every other failure of a statement alone', () => {
    for (const code of ['23505', '22P02', '40001', '57014', '42P01', 'UNDEFINED_VALUE']) {
      expect(isDatabaseUnavailable(failedQuery(coded(code))), code).toBe(false);
    }
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

describe('a request that finds the database gone', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, not 500, on REST and tRPC alike', () => {
    const error = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: failedQuery(coded('CONNECTION_CLOSED')) });
    expect(describeError(error)).toEqual({ domainCode: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('database') as string, retryAfterSec: DATABASE_RETRY_AFTER_SEC, errors: undefined });
    const shape = formatError({ shape: { message: '', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, path: 'equity.placeOrder' } }, error });
    expect(shape.data).toMatchObject({ httpStatus: 503, domainCode: 'SERVICE_UNAVAILABLE', retryAfterSec: DATABASE_RETRY_AFTER_SEC });
  });

  it('still answers 500 for a statement that is simply wrong', () => {
    const error = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: failedQuery(coded('42P01')) });
    expect(describeError(error)).toEqual({ domainCode: 'INTERNAL_ERROR', message: 'Internal server error' });
  });
});
