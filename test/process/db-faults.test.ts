// The server as a child process while its PostgreSQL goes away (DESIGN §8, faults): backends
// terminated under an order load, where the process must stay up, answer 503 SERVICE_UNAVAILABLE
// (or 502 BROKER_UNAVAILABLE) meanwhile, never 500, and lose or double no order; and a database
// that is not there at start-up, which start-up waits for (DB_CONNECT_TIMEOUT_SEC) saying why.
import { connect as connectSocket, createServer, type Server as TcpServer } from 'node:net';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/server.ts';
import { callJson, logged as loggedWithin, logLines, serverProcesses, type JsonReply as Reply } from '../support/server-process.ts';
import { waitFor } from '../support/wait.ts';

/** How long any one wait on a child may take before the test fails (a deadline, not a sleep). */
const DEADLINE_MS = 60_000;
const TIMEOUT = { timeout: 240_000 };

const { start: startChild, stopAll } = serverProcesses('dbfault');
afterAll(stopAll);

/** The first log line with that message, waiting for it; fails when the process ends first. */
const logged = (child: Parameters<typeof logLines>[0], msg: string) => loggedWithin(child, msg, DEADLINE_MS);

// A request that hangs is a failure of its own (status 0), not a test that never ends.
const call = (base: string, method: string, urlPath: string, opts: { body?: unknown; token?: string } = {}): Promise<Reply> => callJson(base, method, urlPath, { ...opts, deadlineMs: DEADLINE_MS });

describe.skipIf(!process.env.DATABASE_URL)('PostgreSQL backends terminated while orders are placed', TIMEOUT, () => {
  it('the process stays up, in-flight orders answer 503 or 502 (never 500), later ones succeed, and no order is lost or doubled', async () => {
    const database = await createTestDatabase();
    const name = new URL(database.url).pathname.slice(1);
    const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => undefined });
    const books = postgres(database.url, { max: 1, onnotice: () => undefined });
    const child = startChild({
      DATABASE_URL: database.url,
      DB_POOL_SIZE: '4',
      AUTH_SECRET_KEY: 'db-faults-secret-key-0123456789abcdef',
      ENCRYPTION_SALT: 'db-faults-salt-0123456789',
      ADMIN_USERNAME: 'fault_admin',
      ADMIN_PASSWORD: 'fault-admin-password',
      SIM_TICK_INTERVAL_MS: '0',
      RATE_LIMIT_ORDERS_PER_MIN: '1000',
      REGISTER_MAX_PER_HOUR: '1000',
    });
    try {
      const base = `http://127.0.0.1:${String((await logged(child, 'listening')).port)}`;
      const login = async (username: string, password: string) => {
        const res = await call(base, 'POST', '/api/auth/login', { body: { username, password } });
        expect(res.status, res.text).toBe(200);
        return res.body.access_token as string;
      };
      const adminToken = await login('fault_admin', 'fault-admin-password');
      expect((await call(base, 'POST', '/api/admin/sim/prices', { token: adminToken, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 50000 } })).status).toBe(200);
      const registered = await call(base, 'POST', '/api/auth/register', { body: { username: 'fault_trader', email: 'fault_trader@example.com', password: 'fault-trader-password' } });
      expect(registered.status, registered.text).toBe(201);
      const userId = registered.body.id as number;
      const token = await login('fault_trader', 'fault-trader-password');
      expect((await call(base, 'POST', '/api/exchange-keys', { token, body: { exchange: 'crypto_exchange', api_key: 'fault-key-1234', api_secret: 's' } })).status).toBe(201);

      const order = (id: string) => ({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', client_order_id: id });
      const place = (id: string) => call(base, 'POST', '/api/equity/orders', { token, body: order(id) }).catch((): Reply => ({ status: 0, body: undefined, text: 'no answer', retryAfter: null }));

      // A bounded load: ORDERS orders, CONCURRENCY at a time, each with its own client order id.
      const ORDERS = 160;
      const CONCURRENCY = 6;
      const KILLS = 5;
      const replies = new Map<string, Reply>();
      let sent = 0;
      const client = async () => {
        while (sent < ORDERS) {
          const id = `fault-${sent++}`;
          replies.set(id, await place(id));
        }
      };
      let loading = true;
      const load = Promise.all(Array.from({ length: CONCURRENCY }, client)).finally(() => (loading = false));
      // Every backend of the service's database (its pool, the LISTEN connection, pg-boss's pool)
      // is terminated, as a failover does, each time another slice of the orders has been answered.
      let terminated = 0;
      for (let kill = 1; kill <= KILLS; kill++) {
        await waitFor(() => Promise.resolve(replies.size), (answered) => !loading || answered >= (kill * ORDERS) / (KILLS + 1), DEADLINE_MS);
        if (!loading) break;
        const [row] = await admin<{ count: number }[]>`select count(pg_terminate_backend(pid))::int as count from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
        terminated += row?.count ?? 0;
      }
      await load;
      expect(terminated).toBeGreaterThan(0);

      // The process is up, and every order in flight had an answer that says what to do.
      expect(child.exit, child.stderr).toBeUndefined();
      const statuses = [...replies.values()].map((reply) => reply.status);
      const unexpected = [...replies].filter(([, reply]) => ![201, 502, 503].includes(reply.status));
      expect(unexpected.map(([id, reply]) => `${id}: ${reply.status} ${reply.text}`)).toEqual([]);
      for (const reply of replies.values()) {
        if (reply.status === 503) {
          expect(reply.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
          expect(Number(reply.retryAfter)).toBeGreaterThan(0);
        }
        if (reply.status === 502) expect(reply.body).toMatchObject({ code: 'BROKER_UNAVAILABLE', status: 502 });
      }

      // Once the connections are back, the service is healthy and new orders succeed.
      await waitFor(() => call(base, 'GET', '/health'), (res) => res.status === 200 && res.body.db === 'ok', DEADLINE_MS);
      const after = await place('fault-after');
      expect(after.status, after.text).toBe(201);
      // A client whose order had no success retries with the same client order id: one order each.
      const retries = new Map<string, Reply>();
      for (const [id, reply] of replies) if (reply.status !== 201) retries.set(id, await place(id));
      for (const [id, reply] of retries) expect([201, 502], `${id}: ${reply.text}`).toContain(reply.status);

      // Our orders table and the simulator's books agree, order by order.
      const ours = await books<{ client_order_id: string; broker_order_id: string | null; status: string; filled_qty: string }[]>`
        select client_order_id, broker_order_id, status, filled_qty::text from orders where user_id = ${userId}`;
      const theirs = await books<{ client_order_id: string; id: string; filled_qty: string }[]>`
        select client_order_id, id, filled_qty::text from sim_orders where user_id = ${userId}`;
      const ourById = new Map(ours.map((row) => [row.client_order_id, row]));
      const theirById = new Map(theirs.map((row) => [row.client_order_id, row]));
      expect(theirById.size, 'an order twice at the simulator').toBe(theirs.length);
      // Every order placed has a row; an accepted order is the simulator's order, with its fills.
      for (const [id, reply] of [...replies, ['fault-after', after] as const]) {
        const final = retries.get(id) ?? reply;
        const row = ourById.get(id);
        expect(row, `${id} answered ${final.status} but has no row`).toBeDefined();
        if (final.status === 201) {
          expect(final.body.broker_order_id).toBe(row!.broker_order_id);
          expect(theirById.get(id)?.id, `${id} is not at the simulator`).toBe(row!.broker_order_id);
        } else {
          expect(row!.status).toBe('rejected');
          expect(theirById.has(id), `${id} was refused but is at the simulator`).toBe(false);
        }
      }
      // Nothing reached the simulator that we have no order for, and the fills agree.
      for (const [id, at] of theirById) {
        expect(ourById.get(id)?.broker_order_id, `${id} is at the simulator only`).toBe(at.id);
      }
      await waitFor(
        async () => (await books<{ id: string }[]>`select o.client_order_id as id from orders o join sim_orders s on s.user_id = o.user_id and s.client_order_id = o.client_order_id where o.user_id = ${userId} and o.filled_qty <> s.filled_qty`).length,
        (differing) => differing === 0,
        DEADLINE_MS,
      );
      expect(ours.length).toBe(ORDERS + 1);
      expect(statuses.length).toBe(ORDERS);

      // And it still stops gracefully.
      process.kill(child.proc.pid!, 'SIGTERM');
      expect(await child.closed).toBe(0);
    } finally {
      if (child.exit === undefined) process.kill(child.proc.pid!, 'SIGTERM');
      await child.closed;
      await books.end();
      await admin.end();
      await database.drop();
    }
  });
});

/** A loopback port nothing listens on (taken, then given back). */
const freePort = async (): Promise<number> => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
};

describe('a database that cannot be reached at start-up', TIMEOUT, () => {
  const waiting = 'the database cannot be reached yet; start-up waits for it';

  it('is waited for up to DB_CONNECT_TIMEOUT_SEC, saying why, then start-up exits non-zero naming the setting', async () => {
    const port = await freePort();
    const child = startChild({ DATABASE_URL: `postgres://app:s3cret-password@127.0.0.1:${port}/trading`, DB_CONNECT_TIMEOUT_SEC: '2' });
    const code = await child.closed;
    expect(code, child.stderr).not.toBe(0);
    expect(child.stderr).toContain('the database could not be reached within DB_CONNECT_TIMEOUT_SEC (2 s); last error: connect ECONNREFUSED 127.0.0.1:');
    const waits = logLines(child).filter((line) => line.msg === waiting);
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({ level: 'warn', attempt: 1, reason: expect.stringContaining('ECONNREFUSED') as string });
    expect(child.stdout + child.stderr).not.toContain('s3cret-password');
  });

  it.skipIf(!process.env.DATABASE_URL)('lets start-up finish once PostgreSQL comes up', async () => {
    const database = await createTestDatabase();
    const real = new URL(database.url);
    // PostgreSQL "comes up" when a proxy to it starts listening on the port the server was given.
    const port = await freePort();
    const url = new URL(database.url);
    url.host = `127.0.0.1:${port}`;
    const child = startChild({ DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_SEC: '120', AUTH_SECRET_KEY: 'db-reach-secret-key-0123456789abcdef', ENCRYPTION_SALT: 'db-reach-salt-0123456789' });
    let proxy: TcpServer | undefined;
    try {
      await logged(child, waiting);
      proxy = createServer((client) => {
        const upstream = connectSocket(Number(real.port || 5432), real.hostname);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      });
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${String((await logged(child, 'listening')).port)}`;
      const health = await call(base, 'GET', '/health');
      expect(health.status, health.text).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', db: 'ok' });
      process.kill(child.proc.pid!, 'SIGTERM');
      expect(await child.closed).toBe(0);
    } finally {
      if (child.exit === undefined) process.kill(child.proc.pid!, 'SIGKILL');
      await child.closed;
      proxy?.close();
      await database.drop();
    }
  });
});
