// The embedded database (PGlite, when DATABASE_URL is unset) as the service opens it.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../server/db/client.ts';
import { openTestDatabase } from '../support/server.ts';

describe.skipIf(Boolean(process.env.DATABASE_URL))('embedded PGlite', () => {
  it("opens with a 32MB buffer cache, not initdb's 128MB, which every open paid for in start-up CPU", async () => {
    const { database, close } = await openTestDatabase();
    try {
      expect(await rowsOf(database.db, sql`show shared_buffers`)).toEqual([{ shared_buffers: '32MB' }]);
    } finally {
      await close();
    }
  });
});
