// The simulator's lock read (lockAccountForSymbol): what a placement judges its funds and its
// position on, read in the statement that takes the account's lock. A read that waits for the lock
// while another transaction (another instance's placement) adds a working order must see that
// order once it holds the lock, or the two placements spend the same cash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockAccountForSymbol } from '../../server/brokers/simulator/account-reads.ts';
import { insertAccountIfMissing, insertOrder, type AccountKey } from '../../server/brokers/simulator/queries.ts';
import { rowsOf, type DatabaseHandle, type Tx } from '../../server/db/client.ts';
import { sql } from 'drizzle-orm';
import { openTestDatabase } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const at = new Date('2026-03-10T15:00:00Z');
let database: DatabaseHandle;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ database, close } = await openTestDatabase());
});
afterAll(() => close());

const accountOf = async (userId: number): Promise<AccountKey> => {
  const key: AccountKey = { userId, assetClass: 'crypto', mode: 'paper' };
  await insertAccountIfMissing(database.db, { ...key, currency: 'USDT', cash: '100000', at });
  return key;
};

/** A resting limit buy of the account: it holds cash without a fill. */
const restingBuy = (tx: Tx, key: AccountKey, id: string) =>
  insertOrder(tx, {
    ...key,
    id,
    clientOrderId: `c-${id}`,
    symbol: 'BTC/USDT',
    side: 'buy',
    orderType: 'limit',
    timeInForce: 'gtc',
    qty: '1',
    limitPrice: '40000',
    status: 'accepted',
    createdAt: at,
    updatedAt: at,
  });

describe('the lock read', () => {
  it('reads the working orders with the lock', async () => {
    const key = await accountOf(1);
    await database.db.transaction((tx) => restingBuy(tx, key, 'lock-read-1').then(() => undefined));
    const locked = await database.db.transaction((tx) => lockAccountForSymbol(tx, key, 'BTC/USDT'));
    expect(locked?.working.map((order) => order.id)).toEqual(['lock-read-1']);
  });

  // Two transactions at once need a server's database: PGlite is one session.
  it.runIf(process.env.DATABASE_URL)('that waited for another placement sees the order it placed, once it holds the lock', async () => {
    const key = await accountOf(2);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    // The first placement: the lock, a resting buy, then it waits to commit.
    const first = database.db.transaction(async (tx) => {
      await lockAccountForSymbol(tx, key, 'BTC/USDT');
      await restingBuy(tx, key, 'lock-read-first');
      holding();
      await released;
    });
    await held;
    // The second: its read starts (its snapshot taken) while the first holds the lock.
    const second = database.db.transaction((tx) => lockAccountForSymbol(tx, key, 'BTC/USDT'));
    // Wait until the second's read is waiting on the lock (its text is longer than pg_stat_activity
    // keeps: known by its start), then let the first commit.
    await waitFor(
      async () =>
        (
          await rowsOf<{ n: number }>(
            database.db,
            sql`select count(*)::integer as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'select json_build_object(%'`,
          )
        )[0]!.n,
      (waiting) => waiting > 0,
    );
    release();
    await first;
    expect((await second)?.working.map((order) => order.id)).toEqual(['lock-read-first']);
  });
});
