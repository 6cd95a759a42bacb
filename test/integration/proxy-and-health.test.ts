// The client address behind the login throttle: without TRUST_PROXY, with a hop count and with
// a CIDR list; and /health when the database stops answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAndLogin, startTestServer, type TestServer } from '../support/server.ts';

const login = (server: TestServer, username: string, password: string, forwardedFor: string) =>
  server.http('POST', '/api/auth/login', { body: { username, password }, headers: { 'x-forwarded-for': forwardedFor } });

const failLogins = async (server: TestServer, username: string, forwardedFor: (attempt: number) => string) => {
  for (let attempt = 0; attempt < Number(server.config.LOGIN_MAX_FAILURES); attempt++) {
    expect((await login(server, username, 'wrong-password', forwardedFor(attempt))).status).toBe(401);
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
    await failLogins(server, username, () => '203.0.113.1');
    expect((await login(server, username, password, '203.0.113.99')).status).toBe(429);
  });
});

// The test client stands for both the proxy (the socket peer, 127.0.0.1) and the client behind
// it: the header is what an appending proxy forwards, `<whatever the client wrote>, <its address>`.
describe.each([
  ['a hop count (TRUST_PROXY=1)', '1'],
  ['a CIDR list (TRUST_PROXY=127.0.0.1/32,::1)', '127.0.0.1/32,::1'],
])('behind %s', (_what, setting) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ LOGIN_MAX_FAILURES: '2', TRUST_PROXY: setting });
  });
  afterAll(() => server.stop());

  it('a client cannot escape the throttle by writing its own leftmost X-Forwarded-For entry', async () => {
    const { username, password } = await registerAndLogin(server, 'spoof');
    await failLogins(server, username, (attempt) => `192.0.2.${attempt + 1}, 203.0.113.1`);
    const res = await login(server, username, password, '192.0.2.200, 203.0.113.1');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('throttles per forwarded client address: another client behind the same proxy still logs in', async () => {
    const { username, password } = await registerAndLogin(server, 'behind');
    await failLogins(server, username, () => '203.0.113.2');
    expect((await login(server, username, password, '203.0.113.2')).status).toBe(429);
    expect((await login(server, username, password, '198.51.100.7')).status).toBe(200);
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
