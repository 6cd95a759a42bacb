// GET /metrics: Prometheus text, HTTP series labelled by route template (never a raw path or a
// query string), the declared hook series, and the METRICS_TOKEN guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, loginAdmin, startTestServer, type TestServer } from '../support/server.ts';

const METRICS_TOKEN = 'some-metrics-token-123';

let server: TestServer;
let guarded: TestServer;
let adminToken: string;

beforeAll(async () => {
  [server, guarded] = await Promise.all([startTestServer(adminEnv), startTestServer({ METRICS_TOKEN })]);
  adminToken = (await loginAdmin(server)).access_token;
});
afterAll(async () => {
  await Promise.all([server?.stop(), guarded?.stop()]);
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
const samplesOf = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });

const scrape = async (target = server, headers: Record<string, string> = {}) => {
  const res = await target.http('GET', '/metrics', { headers });
  expect(res.status, res.text).toBe(200);
  return { text: res.text, samples: samplesOf(res.text), contentType: res.headers.get('content-type') };
};

const withLabels = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));

describe('GET /metrics', () => {
  it('answers Prometheus text format 0.0.4', async () => {
    const { contentType, text } = await scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toMatch(/^# HELP /m);
    expect(text).toMatch(/^# TYPE /m);
  });

  it('counts requests and their durations by route template, method and status', async () => {
    const me = await server.http('GET', '/api/auth/me', { token: adminToken });
    expect(me.status).toBe(200);
    const { samples } = await scrape();
    const labels = { method: 'GET', route: '/api/auth/me', status: '200' };
    expect(withLabels(samples, 'http_requests_total', labels)[0]?.value).toBeGreaterThanOrEqual(1);
    expect(withLabels(samples, 'http_request_duration_seconds_count', labels)[0]?.value).toBeGreaterThanOrEqual(1);
    expect(withLabels(samples, 'http_request_duration_seconds_sum', labels)).toHaveLength(1);
    expect(withLabels(samples, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })[0]?.value).toBeGreaterThanOrEqual(1);
  });

  it('labels a parameter path by its template, never by the raw path', async () => {
    const res = await server.http('POST', '/api/admin/users/5/deactivate', { token: adminToken });
    expect(res.status).toBe(404);
    const { samples } = await scrape();
    const labels = { method: 'POST', route: '/api/admin/users/{user_id}/deactivate', status: '404' };
    expect(withLabels(samples, 'http_requests_total', labels)[0]?.value).toBe(1);
    expect(withLabels(samples, 'http_request_duration_seconds_count', labels)[0]?.value).toBe(1);
    const routes = new Set(samples.map((s) => s.labels.route).filter((route) => route !== undefined));
    expect([...routes].filter((route) => route.includes('/5/'))).toEqual([]);
  });

  it('keeps every route label a template: no raw ids, unknown paths or query strings', async () => {
    await server.http('GET', '/api/auth/me?token=query-secret-abc');
    await server.http('GET', '/api/nope/123456789');
    await server.http('GET', '/not-a-route-987654321');
    await server.http('POST', '/api/admin/users/77/activate', { token: adminToken });
    await server.http('GET', '/api/admin/users?page=2&size=3', { token: adminToken });
    const { text, samples } = await scrape();
    expect(text).not.toContain('query-secret-abc');
    // Label values only: a sample value (heap bytes, timestamps) may hold any digits.
    const labelValues = samples.flatMap((s) => Object.values(s.labels));
    expect(labelValues.filter((value) => value.includes('123456789') || value.includes('987654321'))).toEqual([]);
    const routes = [...new Set(samples.map((s) => s.labels.route).filter((route): route is string => route !== undefined))];
    for (const route of routes) {
      expect(route).not.toContain('?');
      expect(route).not.toMatch(/\/\d+(\/|$)/);
    }
    expect(routes).toEqual(expect.arrayContaining(['/api/auth/me', '/api/admin/users/{user_id}/activate', '/api/admin/users']));
  });

  it('declares the HTTP series with their help and type', async () => {
    const { text } = await scrape();
    for (const [name, type] of [
      ['http_requests_total', 'counter'],
      ['http_request_duration_seconds', 'histogram'],
    ]) {
      expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
    }
  });

  it('needs no token when METRICS_TOKEN is unset', async () => {
    const res = await server.http('GET', '/metrics', { token: 'anything-at-all' });
    expect(res.status).toBe(200);
  });
});

describe('METRICS_TOKEN', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer wrong-metrics-token' }],
    ['the token with one character more', { authorization: `Bearer ${METRICS_TOKEN}4` }],
    ['the token as Basic credentials', { authorization: `Basic ${METRICS_TOKEN}` }],
    ['the token in a query string only', {}, `?token=${METRICS_TOKEN}`],
  ])('answers 401 for %s', async (_what, headers: Record<string, string>, query = '') => {
    const res = await guarded.http('GET', `/metrics${query}`, { headers });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.text).not.toContain('http_requests_total');
  });

  it('answers 200 with Authorization: Bearer <METRICS_TOKEN>', async () => {
    const { samples } = await scrape(guarded, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(samples.some((s) => s.name === 'http_requests_total' && s.labels.route === '/metrics' && s.labels.status === '401')).toBe(true);
  });

  it('leaves /health and the API unguarded by it', async () => {
    expect((await guarded.http('GET', '/health')).status).toBe(200);
    expect((await guarded.http('GET', '/api/openapi.json')).status).toBe(200);
  });
});
