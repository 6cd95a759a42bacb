// The pure parts of the HTTP edges: /trpc route labels, error excerpts, which ZodErrors are the
// caller's fault, the tRPC error shape following the domain status, and canonical integers.
import { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { intParam } from '../../contracts/common.ts';
import { AppError } from '../../server/errors.ts';
import { trpcRouteLabeller } from '../../server/http/trpc.ts';
import { describeError, excerpt, formatError } from '../../server/trpc/errors.ts';

describe('/trpc route labels', () => {
  const label = trpcRouteLabeller(['auth.me', 'auth.login', 'admin.listUsers', 'admin.halt', 'admin.activateUser']);

  it('names a known procedure, also when its path is %-encoded', () => {
    expect(label('auth.me', false)).toBe('/trpc/auth.me');
    expect(label('auth%2Eme', false)).toBe('/trpc/auth.me');
  });

  it('names a batch by its distinct procedures, sorted', () => {
    expect(label('auth.me,admin.listUsers,auth.me', true)).toBe('/trpc/admin.listUsers,auth.me');
    expect(label('auth.me,auth.me', true)).toBe('/trpc/auth.me');
  });

  it('gives larger batches one label, and anything unknown another', () => {
    expect(label('auth.me,auth.login,admin.halt,admin.listUsers', true)).toBe('/trpc/(batch)');
    expect(label('auth.me,nope', true)).toBe('/trpc/(unmatched)');
    expect(label('auth.me,auth.login', false)).toBe('/trpc/(unmatched)');
    expect(label(`x${'y'.repeat(5000)}`, false)).toBe('/trpc/(unmatched)');
    expect(label('%E0%A4%A', false)).toBe('/trpc/(unmatched)');
  });
});

describe('excerpt', () => {
  it('keeps short printable text as it is, letters of any script included', () => {
    expect(excerpt('text/csv')).toBe('text/csv');
    expect(excerpt('삼성전자 005930')).toBe('삼성전자 005930');
  });

  it('cuts long text and replaces controls, bidi overrides and lone surrogates', () => {
    expect(excerpt('a'.repeat(100), 10)).toBe(`${'a'.repeat(10)}…`);
    expect(excerpt('a\u0000b\u001bc\u0085d\u202ee\ud800f')).toBe('a?b?c?d?e?f');
  });
});

describe('describeError', () => {
  const zodError = z.object({ n: z.number() }).safeParse({ n: 'x' }).error!;

  it('a ZodError from input parsing is the caller’s VALIDATION_ERROR, with field errors', () => {
    for (const code of ['BAD_REQUEST', 'UNPROCESSABLE_CONTENT'] as const) {
      expect(describeError(new TRPCError({ code, cause: zodError }))).toMatchObject({ domainCode: 'VALIDATION_ERROR', errors: [{ path: 'n' }] });
    }
  });

  it('the same ZodError from output validation (or our own parsing) is INTERNAL_ERROR, saying nothing', () => {
    const described = describeError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause: zodError }));
    expect(described).toEqual({ domainCode: 'INTERNAL_ERROR', message: 'Internal server error' });
    expect(describeError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: new SyntaxError('Unexpected token') })).domainCode).toBe('INTERNAL_ERROR');
  });

  it('a malformed JSON body is a VALIDATION_ERROR whose message is an excerpt', () => {
    const described = describeError(new TRPCError({ code: 'BAD_REQUEST', cause: new SyntaxError(`Unexpected token '\u0001', "${'x'.repeat(500)}" is not valid JSON`) }));
    expect(described.domainCode).toBe('VALIDATION_ERROR');
    expect(described.errors![0]!.message.length).toBeLessThanOrEqual(121);
    expect(described.errors![0]!.message).not.toContain('\u0001');
  });

  it('transport codes map to their own domain codes', () => {
    expect(describeError(new TRPCError({ code: 'METHOD_NOT_SUPPORTED' })).domainCode).toBe('METHOD_NOT_ALLOWED');
    expect(describeError(new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE' })).domainCode).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(describeError(new TRPCError({ code: 'NOT_FOUND', message: `No procedure found on path "${'a'.repeat(9000)}"` })).message.length).toBeLessThanOrEqual(201);
  });

  it('keeps at most 50 bounded field errors', () => {
    const many = z.array(z.number()).safeParse(Array.from({ length: 500 }, () => 'x')).error!;
    const described = describeError(new TRPCError({ code: 'BAD_REQUEST', cause: many }));
    expect(described.errors).toHaveLength(50);
  });
});

describe('formatError', () => {
  const shapeOf = (error: TRPCError) =>
    formatError({ error, shape: { code: TRPC_ERROR_CODES_BY_KEY[error.code], message: error.message, data: { code: error.code, httpStatus: 0, path: 'p' } } });

  it.each([
    [new TRPCError({ code: 'BAD_REQUEST', cause: new SyntaxError('x') }), 'UNPROCESSABLE_CONTENT', 422],
    [new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: z.string().safeParse(1).error }), 'INTERNAL_SERVER_ERROR', 500],
    [new TRPCError({ code: 'UNAUTHORIZED', cause: new AppError('UNAUTHORIZED') }), 'UNAUTHORIZED', 401],
    [new TRPCError({ code: 'UNPROCESSABLE_CONTENT', cause: new AppError('UNSUPPORTED_MEDIA_TYPE') }), 'UNSUPPORTED_MEDIA_TYPE', 415],
    [new TRPCError({ code: 'METHOD_NOT_SUPPORTED' }), 'METHOD_NOT_SUPPORTED', 405],
  ])('%s: code, JSON-RPC code and httpStatus follow the domain status', (error, code, status) => {
    const shape = shapeOf(error);
    expect(shape.data).toMatchObject({ code, httpStatus: status, path: 'p' });
    expect(shape.code).toBe(TRPC_ERROR_CODES_BY_KEY[code as keyof typeof TRPC_ERROR_CODES_BY_KEY]);
    expect(shape.data).not.toHaveProperty('stack');
  });
});

describe('intParam', () => {
  const id = intParam({ min: 1, max: 2_147_483_647 });
  const offset = intParam({ min: -5, max: 5 });

  it.each(['1', '16', '2147483647'])('reads %j', (value) => {
    expect(id.parse(value)).toBe(Number(value));
  });

  it.each(['0x10', ' 1', '1 ', '+1', '01', '1e1', '1.0', '', '0', '-1', '2147483648', '9'.repeat(30), '１'])('refuses %j', (value) => {
    expect(id.safeParse(value).success).toBe(false);
  });

  it('takes numbers from typed callers when they are safe integers in range', () => {
    expect(id.parse(7)).toBe(7);
    for (const value of [1.5, 0, Number.NaN, Infinity, 2 ** 53, true, null]) expect(id.safeParse(value).success).toBe(false);
  });

  it('allows a leading minus only when the range goes below zero', () => {
    expect(offset.parse('-5')).toBe(-5);
    expect(offset.parse('0')).toBe(0);
    for (const value of ['-0', '-05', '-6', '--1']) expect(offset.safeParse(value).success).toBe(false);
  });

  it('fills its default when the parameter is absent', () => {
    expect(intParam({ min: 1, max: 100, default: 20 }).parse(undefined)).toBe(20);
  });
});
