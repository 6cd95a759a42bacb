// GET /api/openapi.json and /docs: the document names every route with a stable operation id,
// its real success status, its error statuses in the envelope and its security, and /health
// beside them; every documented path reaches its own procedure; what scripts/openapi.ts prints
// (what CI lints) is what the server serves; the docs page is served from the package, never a CDN.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../server/http/openapi.ts';
import { restRoutesOf } from '../../server/http/routes.ts';
import { appRouter } from '../../server/routers/index.ts';
import { adminEnv, loginAdmin, registerAndLogin, startTestServer, type TestServer, type TestUser } from '../support/server.ts';
import { newUser } from '../support/factories.ts';
import { sendRaw } from '../support/raw.ts';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const HEALTH_PATHS = ['/health', '/health/flags'];
/** Paths served outside the REST table besides /health: a signal webhook's call. */
const PLAIN_PATHS = [...HEALTH_PATHS, '/hooks/{token}'];

let server: TestServer;
let adminToken: string;
let user: TestUser;
let doc: any;

beforeAll(async () => {
  server = await startTestServer(adminEnv);
  adminToken = (await loginAdmin(server)).access_token;
  user = await registerAndLogin(server, 'openapi');
  doc = (await server.http('GET', '/api/openapi.json')).body;
});
afterAll(() => server?.stop());

const send = (method: string, path: string, opts: { headers?: Record<string, string>; body?: string } = {}) =>
  sendRaw(server.url, method, path, opts);

/** A schema, or the named component it refers to. */
const resolved = (schema: any) => (schema?.$ref ? doc.components.schemas[String(schema.$ref).replace('#/components/schemas/', '')] : schema);

interface Operation {
  method: string;
  path: string;
  op: any;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

const operations = (): Operation[] =>
  Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

const operation = (method: string, path: string) => {
  const found = doc.paths[path]?.[method.toLowerCase()];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
};

const urlOf = (path: string) => path.replace(/\{\w+\}/g, '1');
const isAdminRoute = (path: string) => path.startsWith('/api/admin/');
/** Operations served by procedures, as opposed to the plain /health routes. */
const apiOperations = () => operations().filter((o) => o.path.startsWith('/api/'));
/** The documented schema a response refers to, resolved in components. */
const schemaOf = (response: any) => {
  const ref: string = response.content['application/json'].schema.$ref;
  return doc.components.schemas[ref.replace('#/components/schemas/', '')];
};

/** Calls an operation the way a caller who read only the document would: ids 1, body {}. */
const call = (o: Operation, token: string | undefined, body = '{}') =>
  send(o.method, urlOf(o.path), {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(o.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    body: o.method === 'GET' ? undefined : body,
  });

/** The value of one Prometheus sample (0 when absent), matched on the labels given. */
const sampleOf = (metrics: string, name: string, labels: Record<string, string>): number => {
  for (const line of metrics.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)\{(.*)\}\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...match[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => have[key] === value)) return Number(match[3]);
  }
  return 0;
};
const metricsText = async () => (await send('GET', '/metrics')).text;

describe('the document', () => {
  it('is OpenAPI 3 served as JSON', async () => {
    const res = await send('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(String(doc.openapi)).toMatch(/^3\./);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
  });

  it('is what scripts/openapi.ts prints (what CI lints), built the same way every time', async () => {
    const served = (await send('GET', '/api/openapi.json')).text;
    expect(buildOpenApiDocument(appRouter, packageJson.version)).toBe(served);
    const script = new URL('../../scripts/openapi.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    expect(stdout.trim()).toBe(served);
  });

  it('names the license of package.json', () => {
    expect(doc.info.license).toEqual({ name: packageJson.license, identifier: packageJson.license });
  });

  it('is public', async () => {
    expect((await send('GET', '/api/openapi.json', { headers: { authorization: 'Bearer not.a.token' } })).status).toBe(200);
  });

  it('lists the auth and operator paths', () => {
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/auth/register',
        '/api/auth/login',
        '/api/auth/refresh',
        '/api/auth/me',
        '/api/auth/logout',
        '/api/auth/password',
        '/api/admin/users',
        '/api/admin/users/{user_id}/deactivate',
        '/api/admin/users/{user_id}/activate',
        '/api/admin/halt',
      ]),
    );
    for (const path of Object.keys(doc.paths).filter((p) => !PLAIN_PATHS.includes(p))) expect(path).toMatch(/^\/api\//);
  });

  it('documents every REST route of the routers, each under an id derived from its procedure', () => {
    const routes = restRoutesOf(appRouter, '/api');
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const documented = routes.map((route) => [route.procedure, doc.paths[route.template]?.[route.method.toLowerCase()]?.operationId]);
    // `auth.login` → `authLogin`, written out here rather than imported, so a change of convention shows.
    const expected = routes.map((route) => [route.procedure, route.procedure.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase())]);
    expect(documented).toEqual(expected);
    expect(operation('POST', '/api/auth/login').operationId).toBe('authLogin');
    expect(operation('POST', '/api/admin/users/{user_id}/deactivate').operationId).toBe('adminDeactivateUser');
    expect(apiOperations().length).toBe(routes.length);
  });

  it('gives every operation a unique operationId', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares security on every operation: bearer or, for a public one, explicitly none', () => {
    const problems = operations()
      .filter((o) => !(Array.isArray(o.op.security) && (o.op.security.length === 0 || JSON.stringify(o.op.security) === JSON.stringify([{ bearerAuth: [] }]))))
      .map((o) => `${o.method} ${o.path}: ${JSON.stringify(o.op.security)}`);
    expect(problems).toEqual([]);
  });

  it("register's success is 201, not 200", () => {
    const responses = operation('POST', '/api/auth/register').responses;
    expect(Object.keys(responses)).toContain('201');
    expect(Object.keys(responses)).not.toContain('200');
    expect(resolved(responses['201'].content['application/json'].schema).properties).toHaveProperty('username');
  });

  it.each([
    ['/api/auth/logout'],
    ['/api/auth/password'],
  ])('%s succeeds with 204 and no content', (path) => {
    const responses = operation('POST', path).responses;
    expect(responses['204']).toBeDefined();
    expect(responses['204'].content).toBeUndefined();
    expect(Object.keys(responses)).not.toContain('200');
  });

  it('declares the bearer scheme', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('refers every error response to the ErrorBody envelope', () => {
    expect(doc.components.schemas.ErrorBody).toMatchObject({
      type: 'object',
      properties: { code: expect.any(Object), message: expect.any(Object), status: expect.any(Object), errors: expect.any(Object) },
    });
    expect(doc.components.schemas.ErrorBody.required).toEqual(expect.arrayContaining(['code', 'message', 'status']));
    const problems: string[] = [];
    for (const o of apiOperations()) {
      for (const [status, response] of Object.entries<any>(o.op.responses)) {
        if (Number(status) < 400) continue;
        if (response?.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorBody') problems.push(`${o.method} ${o.path} ${status}`);
      }
      if (!Object.keys(o.op.responses).includes('422')) problems.push(`${o.method} ${o.path} documents no 422`);
    }
    expect(problems).toEqual([]);
  });

  it('names the shared shapes as components, and the operations and lists refer to them', () => {
    const success = (method: string, path: string) => {
      const responses = doc.paths[path][method].responses;
      const status = Object.keys(responses).find((code) => Number(code) < 300)!;
      return responses[status].content['application/json'].schema;
    };
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    expect(success('post', '/api/equity/orders')).toEqual(ref('Order'));
    expect(success('get', '/api/equity/orders')).toEqual(ref('OrderList'));
    expect(doc.components.schemas.OrderList.properties.items.items).toEqual(ref('Order'));
    expect(success('get', '/api/equity/orders/{broker_order_id}')).toEqual(ref('Order'));
    expect(success('get', '/api/equity/positions')).toEqual(ref('PositionList'));
    expect(doc.components.schemas.PositionList.properties.items.items).toEqual(ref('Position'));
    expect(success('get', '/api/equity/account')).toEqual(ref('Account'));
    expect(success('post', '/api/auth/login')).toEqual(ref('TokenResponse'));
    expect(success('get', '/api/exchange-keys')).toMatchObject({ items: ref('ExchangeKey') });
    expect(success('get', '/api/equity/reports/{report_id}')).toEqual(ref('ReportDetail'));
    expect(success('get', '/api/equity/backtest/{result_id}')).toEqual(ref('BacktestResult'));
    for (const name of ['Order', 'Position', 'Account', 'Report', 'ReportDetail', 'Trace', 'ExchangeKey', 'BacktestResult', 'ErrorBody']) {
      expect(doc.components.schemas[name], name).toMatchObject({ type: 'object' });
    }
  });

  it('describes every property of every schema (components and inline) and every parameter', () => {
    const undescribed: string[] = [];
    let described = 0;
    const isBlank = (node: any) => typeof node?.description !== 'string' || node.description.trim() === '';
    // Every place a schema can hold another: a property named like a keyword (`items`) is only ever
    // reached through `properties`, so it is never taken for one.
    const walk = (schema: any, where: string): void => {
      if (typeof schema !== 'object' || schema === null) return;
      if (Array.isArray(schema)) return schema.forEach((item, index) => walk(item, `${where}[${index}]`));
      for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
        if (isBlank(property)) undescribed.push(`${where}.${name}`);
        else described++;
        walk(property, `${where}.${name}`);
      }
      for (const key of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'prefixItems', 'not']) walk(schema[key], `${where}/${key}`);
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, `#/components/schemas/${name}`);
    for (const o of operations()) {
      const where = `${o.method} ${o.path}`;
      for (const parameter of o.op.parameters ?? []) {
        if (isBlank(parameter)) undescribed.push(`${where} ${parameter.in} parameter ${parameter.name}`);
        else described++;
      }
      for (const [type, media] of Object.entries<any>(o.op.requestBody?.content ?? {})) walk(media.schema, `${where} request ${type}`);
      for (const [status, response] of Object.entries<any>(o.op.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) walk(media.schema, `${where} ${status} ${type}`);
      }
    }
    expect(undescribed, `${undescribed.length} without a description`).toEqual([]);
    expect(described).toBeGreaterThan(600);
  });

  it('public operations (register, login, refresh, health) say so with security: []', () => {
    const publicOps = [
      ['POST', '/api/auth/register'],
      ['POST', '/api/auth/login'],
      ['POST', '/api/auth/refresh'],
      ['GET', '/health'],
      ['GET', '/health/flags'],
      ['POST', '/hooks/{token}'],
    ] as const;
    for (const [method, path] of publicOps) expect(operation(method, path).security, path).toEqual([]);
  });

  it('every operation that needs a token declares bearerAuth and a 401; the others declare none', async () => {
    const problems: string[] = [];
    let protectedCount = 0;
    for (const o of operations()) {
      // What the server does decides whether a token is needed, not what the document claims.
      const res = await call(o, undefined);
      const needsToken = res.status === 401;
      if (needsToken) {
        protectedCount++;
        expect(res.headers['www-authenticate'], `${o.method} ${o.path}`).toBe('Bearer');
        if (JSON.stringify(o.op.security) !== JSON.stringify([{ bearerAuth: [] }])) problems.push(`${o.method} ${o.path}: security ${JSON.stringify(o.op.security)}`);
        if (!o.op.responses['401']) problems.push(`${o.method} ${o.path}: no 401 response`);
      } else if (JSON.stringify(o.op.security) !== '[]') {
        problems.push(`${o.method} ${o.path}: answered ${res.status} without a token but declares security ${JSON.stringify(o.op.security)}`);
      }
    }
    expect(protectedCount).toBeGreaterThanOrEqual(7);
    expect(problems).toEqual([]);
  });

  it('admin operations document 403 and refuse a user token with it', async () => {
    const admin = operations().filter((o) => isAdminRoute(o.path));
    expect(admin.length).toBeGreaterThanOrEqual(4);
    for (const o of admin) {
      expect(o.op.responses['403'], `${o.method} ${o.path}`).toBeDefined();
      const res = await call(o, user.tokens.access_token);
      expect(res.status, `${o.method} ${o.path}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'FORBIDDEN', status: 403 });
    }
  });
});

describe('/health and /health/flags', () => {
  it('are documented as public operations tagged health, from the schemas the routes answer with', async () => {
    const health = operation('GET', '/health');
    const flags = operation('GET', '/health/flags');
    expect(health).toMatchObject({ tags: ['health'], security: [] });
    expect(flags).toMatchObject({ tags: ['health'], security: [] });
    expect(Object.keys(health.responses).sort()).toEqual(['200', '503']);
    expect(Object.keys(flags.responses)).toEqual(['200']);

    const healthSchema = schemaOf(health.responses['200']);
    expect(schemaOf(health.responses['503'])).toBe(healthSchema);
    expect(healthSchema.properties.status.enum).toEqual(['ok', 'degraded']);
    expect(healthSchema.properties.halted).toMatchObject({ type: 'boolean' });

    // The documented fields are exactly the ones the routes answer with, all of them required.
    const answer = await send('GET', '/health');
    expect(answer.status).toBe(200);
    expect(Object.keys(healthSchema.properties).sort()).toEqual(Object.keys(answer.body).sort());
    expect([...healthSchema.required].sort()).toEqual(Object.keys(answer.body).sort());
    const flagsSchema = schemaOf(flags.responses['200']);
    const flagsAnswer = await send('GET', '/health/flags');
    expect(Object.keys(flagsSchema.properties).sort()).toEqual(Object.keys(flagsAnswer.body).sort());
    for (const [name, value] of Object.entries(flagsAnswer.body)) {
      expect(typeof value, name).toBe('boolean');
      expect(flagsSchema.properties[name], name).toMatchObject({ type: 'boolean' });
    }
  });
});

describe('every documented path reaches its own procedure', () => {
  it('answers each operation from its own route, with a documented status', async () => {
    const problems: string[] = [];
    const reached: string[] = [];
    for (const o of operations()) {
      // A user of its own per call: an operation such as logout-all ends every session of its caller.
      // Made by the factory: two password hashes per operation would spend the test's time budget.
      const token = isAdminRoute(o.path) ? adminToken : (await newUser(server, { prefix: 'reach' })).tokens.access_token;
      const before = await metricsText();
      const res = await call(o, token);
      const after = await metricsText();
      const where = `${o.method} ${o.path} -> ${res.status} ${res.text.slice(0, 200)}`;

      if (!res.headers['x-request-id']) problems.push(`${where}: no X-Request-Id`);
      if (res.status === 404 && res.body?.message === 'Not found') problems.push(`${where}: no route matched`);
      if (!Object.keys(o.op.responses).includes(String(res.status))) problems.push(`${where}: status not documented`);
      if (res.status >= 500) problems.push(`${where}: server error`);
      // The procedure that ran names its own template in the metrics: a literal path shadowed by
      // a parameter path (or the other way round) shows up here as another template.
      const labels = { method: o.method, route: o.path, status: String(res.status) };
      const counted = sampleOf(after, 'http_requests_total', labels) - sampleOf(before, 'http_requests_total', labels);
      if (counted !== 1) problems.push(`${where}: counted ${counted} times under route ${o.path}`);
      else reached.push(`${o.method} ${o.path}`);
    }
    expect(problems).toEqual([]);
    expect(reached.length).toBe(operations().length);
  });

  it('each success status the server answers is the documented one', async () => {
    const me = operation('GET', '/api/auth/me');
    expect((await send('GET', '/api/auth/me', { headers: { authorization: `Bearer ${user.tokens.access_token}` } })).status).toBe(200);
    expect(me.responses['200']).toBeDefined();
    // An operator reactivating an active user: 200 with the user, as documented.
    const activate = await send('POST', `/api/admin/users/${user.user.id}/activate`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(activate.status).toBe(200);
    expect(operation('POST', '/api/admin/users/{user_id}/activate').responses['200']).toBeDefined();
  });

  it('an unknown id on an operator route is 404 NOT_FOUND from the procedure, not from routing', async () => {
    const res = await send('POST', '/api/admin/users/2147483647/deactivate', { headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(res.body.message).not.toBe('Not found');
  });
});

describe('every status the server answers is documented', () => {
  it('413 on every operation with a body (the body limit applies before any route runs)', async () => {
    const oversized = JSON.stringify({ pad: 'x'.repeat(server.config.BODY_LIMIT_BYTES + 1) });
    const problems: string[] = [];
    for (const o of operations().filter((x) => x.op.requestBody)) {
      const res = await call(o, isAdminRoute(o.path) ? adminToken : user.tokens.access_token, oversized);
      expect(res.status, `${o.method} ${o.path}`).toBe(413);
      if (!o.op.responses['413']) problems.push(`${o.method} ${o.path} answers 413 but does not document it`);
    }
    expect(problems).toEqual([]);
  });

  describe('while an operator has halted the service', () => {
    const haltAs = (halted: boolean) =>
      send('POST', '/api/admin/halt', { headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ halted }) });

    beforeAll(async () => {
      expect((await haltAs(true)).status).toBe(200);
    });
    afterAll(async () => {
      expect((await haltAs(false)).status).toBe(200);
    });

    it('every operation, called by a user, answers a status it documents', async () => {
      const problems: string[] = [];
      for (const o of operations()) {
        const res = await call(o, isAdminRoute(o.path) ? adminToken : user.tokens.access_token);
        if (!Object.keys(o.op.responses).includes(String(res.status))) problems.push(`${o.method} ${o.path} -> ${res.status} ${res.text}`);
      }
      expect(problems).toEqual([]);
    });

    it('login and refresh of a non-admin answer 503 SERVICE_HALTED, and document it', async () => {
      const login = await send('POST', '/api/auth/login', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: user.username, password: user.password }),
      });
      const refresh = await send('POST', '/api/auth/refresh', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: user.tokens.refresh_token }),
      });
      expect(login.status).toBe(503);
      expect(login.body).toMatchObject({ code: 'SERVICE_HALTED', status: 503 });
      expect(refresh.status).toBe(503);
      expect({
        login: Object.keys(operation('POST', '/api/auth/login').responses),
        refresh: Object.keys(operation('POST', '/api/auth/refresh').responses),
      }).toEqual({ login: expect.arrayContaining(['503']), refresh: expect.arrayContaining(['503']) });
    });
  });
});

describe('/docs', () => {
  it('serves an HTML page over /api/openapi.json with assets from this server, no CDN', async () => {
    const res = await send('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('/docs/swagger-ui-bundle.js');
    expect(res.text).toContain('/docs/swagger-ui.css');
    expect(res.text).toContain('/api/openapi.json');
    expect(res.text).not.toMatch(/https?:\/\//i);
    expect(res.text).not.toMatch(/src=["']\/\//);
  });

  it.each([
    ['/docs/swagger-ui-bundle.js', /^(text|application)\/javascript/],
    ['/docs/swagger-ui.css', /^text\/css/],
  ])('serves %s', async (path, type) => {
    const res = await send('GET', path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.text.length).toBeGreaterThan(1000);
  });

  it.each([
    '/docs/../package.json',
    '/docs/%2e%2e/package.json',
    '/docs/..%2fpackage.json',
    '/docs/..%2f..%2fpackage.json',
    '/docs/swagger-ui.css/../../package.json',
    '/docs/package.json',
    '/docs/index.html',
    '/docs/swagger-initializer.js',
    '/docs//etc/passwd',
  ])('refuses %s with 404', async (path) => {
    const res = await send('GET', path);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(res.text).not.toContain('"dependencies"');
  });
});
