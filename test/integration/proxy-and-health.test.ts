// The client address behind the login throttle, with and without TRUST_PROXY, and /health when
// the database stops answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAndLogin, startTestServer, type TestServer } from '../support/server.ts';

const failLogins = async (server: TestServer, username: string, times: number, forwardedFor: string) => {
  for (let i = 0; i < times; i++) {
    const res = await server.http('POST', '/api/auth/login', { body: { username, password: 'wrong-password' }, headers: { 'x-forwarded-for': forwardedFor } });
    expect(res.status).toBe(401);
  }
};

describe('without TRUST_PROXY (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_MAX_FAILURES: '2' });
  });
  afterAll(() => server.stop());

  it('ignores X-Forwarded-For, so a forged header does not escape the throttle', async () => {
    const { username, password } = await registerAndLogin(server, 'noproxy');
    await failLogins(server, username, 2, '203.0.113.1');
    const res = await server.http('POST', '/api/auth/login', { body: { username, password }, headers: { 'x-forwarded-for': '203.0.113.99' } });
    expect(res.status).toBe(429);
  });
});

describe('with TRUST_PROXY=true', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_MAX_FAILURES: '2', TRUST_PROXY: 'true' });
  });
  afterAll(() => server.stop());

  it('throttles per forwarded client address', async () => {
    const { username, password } = await registerAndLogin(server, 'proxy');
    await failLogins(server, username, 2, '203.0.113.1, 10.0.0.1');
    const blocked = await server.http('POST', '/api/auth/login', { body: { username, password }, headers: { 'x-forwarded-for': '203.0.113.1' } });
    expect(blocked.status).toBe(429);
    const otherClient = await server.http('POST', '/api/auth/login', { body: { username, password }, headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(otherClient.status).toBe(200);
  });
});

describe('/health', () => {
  it('answers 503 degraded once the database no longer answers', async () => {
    const server = await startTestServer();
    expect((await server.http('GET', '/health')).body).toMatchObject({ status: 'ok', db: 'ok' });
    await server.services.database.close();
    const res = await server.http('GET', '/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: 'degraded', db: 'down', version: expect.any(String) });
    await server.stop();
  });
});
