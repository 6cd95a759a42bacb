// The halt switch's cached copy: never replaced by an older read, and re-read on the safety
// interval when a notification was missed.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, undefined, { cacheSafetyReloadMs: 100 });
});
afterAll(() => server.stop());

const origin = { requestId: 'test', address: '127.0.0.1' };

describe('halt cache', () => {
  it('keeps the newest version it has seen: a stale read does not undo a halt', async () => {
    const admin = await newUser(server, { role: 'admin' });
    const { halt, db } = server.services;
    await halt.set({ halted: true, actor: admin.auth, origin });
    try {
      // What a reload that started before the halt would read: the older value at an older version.
      await db.execute(sql`update system_state set value = '{"halted": false}', version = version - 1 where key = 'halt'`);
      expect((await halt.reload()).halted).toBe(true);
      expect(halt.isHalted()).toBe(true);
    } finally {
      await halt.set({ halted: false, actor: admin.auth, origin });
    }
    expect(halt.isHalted()).toBe(false);
  });

  it('picks up a change whose notification never came, on the safety interval', async () => {
    const { halt, db } = server.services;
    expect(halt.isHalted()).toBe(false);
    await db.execute(sql`update system_state set value = '{"halted": true}', version = version + 1 where key = 'halt'`);
    try {
      const health = await waitFor(() => server.http('GET', '/health'), (res) => res.body.halted === true);
      expect(health.body.halted).toBe(true);
    } finally {
      await db.execute(sql`update system_state set value = '{"halted": false}', version = version + 1 where key = 'halt'`);
      await halt.reload();
    }
  });
});
