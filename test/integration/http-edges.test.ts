// The edges of the HTTP layer, on REST and /trpc alike: outputs that fail their own schema,
// JSON nesting on /trpc, canonical integer parameters, media types (415) and what error messages
// may echo, node's own refusals and 405s in the envelope, /trpc error bodies that agree with
// their status, ctx.http on both transports, and /trpc route labels in metrics.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../server/observability/logger.ts';
import { createHttpServer } from '../../server/http/server.ts';
import type { AppRouter } from '../../server/routers/index.ts';
import { publicProcedure, router } from '../../server/trpc/init.ts';
import { sendRaw } from '../support/raw.ts';
import { adminEnv, loginAdmin, registerAndLogin, startTestServer, type TestServer, type TestUser } from '../support/server.ts';
import { openWire } from '../support/wire.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Procedures that exist only here, served by a second HTTP server over the same services. */
const probeRouter = router({
  probe: router({
    badOutput: publicProcedure
      .meta({ openapi: { method: 'GET', path: '/probe/bad-output' } })
      .input(z.void())
      .output(z.object({ n: z.number() }))
      // A server bug on purpose: the output breaks its own schema.
      .query(() => ({ n: 'not a number' }) as unknown as { n: number }),
    created: publicProcedure
      .meta({ openapi: { method: 'POST', path: '/probe/created' } })
      .input(z.object({ name: z.string() }))
      .output(z.object({ name: z.string() }))
      .mutation(({ ctx, input }) => {
        ctx.http.status = 201;
        ctx.http.headers['X-Probe'] = input.name;
        return { name: input.name };
      }),
    read: publicProcedure
      .meta({ openapi: { method: 'GET', path: '/probe/read' } })
      .input(z.void())
      .output(z.object({ ok: z.boolean() }))
      .query(({ ctx }) => {
        ctx.http.headers['X-Probe'] = 'read';
        return { ok: true };
      }),
  }),
});

let server: TestServer;
let user: TestUser;
let adminToken: string;
let probe: Server;
let probeUrl: string;
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  server = await startTestServer(adminEnv);
  [user, adminToken] = await Promise.all([registerAndLogin(server, 'edges'), loginAdmin(server).then((tokens) => tokens.access_token)]);
  const logger = createLogger('info', { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
  // The probe router has none of the app's procedures; the server only reads its definitions.
  probe = createHttpServer(probeRouter as unknown as AppRouter, { ...server.services, logger });
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
});
afterAll(async () => {
  probe?.closeAllConnections();
  await new Promise((resolve) => (probe ? probe.close(resolve) : resolve(undefined)));
  await server?.stop();
});

const send = (method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}) => sendRaw(server.url, method, path, opts);
const asAdmin = () => ({ authorization: `Bearer ${adminToken}` });
const asUser = () => ({ authorization: `Bearer ${user.tokens.access_token}` });

/** The tRPC error of a single (unbatched) call. */
const trpcError = (body: any) => body?.error?.json;

describe('an output that fails its own schema is a server bug', () => {
  const failures = (procedure: string) => logged.filter((line) => line.level === 'error' && line.procedure === procedure && line.msg === 'procedure failed');

  it('REST: 500 INTERNAL_ERROR with nothing about the response fields, logged with the procedure', async () => {
    const before = failures('probe.badOutput').length;
    const res = await sendRaw(probeUrl, 'GET', '/api/probe/bad-output');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'INTERNAL_ERROR', status: 500, message: 'Internal server error' });
    expect(failures('probe.badOutput').length).toBe(before + 1);
  });

  it('/trpc: 500 INTERNAL_ERROR too, logged with the procedure', async () => {
    const before = failures('probe.badOutput').length;
    const res = await sendRaw(probeUrl, 'GET', '/trpc/probe.badOutput');
    expect(res.status).toBe(500);
    expect(trpcError(res.body)).toMatchObject({
      message: 'Internal server error',
      code: TRPC_ERROR_CODES_BY_KEY.INTERNAL_SERVER_ERROR,
      data: { domainCode: 'INTERNAL_ERROR', httpStatus: 500, code: 'INTERNAL_SERVER_ERROR' },
    });
    // superjson writes an absent field as null (with a meta note)
    expect(trpcError(res.body).data.errors ?? undefined).toBeUndefined();
    expect(failures('probe.badOutput').length).toBe(before + 1);
  });

  it('while a bad input to the same kind of procedure stays a 422 on both transports', async () => {
    const rest = await sendRaw(probeUrl, 'POST', '/api/probe/created', { headers: JSON_HEADERS, body: '{"name": 5}' });
    expect(rest.status).toBe(422);
    expect(rest.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'name' }] });
    const trpc = await sendRaw(probeUrl, 'POST', '/trpc/probe.created', { headers: JSON_HEADERS, body: '{"json":{"name":5}}' });
    expect(trpc.status).toBe(422);
    expect(trpcError(trpc.body).data).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422, errors: [{ path: 'name' }] });
  });
});

describe('/trpc bodies and inputs keep the JSON depth limit', () => {
  const DEPTH = 10_000;
  const deepArray = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
  const expectTooDeep = (res: { status: number; body: any; text: string }) => {
    expect(res.status, res.text).toBe(422);
    const error = trpcError(res.body) ?? res.body?.[0]?.error?.json;
    expect(error.data).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422, errors: [{ path: '', message: expect.stringMatching(/nested deeper than 64/) }] });
    expect(res.text).not.toMatch(/call stack/i);
  };

  it.each([
    ['in superjson meta', `{"json":{"username":"x","password":"y"},"meta":{"values":{"username":${deepArray}}}}`],
    ['in the JSON itself', `{"json":{"username":${deepArray}}}`],
    ['in a deep object', `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`],
  ])('a POST body nested 10 000 levels %s is 422 VALIDATION_ERROR', async (_what, body) => {
    expectTooDeep(await send('POST', '/trpc/auth.login', { headers: JSON_HEADERS, body }));
  });

  it('so is a batched POST', async () => {
    expectTooDeep(await send('POST', '/trpc/auth.login,auth.register?batch=1', { headers: JSON_HEADERS, body: `{"0":{"json":{},"meta":{"values":${deepArray}}}}` }));
  });

  it('and the input query parameter of a GET', async () => {
    const input = encodeURIComponent(`{"json":null,"meta":{"values":${'['.repeat(2_000)}${']'.repeat(2_000)}}}`);
    expectTooDeep(await send('GET', `/trpc/auth.me?input=${input}`, { headers: asUser() }));
  });

  it('a body at the limit still reaches the procedure', async () => {
    const nested = `${'['.repeat(60)}${']'.repeat(60)}`;
    const res = await send('POST', '/trpc/auth.login', { headers: JSON_HEADERS, body: `{"json":{"username":${nested},"password":"y"}}` });
    expect(res.status).toBe(422);
    expect(trpcError(res.body).data.errors.map((e: { path: string }) => e.path)).toContain('username');
  });
});

describe('integer path and query parameters accept only canonical decimal digits in range', () => {
  let targetId: number;
  beforeAll(async () => {
    targetId = (await registerAndLogin(server, 'target')).user.id;
  });

  const activate = (id: string) => send('POST', `/api/admin/users/${id}/activate`, { headers: asAdmin() });

  it.each(['0x10', '%201', '1%20', '1e1', '+1', '01', '1.0', '-1', '0', '-0', '2147483648', '99999999999999999999', '1_0', '١'])('user id %s is 422 naming user_id', async (id) => {
    const res = await activate(id);
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', status: 422 });
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(['user_id']);
  });

  it('a written-out id reaches its user', async () => {
    const res = await activate(String(targetId));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: targetId });
  });

  it.each([
    ['page=0x2', 'page'],
    ['page=1e1', 'page'],
    ['page=02', 'page'],
    ['page=0', 'page'],
    ['page=1000001', 'page'],
    ['size=%2B5', 'size'],
    ['size=5.0', 'size'],
    ['size=101', 'size'],
    ['size=', 'size'],
  ])('?%s is 422 naming %s', async (query, field) => {
    const res = await send('GET', `/api/admin/users?${query}`, { headers: asAdmin() });
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([field]);
  });

  it('canonical page and size are read as numbers, absent ones default', async () => {
    const res = await send('GET', '/api/admin/users?page=2&size=1', { headers: asAdmin() });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ page: 2, size: 1, items: [expect.any(Object)] });
    expect((await send('GET', '/api/admin/users', { headers: asAdmin() })).body).toMatchObject({ page: 1, size: 20 });
  });

  it('typed /trpc callers send numbers; a non-canonical string is refused there too', async () => {
    const ok = await send('GET', `/trpc/admin.listUsers?input=${encodeURIComponent('{"json":{"page":2,"size":1}}')}`, { headers: asAdmin() });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.result.data.json).toMatchObject({ page: 2, size: 1 });
    for (const input of ['{"json":{"page":"0x2"}}', '{"json":{"page":1.5}}', '{"json":{"size":1e3}}']) {
      const res = await send('GET', `/trpc/admin.listUsers?input=${encodeURIComponent(input)}`, { headers: asAdmin() });
      expect(res.status, input).toBe(422);
    }
  });

  it('the document describes them as bounded integers', async () => {
    const doc = (await send('GET', '/api/openapi.json')).body;
    const id = doc.paths['/api/admin/users/{user_id}/activate'].post.parameters.find((p: { name: string }) => p.name === 'user_id');
    expect(id).toMatchObject({ in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } });
    expect(id.schema.anyOf).toBeUndefined();
    const query = Object.fromEntries(doc.paths['/api/admin/users'].get.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    expect(query).toEqual({
      page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
      size: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
  });
});

describe('a body declared as another media type than JSON is 415 UNSUPPORTED_MEDIA_TYPE', () => {
  const registration = () => {
    const username = `mt_${Math.random().toString(36).slice(2, 10)}`;
    return JSON.stringify({ username, email: `${username}@example.com`, password: 'password123' });
  };

  it.each([
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart/form-data', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['text/plain; charset=UTF-8', { 'content-type': 'text/plain; charset=UTF-8' }],
    ['application/xml', { 'content-type': 'application/xml' }],
    ['application/jsonl', { 'content-type': 'application/jsonl' }],
    ['application/octet-stream', { 'content-type': 'application/octet-stream' }],
    ['a gzip Content-Encoding', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['a deflate Content-Encoding without a type', { 'content-encoding': 'deflate' }],
  ])('REST, with %s', async (_what, headers: Record<string, string>) => {
    const res = await send('POST', '/api/auth/register', { headers, body: registration() });
    expect(res.status, res.text).toBe(415);
    expect(res.body).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, message: expect.any(String) });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['multipart/form-data', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['application/octet-stream', { 'content-type': 'application/octet-stream' }],
    ['a gzip Content-Encoding', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
  ])('/trpc, with %s', async (_what, headers: Record<string, string>) => {
    const res = await send('POST', '/trpc/auth.register', { headers, body: `{"json":${registration()}}` });
    expect(res.status, res.text).toBe(415);
    expect(trpcError(res.body)).toMatchObject({
      code: TRPC_ERROR_CODES_BY_KEY.UNSUPPORTED_MEDIA_TYPE,
      data: { domainCode: 'UNSUPPORTED_MEDIA_TYPE', httpStatus: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
  });

  it('/trpc reads a body without Content-Type as JSON, as REST does', async () => {
    const res = await send('POST', '/trpc/auth.register', { body: `{"json":${registration()}}` });
    expect(res.status, res.text).toBe(201);
    expect(res.body.result.data.json).toMatchObject({ role: 'user' });
  });

  it('the message echoes only a short printable excerpt of the declared type', async () => {
    const declared = `application/${'x'.repeat(5000)}\u0085\u00ff`;
    const res = await send('POST', '/api/auth/register', { headers: { 'content-type': declared }, body: '{}' });
    expect(res.status).toBe(415);
    expect(res.body.message.length).toBeLessThan(150);
    expect(res.body.message).toContain('application/xxxx');
    const weird = await send('POST', '/api/auth/register', { headers: { 'content-type': 'text/\u0085x' }, body: '{}' });
    expect(weird.body.message).not.toMatch(/\p{C}/u);
  });
});

describe('error messages never reflect a long path or method whole', () => {
  it('an unknown REST path', async () => {
    const res = await send('GET', `/api/${'a'.repeat(8000)}`);
    expect(res.status).toBe(404);
    expect(res.body.message.length).toBeLessThan(120);
  });

  it('an unknown /trpc procedure', async () => {
    const res = await send('GET', `/trpc/${'a'.repeat(8000)}`);
    expect(res.status).toBe(404);
    expect(trpcError(res.body).message.length).toBeLessThan(250);
    expect(trpcError(res.body).data.domainCode).toBe('NOT_FOUND');
  });

  it('malformed JSON with binary in it', async () => {
    const res = await send('POST', '/api/auth/login', { headers: JSON_HEADERS, body: `{"username": \u0001${'\u0002'.repeat(5000)}` });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body).length).toBeLessThan(400);
    expect(res.body.errors[0].message).not.toMatch(/\p{Cc}/u);
  });
});

describe("node's own refusals answer in the envelope, with X-Request-Id, then close", () => {
  const port = () => Number(new URL(server.url).port);

  it.each([
    ['a bad Content-Length', 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'BAD_REQUEST'],
    ['two Content-Lengths that disagree', 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 400, 'BAD_REQUEST'],
    ['a malformed request line', 'NOT A REQUEST\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a request line with a bad version', 'GET /health HTTP/X\r\n\r\n', 400, 'BAD_REQUEST'],
    ['a header line without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, 'BAD_REQUEST'],
    ['headers over the size limit', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
  ])('%s', async (_what, request, status, code) => {
    const wire = await openWire(port());
    wire.write(request);
    const res = await wire.response();
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(res.body).toEqual({ code, status, message: expect.any(String) });
    await wire.closed;
  });

  it('also after an earlier response on the same kept-alive connection', async () => {
    const wire = await openWire(port());
    wire.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await wire.response()).status).toBe(200);
    wire.write('GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n');
    const res = await wire.response();
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    await wire.closed;
  });

  it('a body sent without a length after a request that reads none: that request is answered, then the connection closes', async () => {
    const wire = await openWire(port());
    // DELETE reads no body; the unframed bytes after it cannot be parsed as a next request.
    wire.write('DELETE /api/exchange-keys/7 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"not":"framed"}');
    const res = await wire.response();
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED' });
    await wire.closed;
  });
});

describe('a known path with another method is 405 with Allow', () => {
  it.each([
    ['POST', '/api/auth/me', 'GET'],
    ['GET', '/api/auth/login', 'POST'],
    ['DELETE', '/api/admin/users/1/deactivate', 'POST'],
    ['PUT', '/api/admin/users', 'GET'],
    ['POST', '/health', 'GET, HEAD'],
    ['DELETE', '/metrics', 'GET, HEAD'],
    ['POST', '/api/openapi.json', 'GET, HEAD'],
  ])('%s %s', async (method, path, allow) => {
    const res = await send(method, path, method === 'GET' ? {} : { headers: JSON_HEADERS, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body).toEqual({ code: 'METHOD_NOT_ALLOWED', status: 405, message: expect.any(String) });
  });

  it('on /trpc, a mutation called with GET', async () => {
    const res = await send('GET', '/trpc/auth.login');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(trpcError(res.body).data).toMatchObject({ domainCode: 'METHOD_NOT_ALLOWED', httpStatus: 405, code: 'METHOD_NOT_SUPPORTED' });
  });

  it('an unknown path is still 404', async () => {
    expect((await send('POST', '/api/auth/nope', { headers: JSON_HEADERS, body: '{}' })).status).toBe(404);
    expect((await send('POST', '/nope', { headers: JSON_HEADERS, body: '{}' })).status).toBe(404);
  });
});

describe('a /trpc error body agrees with its HTTP status', () => {
  const consistent = (res: { status: number; body: any }, error = trpcError(res.body)) => {
    expect(error.data.httpStatus).toBe(res.status);
    expect(error.code).toBe(TRPC_ERROR_CODES_BY_KEY[error.data.code as keyof typeof TRPC_ERROR_CODES_BY_KEY]);
  };

  it('malformed JSON: 422 UNPROCESSABLE_CONTENT, not BAD_REQUEST/400', async () => {
    const res = await send('POST', '/trpc/auth.login', { headers: JSON_HEADERS, body: '{"json":' });
    expect(res.status).toBe(422);
    expect(trpcError(res.body).data).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', httpStatus: 422, domainCode: 'VALIDATION_ERROR' });
    consistent(res);
  });

  it.each([
    ['invalid input', 'POST', '/trpc/auth.register', '{"json":{"username":"x"}}', {}],
    ['a batch that is not an object', 'POST', '/trpc/auth.login?batch=1', '[1]', {}],
    ['no token', 'GET', '/trpc/auth.me', undefined, {}],
    ['a user token on an admin procedure', 'GET', '/trpc/admin.listUsers', undefined, { user: true }],
    ['an unknown procedure', 'GET', '/trpc/nope', undefined, {}],
  ])('%s', async (_what, method, path, body, opts: { user?: boolean }) => {
    const headers: Record<string, string> = { ...(body ? JSON_HEADERS : {}), ...(opts.user ? asUser() : {}) };
    const res = await send(method, path, { headers, body });
    const error = trpcError(res.body) ?? res.body?.[0]?.error?.json;
    expect(res.status).toBeGreaterThanOrEqual(400);
    consistent(res, error);
  });
});

describe('ctx.http status and headers mean the same on both transports', () => {
  it('REST applies both', async () => {
    const res = await sendRaw(probeUrl, 'POST', '/api/probe/created', { headers: JSON_HEADERS, body: '{"name":"rest"}' });
    expect(res.status).toBe(201);
    expect(res.headers['x-probe']).toBe('rest');
  });

  it('/trpc applies both to a single call', async () => {
    const res = await sendRaw(probeUrl, 'POST', '/trpc/probe.created', { headers: JSON_HEADERS, body: '{"json":{"name":"single"}}' });
    expect(res.status).toBe(201);
    expect(res.headers['x-probe']).toBe('single');
    expect(res.body.result.data.json).toEqual({ name: 'single' });
    const read = await sendRaw(probeUrl, 'GET', '/trpc/probe.read');
    expect(read.status).toBe(200);
    expect(read.headers['x-probe']).toBe('read');
  });

  it('/trpc applies the headers to a batch, and answers it 200: one status cannot speak for each call', async () => {
    const res = await sendRaw(probeUrl, 'POST', '/trpc/probe.created?batch=1', { headers: JSON_HEADERS, body: '{"0":{"json":{"name":"batch"}}}' });
    expect(res.status).toBe(200);
    expect(res.headers['x-probe']).toBe('batch');
    expect(res.body[0].result.data.json).toEqual({ name: 'batch' });
  });

  it('a real route: register answers 201 on REST and on an unbatched /trpc call', async () => {
    const username = `st_${Math.random().toString(36).slice(2, 10)}`;
    const res = await send('POST', '/trpc/auth.register', { headers: JSON_HEADERS, body: JSON.stringify({ json: { username, email: `${username}@example.com`, password: 'password123' } }) });
    expect(res.status).toBe(201);
  });
});

describe('logs and metrics label a /trpc call as such', () => {
  /** The value of one Prometheus sample (0 when absent), matched on the labels given. */
  const sampleOf = (metrics: string, labels: Record<string, string>): number => {
    for (const line of metrics.split('\n')) {
      const match = /^http_requests_total\{(.*)\}\s+(\S+)$/.exec(line);
      if (!match) continue;
      const have = Object.fromEntries([...match[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      if (Object.entries(labels).every(([key, value]) => have[key] === value)) return Number(match[2]);
    }
    return 0;
  };
  const metrics = async () => (await send('GET', '/metrics')).text;

  it('GET /trpc/auth.me counts under /trpc/auth.me, not under /api/auth/me', async () => {
    const before = await metrics();
    expect((await send('GET', '/trpc/auth.me', { headers: asUser() })).status).toBe(200);
    const after = await metrics();
    const trpc = { method: 'GET', route: '/trpc/auth.me', status: '200' };
    const rest = { method: 'GET', route: '/api/auth/me', status: '200' };
    expect(sampleOf(after, trpc) - sampleOf(before, trpc)).toBe(1);
    expect(sampleOf(after, rest) - sampleOf(before, rest)).toBe(0);
  });

  it('a batch by its distinct procedures, sorted; unknown procedures by one label', async () => {
    const before = await metrics();
    // Only admin.listUsers (index 1) takes an input.
    const input = encodeURIComponent('{"1":{"json":{}}}');
    await send('GET', `/trpc/auth.me,admin.listUsers,auth.me?batch=1&input=${input}`, { headers: asAdmin() });
    await send('GET', '/trpc/nope.one');
    await send('GET', '/trpc/nope.two');
    const after = await metrics();
    const batch = { method: 'GET', route: '/trpc/admin.listUsers,auth.me', status: '200' };
    const unknown = { method: 'GET', route: '/trpc/(unmatched)', status: '404' };
    expect(sampleOf(after, batch) - sampleOf(before, batch)).toBe(1);
    expect(sampleOf(after, unknown) - sampleOf(before, unknown)).toBe(2);
    expect(after).not.toContain('nope.one');
  });
});
