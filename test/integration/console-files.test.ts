// The web console's files under /app/ (server/http/console.ts) over HTTP, from a tiny fake build
// in a temp dir (CONSOLE_DIR): the hint without a build, GET/HEAD only, cache and CSP headers,
// traversal refused, the page for console routes, one metrics label, and served while halted.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../support/factories.ts';
import { startTestServer, tempDir, type TestServer } from '../support/server.ts';

const INDEX_HTML = '<!doctype html><title>console</title><script type="module" src="/app/assets/index-abc123.js"></script>';
const ASSET_JS = 'console.log("console")';

/** One request with the path exactly as written (fetch and WHATWG URLs fold `..` away). */
const raw = (server: TestServer, method: string, rawPath: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path: rawPath, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });

const buildDir = tempDir();
const emptyDir = tempDir();
let server: TestServer;
let unbuilt: TestServer;

beforeAll(async () => {
  mkdirSync(path.join(buildDir, 'assets'));
  writeFileSync(path.join(buildDir, 'index.html'), INDEX_HTML);
  writeFileSync(path.join(buildDir, 'assets', 'index-abc123.js'), ASSET_JS);
  writeFileSync(path.join(buildDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  // A file beside the build, where a traversal would land.
  writeFileSync(path.join(buildDir, '..', `secret-${path.basename(buildDir)}.txt`), 'secret');
  [server, unbuilt] = await Promise.all([startTestServer({ CONSOLE_DIR: buildDir }), startTestServer({ CONSOLE_DIR: emptyDir })]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), unbuilt?.stop()]);
  rmSync(path.join(buildDir, '..', `secret-${path.basename(buildDir)}.txt`), { force: true });
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(emptyDir, { recursive: true, force: true });
});

describe('/app/ without a build', () => {
  it('answers 404 with the hint to run npm run build, and the service runs', async () => {
    const res = await unbuilt.http('GET', '/app/');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(res.body.message).toContain('npm run build');
    expect((await unbuilt.http('GET', '/health')).status).toBe(200);
  });
});

describe('/app/ with a build', () => {
  it('serves index.html with no-cache and a strict CSP', async () => {
    const res = await server.http('GET', '/app/');
    expect(res.status).toBe(200);
    expect(res.text).toBe(INDEX_HTML);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port} wss://127.0.0.1:${server.port}`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves hashed assets as immutable for a year, other files as no-cache', async () => {
    const asset = await server.http('GET', '/app/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.text).toBe(ASSET_JS);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const icon = await server.http('GET', '/app/favicon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('cache-control')).toBe('no-cache');
  });

  it('answers a console route with the page, a missing file with 404, /app with a redirect', async () => {
    const route = await server.http('GET', '/app/orders');
    expect(route.status).toBe(200);
    expect(route.text).toBe(INDEX_HTML);
    expect(route.headers.get('cache-control')).toBe('no-cache');
    expect((await server.http('GET', '/app/assets/missing-123.js')).status).toBe(404);
    const bare = await raw(server, 'GET', '/app');
    expect(bare.status).toBe(308);
    expect(bare.headers.location).toBe('/app/');
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await raw(server, 'HEAD', '/app/assets/index-abc123.js');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(ASSET_JS)));
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('refuses %s with 405 and Allow: GET, HEAD', async (method) => {
    const res = await raw(server, method, '/app/');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it.each([
    '/app/../package.json',
    '/app/%2e%2e/package.json',
    '/app/%2E%2E/%2E%2E/package.json',
    '/app/assets/..%2f..%2fpackage.json',
    '/app/..%5c..%5cpackage.json',
    '/app/%00index.html',
    '/app/%E0%A4%A',
  ])('refuses the traversal %s', async (rawPath) => {
    const res = await raw(server, 'GET', rawPath);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('"name": "trading-service"');
  });

  it('never reaches a file beside the build', async () => {
    const name = `secret-${path.basename(buildDir)}.txt`;
    for (const rawPath of [`/app/../${name}`, `/app/%2e%2e/${name}`, `/app/%2e%2e%2f${name}`]) {
      const res = await raw(server, 'GET', rawPath);
      expect(res.text).not.toBe('secret');
      expect(res.status).toBe(404);
    }
  });

  it('counts every request under /app/ under one route label', async () => {
    await server.http('GET', '/app/positions');
    await server.http('GET', '/app/assets/index-abc123.js');
    const metrics = (await server.http('GET', '/metrics')).text;
    const routes = new Set([...metrics.matchAll(/route="(\/app[^"]*)"/g)].map((match) => match[1]));
    expect([...routes]).toEqual(['/app/']);
  });

  it('stays served while the service is halted', async () => {
    const admin = await newUser(server, { role: 'admin', prefix: 'console_admin' });
    const halt = (halted: boolean) => server.http('POST', '/api/admin/halt', { token: admin.tokens.access_token, body: { halted } });
    expect((await halt(true)).status).toBe(200);
    try {
      expect((await server.http('GET', '/docs')).status).toBe(503);
      const page = await server.http('GET', '/app/');
      expect(page.status).toBe(200);
      expect(page.text).toBe(INDEX_HTML);
      expect((await server.http('GET', '/app/assets/index-abc123.js')).status).toBe(200);
    } finally {
      expect((await halt(false)).status).toBe(200);
    }
  });
});
