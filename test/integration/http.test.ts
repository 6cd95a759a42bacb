// The HTTP layer from outside: every documented route answers bad input with 422 (never 500),
// JSON bodies with or without a declared type (other media types: http-edges.test.ts), the size
// limit, unknown routes, request ids, CORS, health and flags, and strict body booleans on REST
// and /trpc alike.
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, loginAdmin, registerAndLogin, startTestServer, uniqueName, type TestServer, type TestUser } from '../support/server.ts';
import { sendRaw } from '../support/raw.ts';

let server: TestServer;
/** CORS for one origin, a small body limit, and live trading switched on. */
let tuned: TestServer;
let adminToken: string;
let user: TestUser;

beforeAll(async () => {
  [server, tuned] = await Promise.all([
    startTestServer(adminEnv),
    startTestServer({ CORS_ORIGINS: 'http://app.example', BODY_LIMIT_BYTES: '2048', FEATURE_EQUITY_LIVE: 'true', ALLOW_LIVE: '1' }),
  ]);
  adminToken = (await loginAdmin(server)).access_token;
  user = await registerAndLogin(server, 'http');
  operations = operationsOf((await server.http('GET', '/api/openapi.json')).body);
  // A signal webhook's path parameter is its credential: the sweep calls a hook that exists, as
  // a charting tool would, since an unknown one is 404 whatever the body.
  const hook = await server.http('POST', '/api/signals/webhooks', { token: adminToken, body: { name: 'sweep', asset_class: 'crypto', mode: 'paper' } });
  expect(hook.status, hook.text).toBe(201);
  pathDefaults.token = hook.body.token;
});
afterAll(async () => {
  await Promise.all([server?.stop(), tuned?.stop()]);
});

const send = (target: TestServer, method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}) =>
  sendRaw(target.url, method, path, opts);

const JSON_HEADERS = { 'content-type': 'application/json' };

// --- the operations of the OpenAPI document -------------------------------------------------

interface Parameter {
  in: string;
  name: string;
  schema?: any;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  bodySchema: any;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

const resolveRef = (doc: any, schema: any): any => {
  if (typeof schema?.$ref !== 'string') return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  return resolveRef(doc, doc.components?.schemas?.[name]);
};

const operationsOf = (doc: any): Operation[] =>
  Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []) as Parameter[],
        bodySchema: resolveRef(doc, op.requestBody?.content?.['application/json']?.schema),
      })),
  );

/** Path parameters that cannot be 1: a hook's token (made in beforeAll). */
const pathDefaults: Record<string, string> = {};

/** The operation's path with every path parameter set (to 1 unless overridden or defaulted). */
const urlOf = (op: Operation, overrides: Record<string, string> = {}) =>
  op.path.replace(/\{(\w+)\}/g, (_, name: string) => overrides[name] ?? pathDefaults[name] ?? '1');

const schemaType = (schema: any): string | undefined => {
  const type = schema?.type ?? schema?.anyOf?.[0]?.type ?? schema?.oneOf?.[0]?.type;
  return Array.isArray(type) ? type.find((t: string) => t !== 'null') : type;
};

/** A JSON value of the wrong type for a field, the kind a lenient parser would coerce. */
const wrongValueFor = (schema: any): unknown => {
  switch (schemaType(schema)) {
    case 'integer':
    case 'number':
      return 'x';
    case 'boolean':
      return 'false';
    case 'object':
    case 'array':
      return 'x';
    default:
      return [[1]];
  }
};

const propertiesOf = (op: Operation): [string, any][] => Object.entries(op.bodySchema?.properties ?? {});

const label = (op: Operation, what: string) => `${op.method} ${op.path} ${what}`;

let operations: Operation[] = [];
/** Every answer of the sweep, to check at the end that none was a 500. */
const sweep: { label: string; status: number }[] = [];

/** Describes how an answer falls short of a 422 VALIDATION_ERROR envelope; undefined when it is one. */
const notValidationError = (res: { status: number; body: any }, expectPaths: string[] = []): string | undefined => {
  const body = res.body;
  if (res.status !== 422) return `status ${res.status}: ${JSON.stringify(body)}`;
  if (body?.code !== 'VALIDATION_ERROR' || body.status !== 422 || typeof body.message !== 'string') return `body ${JSON.stringify(body)}`;
  if (!Array.isArray(body.errors) || body.errors.length === 0) return `no field errors: ${JSON.stringify(body)}`;
  if (!body.errors.every((e: any) => typeof e.path === 'string' && typeof e.message === 'string')) return `error without a path: ${JSON.stringify(body)}`;
  const paths = body.errors.map((e: any) => e.path);
  // An error inside a field (an array's element: `bars.0`) names that field too.
  const missing = expectPaths.filter((p) => !paths.some((path: string) => path === p || path.startsWith(`${p}.`)));
  return missing.length > 0 ? `errors lack ${missing.join(', ')}: ${JSON.stringify(body.errors)}` : undefined;
};

describe('invalid input on every documented route answers 422 VALIDATION_ERROR', () => {
  const attempt = async (what: string, op: Operation, path: string, body: string | undefined, expectPaths: string[] = []) => {
    const res = await send(server, op.method, path, {
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : JSON_HEADERS) },
      body,
    });
    sweep.push({ label: label(op, what), status: res.status });
    const problem = notValidationError(res, expectPaths);
    return problem ? `${label(op, what)} -> ${problem}` : undefined;
  };

  it('reads the route list from the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(10);
    expect(operations.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining(['POST /api/auth/register', 'GET /api/auth/me', 'POST /api/admin/users/{user_id}/deactivate', 'POST /api/admin/halt']),
    );
  });

  it('malformed JSON on every route with a body', async () => {
    const problems: string[] = [];
    for (const op of operations.filter((o) => o.bodySchema)) {
      for (const body of ['{"a":', "{'a': 1}", '{"a": 1,}', 'nope']) {
        const problem = await attempt(`malformed ${body}`, op, urlOf(op), body, ['']);
        if (problem) problems.push(problem);
      }
    }
    expect(problems).toEqual([]);
  });

  it('bodies of the wrong type on every route with a body', async () => {
    const problems: string[] = [];
    const withBody = operations.filter((o) => o.bodySchema);
    expect(withBody.length).toBeGreaterThan(0);
    for (const op of withBody) {
      const props = propertiesOf(op);
      const variants: [string, unknown, string[]][] = [
        ['every field a nested array', Object.fromEntries(props.map(([name]) => [name, [[1]]])), props.map(([name]) => name)],
        ['every field of the wrong type', Object.fromEntries(props.map(([name, schema]) => [name, wrongValueFor(schema)])), props.map(([name]) => name)],
        ['a JSON array', [[1]], []],
        ['an empty JSON array', [], []],
        ['a bare string', 'str', []],
        ['a number', 42, []],
        ['null', null, []],
        ['true', true, []],
      ];
      for (const [what, body, paths] of variants) {
        const problem = await attempt(what, op, urlOf(op), JSON.stringify(body), paths);
        if (problem) problems.push(problem);
      }
    }
    expect(problems).toEqual([]);
  });

  it('non-integer path parameters', async () => {
    const problems: string[] = [];
    // Integer path parameters only: a broker order id is free text, which any value fits.
    const isIntegerPath = (p: Parameter) => p.in === 'path' && p.schema?.type === 'integer';
    const withPathParams = operations.filter((o) => o.parameters.some(isIntegerPath));
    expect(withPathParams.length).toBeGreaterThan(0);
    for (const op of withPathParams) {
      for (const param of op.parameters.filter(isIntegerPath)) {
        for (const value of ['abc', '1.5', '%20', '0x1g']) {
          const problem = await attempt(`${param.name}=${value}`, op, urlOf(op, { [param.name]: value }), op.method === 'GET' ? undefined : '{}', [param.name]);
          if (problem) problems.push(problem);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('query parameters of the wrong type', async () => {
    const problems: string[] = [];
    for (const op of operations) {
      for (const param of op.parameters.filter((p) => p.in === 'query')) {
        const type = schemaType(param.schema);
        if (type !== 'integer' && type !== 'number' && type !== 'boolean') continue;
        for (const value of ['abc', '[[1]]']) {
          const problem = await attempt(`?${param.name}=${value}`, op, `${urlOf(op)}?${param.name}=${encodeURIComponent(value)}`, op.method === 'GET' ? undefined : '{}', [param.name]);
          if (problem) problems.push(problem);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('an empty body on a route with required fields lists every missing field', async () => {
    const problems: string[] = [];
    const withRequired = operations.filter((o) => (o.bodySchema?.required ?? []).length > 0);
    expect(withRequired.length).toBeGreaterThan(0);
    for (const op of withRequired) {
      for (const [what, headers] of [
        ['empty body', JSON_HEADERS],
        ['empty body, no content type', {}],
      ] as const) {
        const res = await send(server, op.method, urlOf(op), { headers: { authorization: `Bearer ${adminToken}`, ...headers }, body: '' });
        sweep.push({ label: label(op, what), status: res.status });
        const problem = notValidationError(res, op.bodySchema.required);
        if (problem) problems.push(`${label(op, what)} -> ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the empty register body names username, email and password', async () => {
    const res = await send(server, 'POST', '/api/auth/register', { headers: JSON_HEADERS, body: '' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', status: 422, message: expect.any(String) });
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['username', 'email', 'password']));
  });

  it('no answer in the whole sweep was a 500', () => {
    expect(sweep.length).toBeGreaterThan(50);
    expect(sweep.filter((s) => s.status >= 500)).toEqual([]);
  });
});

describe('hostile but well-formed JSON never causes a 500', () => {
  const DEPTH = 10_000;

  it('a body nested 10 000 levels deep is 422 on every route with a body', async () => {
    // JSON.parse copes with this; anything that walks the value recursively (re-serialising,
    // coercing) overflows the stack unless nesting is bounded.
    const nested = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
    const problems: string[] = [];
    for (const op of operations.filter((o) => o.bodySchema)) {
      const field = propertiesOf(op)[0]?.[0] ?? 'a';
      for (const [what, body] of [
        ['deep array in a field', `{"${field}":${nested}}`],
        ['deep object', `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`],
      ] as const) {
        const res = await send(server, op.method, urlOf(op), { headers: { authorization: `Bearer ${adminToken}`, ...JSON_HEADERS }, body });
        if (res.status !== 422 || res.body?.code !== 'VALIDATION_ERROR') problems.push(`${label(op, what)} -> ${res.status} ${res.text}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each([
    ['a NUL character', 'ab\u0000cd_efgh'],
    ['an unpaired surrogate', 'ab\ud800cd_efgh'],
  ])('strings holding %s are refused, not a 500, on every route with a body', async (_what, value) => {
    const problems: string[] = [];
    for (const op of operations.filter((o) => propertiesOf(o).some(([, schema]) => schemaType(schema) === 'string'))) {
      const body = Object.fromEntries(propertiesOf(op).map(([name, schema]) => [name, schemaType(schema) === 'string' ? value : wrongValueFor(schema)]));
      const res = await send(server, op.method, urlOf(op), { headers: { authorization: `Bearer ${adminToken}`, ...JSON_HEADERS }, body: JSON.stringify(body) });
      if (res.status >= 500 || res.body?.status !== res.status) problems.push(`${label(op, JSON.stringify(body))} -> ${res.status} ${res.text}`);
    }
    expect(problems).toEqual([]);
  });

  it('the same strings through /trpc are refused, not a 500', async () => {
    for (const username of ['ab\u0000cd', 'ab\ud800cd']) {
      const res = await send(server, 'POST', '/trpc/auth.login', {
        headers: JSON_HEADERS,
        body: JSON.stringify({ json: { username, password: 'password123' } }),
      });
      expect(res.status, res.text).toBeLessThan(500);
    }
  });
});

describe('request bodies are read as JSON when declared so or not declared at all', () => {
  const registration = (prefix: string) => {
    const username = uniqueName(prefix);
    return { username, email: `${username}@example.com`, password: 'password123' };
  };

  it.each([
    ['no content type', {}],
    ['an empty content type', { 'content-type': '' }],
    ['application/json; charset=utf-8', { 'content-type': 'application/json; charset=utf-8' }],
    ['Application/JSON (media types are case-insensitive)', { 'content-type': 'Application/JSON' }],
    ['application/vnd.api+json', { 'content-type': 'application/vnd.api+json' }],
    ['Content-Encoding: identity', { 'content-type': 'application/json', 'content-encoding': 'identity' }],
  ])('with %s', async (_what, headers: Record<string, string>) => {
    const body = registration('ctype');
    const res = await send(server, 'POST', '/api/auth/register', { headers, body: JSON.stringify(body) });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ username: body.username, email: body.email, role: 'user' });
  });

  it('ignores unknown extra fields', async () => {
    const body = { ...registration('extra'), role: 'admin', is_admin: true, nickname: 'nick' };
    const res = await send(server, 'POST', '/api/auth/register', { headers: JSON_HEADERS, body: JSON.stringify(body) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.role).toBe('user');
    expect(res.body).not.toHaveProperty('nickname');
    expect(res.body).not.toHaveProperty('is_admin');
  });
});

describe('body size limit', () => {
  const oversized = () => JSON.stringify({ username: uniqueName('big'), email: 'big@example.com', password: 'password123', pad: 'x'.repeat(3000) });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over BODY_LIMIT_BYTES', async () => {
    const res = await send(tuned, 'POST', '/api/auth/register', { headers: JSON_HEADERS, body: oversized() });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 'PAYLOAD_TOO_LARGE', status: 413, message: expect.any(String) });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('also when the body is chunked and declares no length', async () => {
    const res = await send(tuned, 'POST', '/api/auth/register', { headers: { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, body: oversized() });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  it('also on /trpc', async () => {
    const res = await send(tuned, 'POST', '/trpc/auth.register', { headers: JSON_HEADERS, body: JSON.stringify({ json: JSON.parse(oversized()) }) });
    expect(res.status).toBe(413);
    expect(res.body.error.json.data.domainCode).toBe('PAYLOAD_TOO_LARGE');
  });

  it('a body just under the limit is processed', async () => {
    const username = uniqueName('under');
    const base = { username, email: `${username}@example.com`, password: 'password123', pad: '' };
    const body = JSON.stringify({ ...base, pad: 'x'.repeat(2000 - JSON.stringify(base).length) });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(2048);
    const res = await send(tuned, 'POST', '/api/auth/register', { headers: JSON_HEADERS, body });
    expect(res.status, res.text).toBe(201);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/api/nope'],
    ['POST', '/api/nope'],
    ['GET', '/api/auth/nope'],
    ['GET', '/x'],
    ['POST', '/x'],
    ['GET', '/'],
  ])('%s %s answers 404 NOT_FOUND in the envelope', async (method, path) => {
    const res = await send(server, method, path, method === 'POST' ? { headers: JSON_HEADERS, body: '{}' } : {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', status: 404, message: expect.any(String) });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('X-Request-Id', () => {
  const SANE = /^[A-Za-z0-9._:-]{1,128}$/;
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it('is on every kind of response', async () => {
    const answers = [
      await send(server, 'GET', '/health'),
      await send(server, 'GET', '/health/flags'),
      await send(server, 'GET', '/metrics'),
      await send(server, 'GET', '/api/openapi.json'),
      await send(server, 'GET', '/docs'),
      await send(server, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${user.tokens.access_token}` } }),
      await send(server, 'GET', '/api/auth/me'),
      await send(server, 'POST', '/api/auth/login', { headers: JSON_HEADERS, body: '{"a":' }),
      await send(server, 'GET', '/api/nope'),
      await send(server, 'GET', '/nope'),
      await send(server, 'OPTIONS', '/api/auth/me'),
      await send(server, 'GET', '/trpc/auth.me', { headers: { authorization: `Bearer ${user.tokens.access_token}` } }),
      await send(server, 'GET', '/trpc/nope'),
      await send(tuned, 'POST', '/api/auth/register', { headers: JSON_HEADERS, body: JSON.stringify({ pad: 'x'.repeat(4000) }) }),
    ];
    const ids = answers.map((res) => res.headers['x-request-id']);
    for (const [i, id] of ids.entries()) expect(id, `answer ${i} (${answers[i]!.status})`).toMatch(SANE);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([
    ['GET', '/health'],
    ['GET', '/api/auth/me'],
    ['GET', '/api/nope'],
    ['GET', '/trpc/auth.me'],
  ])('echoes a sane caller id on %s %s', async (method, path) => {
    const res = await send(server, method, path, { headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers['x-request-id']).toBe('abc-123');
  });

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['spaces', 'abc 123'],
    ['a newline escape', 'abc%0d%0aSet-Cookie:x'],
    ['quotes', '"abc"'],
    ['non-ASCII', 'abc-ü'],
  ])('replaces an insane caller id (%s) with a generated one', async (_what, given) => {
    const res = await send(server, 'GET', '/health', { headers: { 'x-request-id': Buffer.from(given, 'utf8').toString('latin1') } });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).not.toBe(given);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });
});

describe('CORS', () => {
  const ALLOWED = 'http://app.example';
  const corsHeaders = (headers: IncomingHttpHeaders) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));

  it('an allowed origin gets Access-Control-Allow-Origin for it, on success and error answers', async () => {
    for (const [method, path] of [
      ['GET', '/health'],
      ['GET', '/api/auth/me'],
      ['GET', '/api/nope'],
    ] as const) {
      const res = await send(tuned, method, path, { headers: { origin: ALLOWED } });
      expect(res.headers['access-control-allow-origin'], `${method} ${path}`).toBe(ALLOWED);
      expect(res.headers.vary).toMatch(/Origin/i);
      expect(res.headers['access-control-expose-headers']).toMatch(/X-Request-Id/i);
    }
  });

  it('a preflight answers 204 with the allowed methods and headers', async () => {
    const res = await send(tuned, 'OPTIONS', '/api/auth/register', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    const methods = String(res.headers['access-control-allow-methods']).toUpperCase();
    for (const method of ['GET', 'POST']) expect(methods).toContain(method);
    const allowedHeaders = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const header of ['authorization', 'content-type']) expect(allowedHeaders).toContain(header);
  });

  it('another origin gets no CORS headers', async () => {
    const simple = await send(tuned, 'GET', '/health', { headers: { origin: 'http://evil.example' } });
    expect(simple.status).toBe(200);
    expect(corsHeaders(simple.headers)).toEqual([]);
    const preflight = await send(tuned, 'OPTIONS', '/api/auth/register', {
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(corsHeaders(preflight.headers)).toEqual([]);
  });

  it('a server without CORS_ORIGINS sends none', async () => {
    const simple = await send(server, 'GET', '/health', { headers: { origin: ALLOWED } });
    expect(corsHeaders(simple.headers)).toEqual([]);
    const preflight = await send(server, 'OPTIONS', '/api/auth/register', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
    });
    expect(corsHeaders(preflight.headers)).toEqual([]);
  });
});

describe('health', () => {
  const FLAG_KEYS = [
    'FEATURE_EQUITY_PAPER',
    'FEATURE_EQUITY_LIVE',
    'FEATURE_LLM_ANALYSIS',
    'FEATURE_EQUITY_ANALYSIS',
    'FEATURE_USBROKER_BROKER',
    'FEATURE_KRBROKER_BROKER',
    'ALLOW_LIVE',
  ];

  it('GET /health answers 200 with status, db, version and uptime', async () => {
    const res = await send(server, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok', db: 'ok', version: expect.any(String), uptime_s: expect.any(Number), halted: false });
    expect(res.body.version).not.toBe('');
    expect(res.body.uptime_s).toBeGreaterThanOrEqual(0);
  });

  it('GET /health/flags answers exactly the seven settings as booleans', async () => {
    const res = await send(server, 'GET', '/health/flags');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...FLAG_KEYS].sort());
    for (const key of FLAG_KEYS) expect(typeof res.body[key], key).toBe('boolean');
    expect(res.body).toMatchObject({ FEATURE_EQUITY_LIVE: false, ALLOW_LIVE: false });
  });

  it('reports FEATURE_EQUITY_LIVE=true and ALLOW_LIVE=1 as true', async () => {
    const res = await send(tuned, 'GET', '/health/flags');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...FLAG_KEYS].sort());
    expect(res.body).toMatchObject({ FEATURE_EQUITY_LIVE: true, ALLOW_LIVE: true });
  });

  it('needs no token', async () => {
    expect((await send(server, 'GET', '/health', { headers: { authorization: 'Bearer not.a.token' } })).status).toBe(200);
  });
});

describe('string booleans never coerce in bodies', () => {
  const halt = (body: string) =>
    send(server, 'POST', '/api/admin/halt', { headers: { authorization: `Bearer ${adminToken}`, ...JSON_HEADERS }, body });

  const expectStillServing = async () => {
    const me = await send(server, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${user.tokens.access_token}` } });
    expect(me.status).toBe(200);
  };

  it.each(['"false"', '"true"', '0', '1', '"0"', 'null'])('REST {"halted": %s} answers 422', async (value) => {
    const res = await halt(`{"halted":${value}}`);
    expect(notValidationError(res, ['halted'])).toBeUndefined();
    await expectStillServing();
  });

  it('still 422 after a valid REST call has run through the same procedure', async () => {
    const valid = await halt('{"halted":false}');
    expect(valid.status).toBe(200);
    expect(valid.body).toMatchObject({ halted: false });
    const res = await halt('{"halted":"false"}');
    expect(notValidationError(res, ['halted'])).toBeUndefined();
    await expectStillServing();
  });

  it('and through /trpc after the REST calls', async () => {
    const res = await send(server, 'POST', '/trpc/admin.halt', {
      headers: { authorization: `Bearer ${adminToken}`, ...JSON_HEADERS },
      body: JSON.stringify({ json: { halted: 'false' } }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.json.data).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422 });
    expect(res.body.error.json.data.errors.map((e: { path: string }) => e.path)).toContain('halted');
    await expectStillServing();
  });
});
