// Transactions on PostgreSQL send BEGIN with their first statement (server/db/client.ts): what
// they commit, what a failure leaves, and that the connection goes back to the pool usable. A
// pool of one connection makes a connection left in a transaction, or never given back, show.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defer, openDatabase, rowsOf, settled, statementsSent, TransactionRolledBack, type DatabaseHandle, type Tx } from '../../server/db/client.ts';
import { createTestDatabase, tempDir } from '../support/server.ts';

const UNIQUE_VIOLATION = '23505';

describe.skipIf(!process.env.DATABASE_URL)('transactions on PostgreSQL', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createTestDatabase();
    drop = created.drop;
    database = await openDatabase({ databaseUrl: created.url, dataDir: tempDir(), poolSize: 1 });
    await database.db.execute(sql`create table tx_probe (id int primary key)`);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  const ids = async () => (await rowsOf<{ id: number }>(database.db, sql`select id from tx_probe order by id`)).map((row) => row.id);
  /** True when the pool's connection is outside any transaction (the probe runs on it). */
  const idle = async () => (await rowsOf<{ open: boolean }>(database.db, sql`select now() = statement_timestamp() as open`))[0]?.open;

  it('commits what the body wrote, as one transaction', async () => {
    const stamps = await database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into tx_probe values (1)`);
      // now() is the transaction's start: the same for every statement of one transaction.
      const [first] = await rowsOf<{ at: string }>(tx, sql`select now()::text as at`);
      await tx.execute(sql`select pg_sleep(0.01)`);
      const [second] = await rowsOf<{ at: string }>(tx, sql`select now()::text as at`);
      return [first?.at, second?.at];
    });
    expect(stamps[0]).toBe(stamps[1]);
    expect(await ids()).toEqual([1]);
    expect(await idle()).toBe(true);
  });

  it('rolls back everything when the body throws', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (2)`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await ids()).toEqual([1]);
    expect(await idle()).toBe(true);
  });

  it('rolls back, and says so, when a statement the body did not wait for failed', async () => {
    let failed: Promise<unknown> | undefined;
    await expect(
      database.db.transaction(async (tx: Tx) => {
        await tx.execute(sql`insert into tx_probe values (3)`);
        // Sent, not awaited: a duplicate key. COMMIT follows it in the pipeline and answers ROLLBACK.
        // (rowsOf, not tx.execute: drizzle runs its query again each time it is awaited.)
        failed = rowsOf(tx, sql`insert into tx_probe values (1)`);
        failed.catch(() => undefined);
      }),
    ).rejects.toBeInstanceOf(TransactionRolledBack);
    await expect(failed).rejects.toMatchObject({ cause: { code: UNIQUE_VIOLATION } });
    expect(await ids()).toEqual([1]);
    expect(await idle()).toBe(true);
  });

  it('commits statements the body sent and returned without waiting for', async () => {
    let sent: Promise<unknown> | undefined;
    await database.db.transaction(async (tx) => {
      sent = Promise.all([rowsOf(tx, sql`insert into tx_probe values (8)`), rowsOf(tx, sql`insert into tx_probe values (9)`)]);
      await statementsSent();
    });
    await sent;
    expect(await ids()).toEqual([1, 8, 9]);
    await database.db.execute(sql`delete from tx_probe where id in (8, 9)`);
  });

  it('defer: writes sent without waiting commit with the transaction; settled throws the first failure, once', async () => {
    await database.db.transaction(async (tx: Tx) => {
      defer(tx, rowsOf(tx, sql`insert into tx_probe values (11)`));
      defer(tx, rowsOf(tx, sql`insert into tx_probe values (12)`));
      await settled(tx);
    });
    expect(await ids()).toEqual([1, 11, 12]);
    let settling: Promise<void> | undefined;
    await expect(
      database.db.transaction(async (tx: Tx) => {
        defer(tx, rowsOf(tx, sql`insert into tx_probe values (13)`));
        defer(tx, rowsOf(tx, sql`insert into tx_probe values (1)`));
        settling = settled(tx);
        settling.catch(() => undefined);
        // Settled already: nothing deferred since.
        await settled(tx);
      }),
    ).rejects.toBeInstanceOf(TransactionRolledBack);
    await expect(settling).rejects.toMatchObject({ cause: { code: UNIQUE_VIOLATION } });
    expect(await ids()).toEqual([1, 11, 12]);
    expect(await idle()).toBe(true);
    await database.db.execute(sql`delete from tx_probe where id in (11, 12)`);
  });

  it('refuses a statement begun after its transaction ended, rather than run it outside', async () => {
    let kept: Tx | undefined;
    await database.db.transaction(async (tx) => {
      kept = tx;
      await tx.execute(sql`select 1`);
    });
    await expect(rowsOf(kept!, sql`insert into tx_probe values (10)`)).rejects.toMatchObject({ cause: { message: expect.stringMatching(/after its transaction ended/) } });
    expect(await ids()).toEqual([1]);
  });

  it('gives a failed statement to the body that waits for it, and rolls back', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (4)`);
        await tx.execute(sql`insert into tx_probe values (1)`);
      }),
    ).rejects.toMatchObject({ cause: { code: UNIQUE_VIOLATION } });
    expect(await ids()).toEqual([1]);
  });

  it('keeps transactions apart on a pool of one: the second waits for the first', async () => {
    await Promise.all([5, 6, 7].map((id) => database.db.transaction(async (tx) => tx.execute(sql`insert into tx_probe values (${id})`))));
    expect(await ids()).toEqual([1, 5, 6, 7]);
    expect(await idle()).toBe(true);
  });
});
