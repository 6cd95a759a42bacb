// The REST route table and input assembly: what trpc-to-openapi's runtime did, now ours.
import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputOf } from '../../server/http/rest.ts';
import { compileRestRoutes } from '../../server/http/routes.ts';
import type { AppRouter } from '../../server/routers/index.ts';

const t = initTRPC.meta<OpenApiMeta>().create();
const ok = () => 'ok';
const router = t.router({
  list: t.procedure
    .meta({ openapi: { method: 'GET', path: '/orders' } })
    .input(z.object({ status: z.string().optional(), tags: z.array(z.string()).optional(), page: z.coerce.number().default(1) }))
    .query(ok),
  special: t.procedure.meta({ openapi: { method: 'GET', path: '/orders/open' } }).input(z.void()).query(ok),
  one: t.procedure.meta({ openapi: { method: 'GET', path: '/orders/{id}' } }).input(z.object({ id: z.string() })).query(ok),
  cancel: t.procedure.meta({ openapi: { method: 'DELETE', path: '/orders/{id}' } }).input(z.object({ id: z.string(), asset_class: z.string() })).mutation(ok),
  place: t.procedure.meta({ openapi: { method: 'POST', path: '/orders/{id}/replace' } }).input(z.object({ id: z.string(), qty: z.number() })).mutation(ok),
  internal: t.procedure.input(z.void()).query(ok),
});
// The matcher reads only procedure definitions; any router of this shape will do.
const match = compileRestRoutes(router as unknown as AppRouter, '/api');

describe('route matching', () => {
  it('prefers a literal path over a parameter, and reports the template', () => {
    expect(match('GET', '/api/orders/open')?.route.procedure).toBe('special');
    expect(match('GET', '/api/orders/42')).toMatchObject({ route: { procedure: 'one', template: '/api/orders/{id}' }, params: { id: '42' } });
  });

  it('matches by method, tolerates a trailing slash, and decodes parameters', () => {
    expect(match('DELETE', '/api/orders/42')?.route.procedure).toBe('cancel');
    expect(match('GET', '/api/orders/')?.route.procedure).toBe('list');
    expect(match('GET', '/api/orders/a%2Fb')?.params).toEqual({ id: 'a/b' });
    expect(match('GET', '/api/orders/%E0%A4%A')?.params).toEqual({ id: '%E0%A4%A' });
  });

  it('does not match other methods, deeper paths, or procedures without OpenAPI meta', () => {
    expect(match('PUT', '/api/orders/42')).toBeUndefined();
    expect(match('GET', '/api/orders/42/extra')).toBeUndefined();
    expect(match('GET', '/api/internal')).toBeUndefined();
  });
});

describe('input assembly', () => {
  const input = (method: string, path: string, query: string, body?: unknown) => inputOf(match(method, path)!, query, body);

  it('reads GET and DELETE input from the query; repeated keys and array fields become arrays', () => {
    expect(input('GET', '/api/orders', 'status=open&page=2')).toEqual({ status: 'open', page: '2' });
    expect(input('GET', '/api/orders', 'tags=a')).toEqual({ tags: ['a'] });
    expect(input('GET', '/api/orders', 'tags=a&tags=b&status=x&status=y')).toEqual({ tags: ['a', 'b'], status: ['x', 'y'] });
    expect(input('DELETE', '/api/orders/7', 'asset_class=crypto', { ignored: true })).toEqual({ asset_class: 'crypto', id: '7' });
  });

  it('reads POST input from the body; path parameters win over body fields', () => {
    expect(input('POST', '/api/orders/7/replace', '', { qty: 2, id: 'forged' })).toEqual({ qty: 2, id: '7' });
  });

  it('hands a body that is not an object to the schema as it is, and void procedures nothing', () => {
    expect(input('POST', '/api/orders/7/replace', '', [1, 2])).toEqual([1, 2]);
    expect(input('POST', '/api/orders/7/replace', '', 'text')).toBe('text');
    expect(input('GET', '/api/orders/open', 'x=1')).toBeUndefined();
  });
});
