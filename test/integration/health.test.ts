// GET /health and /health/flags: the body of the contract, `halted` following the operator's
// switch while the answer stays 200 (a halt is a decision, not a fault), and 503 degraded, still
// in the contract's shape, once the database stops answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZFeatureFlags, ZHealth } from '../../contracts/health.ts';
import { adminEnv, loginAdmin, registerAndLogin, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let adminToken: string;

beforeAll(async () => {
  server = await startTestServer(adminEnv);
  adminToken = (await loginAdmin(server)).access_token;
});
afterAll(() => server?.stop());

const haltAs = (halted: boolean) => server.http('POST', '/api/admin/halt', { token: adminToken, body: { halted } });

describe('GET /health', () => {
  it('answers 200 ok with the fields of the contract, not halted', async () => {
    const res = await server.http('GET', '/health');
    expect(res.status).toBe(200);
    expect(ZHealth.strict().parse(res.body)).toEqual({ status: 'ok', db: 'ok', version: server.services.version, uptime_s: expect.any(Number), halted: false });
  });

  it('still answers 200 while an operator has halted the service, saying halted: true, and false again on resume', async () => {
    const user = await registerAndLogin(server, 'health');
    expect((await haltAs(true)).status).toBe(200);
    // The halt is in force: an ordinary route refuses, /health reports it without failing.
    const refused = await server.http('GET', '/api/auth/me', { token: user.tokens.access_token });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'SERVICE_HALTED' });

    const halted = await server.http('GET', '/health');
    expect(halted.status).toBe(200);
    expect(halted.body).toMatchObject({ status: 'ok', db: 'ok', halted: true });
    expect((await server.http('GET', '/health/flags')).status).toBe(200);

    expect((await haltAs(false)).status).toBe(200);
    const resumed = await server.http('GET', '/health');
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'ok', halted: false });
  });
});

describe('GET /health/flags', () => {
  it('answers every flag of the contract as a JSON boolean', async () => {
    const res = await server.http('GET', '/health/flags');
    expect(res.status).toBe(200);
    expect(ZFeatureFlags.strict().parse(res.body)).toEqual(res.body);
  });
});

// Last: it closes the database under the running server.
describe('GET /health without a database', () => {
  it('answers 503 degraded in the same shape', async () => {
    await server.services.database.close();
    const res = await server.http('GET', '/health');
    expect(res.status).toBe(503);
    expect(ZHealth.strict().parse(res.body)).toMatchObject({ status: 'degraded', db: 'down', halted: false });
  });
});
