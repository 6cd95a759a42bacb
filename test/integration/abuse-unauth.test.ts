// Bounds on what a caller can make the service do: the tRPC batch cap (a longer batch is refused
// whole, before any call runs).
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, authThrottle } from '../../server/db/schema/index.ts';
import { startTestServer, uniqueName, type TestServer } from '../support/server.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The body of a tRPC batch over HTTP (superjson): each call's input under its index. */
const batchBody = (inputs: unknown[]) => JSON.stringify(Object.fromEntries(inputs.map((input, index) => [index, { json: input }])));

describe('tRPC batches over HTTP', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it(`refuses a batch of more than TRPC_MAX_BATCH_SIZE (50) calls whole with one 422, before any call runs`, async () => {
    expect(server.config.TRPC_MAX_BATCH_SIZE).toBe(50);
    const usernames = Array.from({ length: 51 }, () => uniqueName('batch'));
    const res = await server.http('POST', `/trpc/${usernames.map(() => 'auth.login').join(',')}?batch=1`, {
      headers: JSON_HEADERS,
      rawBody: batchBody(usernames.map((username) => ({ username, password: 'wrong-password' }))),
    });
    expect(res.status, res.text).toBe(422);
    // One error for the whole batch, not one per call.
    expect(Array.isArray(res.body)).toBe(false);
    expect(res.body.error.json.data, res.text).toMatchObject({ domainCode: 'VALIDATION_ERROR', httpStatus: 422 });
    expect(res.body.error.json.message).toMatch(/batch/i);
    // No login ran: nothing audited, nothing counted.
    const { db } = server.services;
    expect(await db.select().from(authThrottle).where(inArray(authThrottle.key, usernames.map((name) => name.toLowerCase())))).toEqual([]);
    expect(await db.select().from(auditEvents).where(eq(auditEvents.action, 'auth.login_failed'))).toEqual([]);
  });

  it('runs a batch of exactly 50 calls, each answered', async () => {
    const res = await server.http('GET', `/trpc/${Array.from({ length: 50 }, () => 'auth.me').join(',')}?batch=1`);
    expect(Array.isArray(res.body), res.text).toBe(true);
    expect(res.body).toHaveLength(50);
    expect(res.body.every((answer: any) => answer.error?.json?.data?.domainCode === 'UNAUTHORIZED')).toBe(true);
    // The same batch plus one is refused, GET as POST.
    const over = await server.http('GET', `/trpc/${Array.from({ length: 51 }, () => 'auth.me').join(',')}?batch=1`);
    expect(over.status).toBe(422);
    expect(over.body.error.json.data.domainCode).toBe('VALIDATION_ERROR');
  });
});
