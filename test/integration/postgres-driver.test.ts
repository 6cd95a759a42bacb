// postgres.js 3.4.9 with the repository's patch (patches/postgres+3.4.9.patch, applied by
// patch-package on install): what a connection whose backend goes away leaves behind. Each case
// failed on the unpatched driver: a crash from a timer, a promise that never settles, a statement
// run on the wrong session, or an unhandled rejection. Backends are terminated by pid, only ours.
import { createServer, connect as connectSocket, Socket, type Server } from 'node:net';
import postgres, { type Sql } from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { waitFor } from '../support/wait.ts';

/** What escaped every caller: thrown from a timer, or a rejection nobody handled. */
const escaped: unknown[] = [];
const record = (error: unknown) => escaped.push(error);

/** How long a query may take to settle before it counts as never answering (a bound, not a measure). */
const DEADLINE_MS = 10_000;
const NO_ANSWER = 'no answer';

/** The code a query settles with ('ok' when it succeeds), or NO_ANSWER past the deadline. */
const outcome = (query: PromiseLike<unknown>): Promise<string> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(query).then(
      () => 'ok',
      (error: unknown) => String((error as { code?: unknown }).code ?? error),
    ),
    new Promise<string>((resolve) => (timer = setTimeout(resolve, DEADLINE_MS, NO_ANSWER))),
  ]).finally(() => clearTimeout(timer));
};

/** Lets whatever the driver scheduled for the next turns of the event loop run (a write, a crash). */
const turns = async () => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe.skipIf(!process.env.DATABASE_URL)('postgres.js when a connection goes away', () => {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://localhost');
  const clients: Sql[] = [];
  const servers: Server[] = [];
  const open = (options: postgres.Options<Record<string, never>> = {}): Sql => {
    const sql = postgres(url.toString(), { onnotice: () => undefined, max: 1, ...options });
    clients.push(sql);
    return sql;
  };
  let admin: Sql;
  const pidOf = async (sql: Sql | postgres.TransactionSql) => (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
  const terminate = async (pid: number) => {
    await admin`select pg_terminate_backend(${pid})`;
  };

  beforeAll(() => {
    admin = open();
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  });
  afterEach(async () => {
    await turns();
    expect(escaped.splice(0).map(String)).toEqual([]);
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
    await Promise.all(clients.map((sql) => sql.end({ timeout: 1 })));
    for (const server of servers) server.close();
  });

  /**
   * A TCP proxy to the database whose first connection sees `fault` called with each chunk the
   * client sends; later connections pass through untouched.
   */
  const proxy = async (fault: (chunk: Buffer, client: Socket, server: Socket) => boolean): Promise<number> => {
    let first = true;
    const server = createServer((client) => {
      const upstream = connectSocket(Number(url.port || 5432), url.hostname);
      const faulty = first;
      first = false;
      client.on('data', (chunk: Buffer) => {
        if (!faulty || !fault(chunk, client, upstream)) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        a.on('error', () => b.destroy());
        a.on('close', () => b.destroy());
      }
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  };
  /** A message of the wire protocol: its type, its length, its body. */
  const message = (type: string, body: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length + 4);
    return Buffer.concat([Buffer.from(type), length, body]);
  };
  const errorResponse = (severity: string, code: string, text: string) =>
    message('E', Buffer.concat([...[['S', severity], ['V', severity], ['C', code], ['M', text]].map(([field, value]) => Buffer.from(`${field}${value}\0`)), Buffer.from('\0')]));
  /** The driver's query for array types, sent first on every new connection (fetch_types). */
  const isTypesQuery = (chunk: Buffer) => chunk.includes('pg_catalog.pg_type');
  const viaProxy = (port: number) => open({ host: '127.0.0.1', port, username: url.username || 'postgres', database: url.pathname.slice(1) || 'postgres' });

  it('a reserved connection whose backend was terminated refuses its next statements instead of crashing the process (porsager/postgres#1208)', async () => {
    const sql = open({ max: 2 });
    const reserved = await sql.reserve();
    await terminate(await pidOf(reserved));
    // The first statement may still be written before the close is seen; the second comes after it.
    await outcome(reserved`select 1`);
    expect(await outcome(reserved`select 1`)).toBe('CONNECTION_CLOSED');
    await turns();
    expect(escaped.map(String)).toEqual([]);
    reserved.release();
    expect(await outcome(sql`select 1`)).toBe('ok');
  });

  it("a reserved connection's statements never reach the session the pool opens next on that connection", async () => {
    const sql = open();
    const reserved = await sql.reserve();
    const pid = await pidOf(reserved);
    // Waits for the only connection; once its backend is gone the pool reconnects it for this query.
    const queued = pidOf(sql);
    await terminate(pid);
    const next = await queued;
    expect(next).not.toBe(pid);
    expect(await outcome(reserved`select 1`)).toBe('CONNECTION_CLOSED');
    reserved.release();
    expect(await pidOf(sql)).toBe(next);
  });

  it('a reserve waiting for the connection is served when that connection is terminated, not stranded (porsager/postgres#1195)', async () => {
    const sql = open();
    const first = await sql.reserve();
    const waiting = sql.reserve();
    await terminate(await pidOf(first));
    expect(await outcome(waiting.then((second) => second`select 1`))).toBe('ok');
  });

  it('statements sent between a socket error and its close fail with the connection instead of never answering', async () => {
    let socket: Socket | undefined;
    const sql = open({ socket: () => (socket = connectSocket(Number(url.port || 5432), url.hostname)) } as postgres.Options<Record<string, never>>);
    const reserved = await sql.reserve();
    await reserved`select 1`;
    let late: Promise<string> | undefined;
    // A transaction's ROLLBACK, sent the moment its statement fails with the socket's error.
    const inFlight = outcome(
      reserved`select pg_sleep(30)`.catch((error: unknown) => {
        late = outcome(reserved`rollback`);
        throw error;
      }),
    );
    await admin`select 1`;
    socket!.destroy(Object.assign(new Error('connection reset by peer'), { code: 'ECONNRESET' }));
    expect(await inFlight).toBe('ECONNRESET');
    expect(await late).toBe('CONNECTION_CLOSED');
  });

  it('a reserved connection released between its socket error and its close leaves the pool working (the close comes a turn later)', async () => {
    let socket: Socket | undefined;
    const sql = open({ socket: () => (socket = connectSocket(Number(url.port || 5432), url.hostname)) } as postgres.Options<Record<string, never>>);
    const reserved = await sql.reserve();
    await reserved`select 1`;
    let next: Promise<string> | undefined;
    // Released the moment its statement fails with the socket's error, before the socket's close.
    const inFlight = outcome(
      reserved`select pg_sleep(30)`.catch((error: unknown) => {
        reserved.release();
        next = outcome(sql`select 1`);
        throw error;
      }),
    );
    await admin`select 1`;
    socket!.destroy(Object.assign(new Error('connection reset by peer'), { code: 'ECONNRESET' }));
    expect(await inFlight).toBe('ECONNRESET');
    expect(await next).toBe('ok');
  });

  it('a write still pending when the socket closes does not stall the next session', async () => {
    let socket: Socket | undefined;
    const sql = open({ socket: () => (socket = connectSocket(Number(url.port || 5432), url.hostname)) } as postgres.Options<Record<string, never>>);
    expect(await outcome(sql`select 1`)).toBe('ok');
    // A statement written from a check-phase callback waits for the next turn's immediate; the socket
    // closes in this turn's close phase, before that immediate runs.
    const lost = await new Promise<string>((resolve) =>
      setImmediate(() => {
        const query = outcome(sql`select 2`);
        process.nextTick(() => {
          socket!.destroy();
          resolve(query);
        });
      }),
    );
    expect(lost).toBe('CONNECTION_CLOSED');
    expect(await outcome(sql`select 3`)).toBe('ok');
  });

  it('a session terminated while the driver reads its types at start-up: the next session answers, nothing escapes (porsager/postgres#1223)', async () => {
    const port = await proxy((chunk, client, server) => {
      if (!isTypesQuery(chunk)) return false;
      client.end(errorResponse('FATAL', '57P01', 'terminating connection due to administrator command'));
      server.destroy();
      return true;
    });
    const sql = viaProxy(port);
    expect(await outcome(sql`select 1`)).toBe('ok');
    expect(await outcome(sql`select 1`)).toBe('ok');
  });

  it("a failure of the driver's own types query reaches the waiting query and escapes nowhere (porsager/postgres#1192)", async () => {
    const port = await proxy((chunk, client) => {
      if (!isTypesQuery(chunk)) return false;
      client.write(Buffer.concat([errorResponse('ERROR', '57014', 'canceling statement due to statement timeout'), message('Z', Buffer.from('I'))]));
      return true;
    });
    const sql = viaProxy(port);
    expect(await outcome(sql`select 1`)).toBe('57014');
    expect(await outcome(sql`select 1`)).toBe('ok');
  });

  it("a transaction's statements after its connection closed are refused, not run outside it on the pool's next session", async () => {
    const sql = open();
    let late: string | undefined;
    const transaction = outcome(
      sql.begin(async (tx) => {
        const pid = await pidOf(tx);
        const queued = pidOf(sql);
        await terminate(pid);
        await queued;
        late = await outcome(tx`select 1`);
      }),
    );
    expect(await transaction).toBe('CONNECTION_CLOSED');
    expect(await waitFor(() => Promise.resolve(late), (answer) => answer !== undefined, 2 * DEADLINE_MS)).toBe('CONNECTION_CLOSED');
  });

  it('releasing a reserved connection whose backend was terminated leaves the pool working (porsager/postgres#1199)', async () => {
    const sql = open();
    const reserved = await sql.reserve();
    const pid = await pidOf(reserved);
    const sleeping = outcome(reserved`select pg_sleep(30)`);
    await terminate(pid);
    // Closed, or reset when the terminated backend's socket had more to say.
    expect(['CONNECTION_CLOSED', 'ECONNRESET']).toContain(await sleeping);
    reserved.release();
    expect(await outcome(sql`select 1`)).toBe('ok');
  });
});

// The patch's one change of behaviour on a healthy connection: statements sent within the same
// promise jobs go out together, however large, where the driver wrote each one of 1 KiB or more
// (a prepared statement's Bind with its parameters, often) at once, one system call each.
describe.skipIf(!process.env.DATABASE_URL)("postgres.js's writes to a connection", () => {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://localhost');
  const port = Number(url.port || 5432);
  let sql: Sql;
  beforeAll(() => {
    sql = postgres(url.toString(), { onnotice: () => undefined, max: 1 });
  });
  afterAll(() => sql?.end({ timeout: 1 }));

  /** Counts the socket writes this process makes to the database while `body` runs (`count.writes`, read at any time). */
  const countingWrites = async <T>(body: (count: { readonly writes: number }) => Promise<T>): Promise<{ writes: number; result: T }> => {
    const spy = vi.spyOn(Socket.prototype, 'write');
    const count = {
      get writes() {
        return spy.mock.contexts.filter((socket) => (socket as Socket).remotePort === port).length;
      },
    };
    try {
      const result = await body(count);
      return { writes: count.writes, result };
    } finally {
      spy.mockRestore();
    }
  };

  it('sends statements of more than 1 KiB each, begun together, in one write, and answers each', async () => {
    const texts = ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(3000));
    // The connection open, and the statement prepared: what is left to send is each one's Bind.
    await sql`select ${'warm'}::text as text`;
    const { writes, result } = await countingWrites(() => Promise.all(texts.map((text) => sql<{ text: string }[]>`select ${text}::text as text`)));
    expect(result.map(([row]) => row!.text)).toEqual(texts);
    expect(writes).toBe(1);
  });

  it('sends such a statement once the promise jobs that began it have run, before any timer', async () => {
    await sql`select ${'warm'}::text as text`;
    const { writes, result } = await countingWrites(async (count) => {
      // Queued before the statement begins, so it runs ahead of any timer the driver sets for it.
      const beforeTimers = new Promise<number>((resolve) => setImmediate(() => resolve(count.writes)));
      // execute(): a postgres.js query is sent when it is awaited or executed, not when it is made.
      const answer = sql<{ text: string }[]>`select ${'x'.repeat(3000)}::text as text`.execute();
      return { writtenBeforeTimers: await beforeTimers, length: (await answer)[0]!.text.length };
    });
    expect(result).toEqual({ writtenBeforeTimers: 1, length: 3000 });
    expect(writes).toBe(1);
  });
});

// The patch's change to the shape of a query and of a reserved client: a query's resolve and reject
// are methods of its class, over the promise's own functions, and a reservation's functions are
// the pool's, bound to its state, where the driver made closures in the query's constructor and in
// reserve(). V8 allocates a function written straight into a property in the old generation (as it
// would a method), always in code it has not optimised, and neither of those is; a dead one there
// kept its query's (or its reserved client's) young objects alive until the next full collection
// (test/bench/driver-gc.ts measures it for queries: about 700 bytes promoted per statement
// before, 40 after).
describe("postgres.js's queries", () => {
  /** What the class gives a query to settle it with; the driver's typings leave it out. */
  type Settling = { resolve(value: unknown): void; reject(error: unknown): void; active: boolean };
  /** The query's outcome, read through the native `then`: the driver's own runs the query. */
  const settled = (query: object) => Promise.prototype.then.call(query, (value: unknown) => ({ value }), (error: unknown) => ({ error }));

  it('settle through methods of their class, with no closure of their own, and mark themselves inactive', async () => {
    // Never connected: no query here is run, only made and settled.
    const sql = postgres('postgres://127.0.0.1:1/none', { max: 1, onnotice: () => undefined });
    try {
      const answered = sql.unsafe('select 1') as unknown as Settling;
      const failed = sql.unsafe('select 2') as unknown as Settling;
      for (const query of [answered, failed]) expect([Object.hasOwn(query, 'resolve'), Object.hasOwn(query, 'reject')]).toEqual([false, false]);
      answered.active = true;
      failed.active = true;
      answered.resolve(['row']);
      failed.reject(new Error('refused'));
      expect([answered.active, failed.active]).toEqual([false, false]);
      expect(await settled(answered)).toEqual({ value: ['row'] });
      expect(await settled(failed)).toEqual({ error: new Error('refused') });
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)("postgres.js's reserved clients", () => {
  it('are released and closed through functions of the pool bound to the reservation, and work as before', async () => {
    const sql = postgres(process.env.DATABASE_URL ?? '', { max: 1, onnotice: () => undefined });
    try {
      const first = await sql.reserve();
      expect(first.release.name).toBe('bound reservedRelease');
      expect(await first`select 1 as one`).toEqual([{ one: 1 }]);
      first.release();
      // The one connection went back to the pool: a second reservation gets it, and so does the pool.
      const second = await sql.reserve();
      expect(await second`select 2 as two`).toEqual([{ two: 2 }]);
      second.release();
      expect(await sql`select 3 as three`).toEqual([{ three: 3 }]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
