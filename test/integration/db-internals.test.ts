// What the database seam (server/db/) takes from inside drizzle-orm, postgres.js and PGlite: one
// test per internal, asserting the shape or behaviour the code assumes. No public API promises
// these, so an upgrade may change them silently; a failure names the line that relies on the
// internal and the version it was written for. PGlite always; postgres.js when DATABASE_URL is
// set. docs/architecture.md, The database seam, lists them.
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { integer, PgDialect, pgTable, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres, { type Sql } from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { openDatabase, rowsOf, statementsSent, TransactionRolledBack, type DatabaseHandle, type Db, type Tx } from '../../server/db/client.ts';
import { isDatabaseUnavailable, isUniqueViolation } from '../../server/db/errors.ts';
import { fixedSql, FixedSQL } from '../../server/db/fixed-sql.ts';
import * as schema from '../../server/db/schema/index.ts';
import { createTestDatabase, dataDirFromTemplate } from '../support/server.ts';

/** Every postgres.js client opened in this file, so that a test can watch the one a handle runs on. */
const clients = vi.hoisted(() => [] as unknown[]);
vi.mock('postgres', async (importOriginal) => {
  const driver = await importOriginal<{ default: (...args: unknown[]) => unknown }>();
  const open = (...args: unknown[]) => {
    const client = driver.default(...args);
    clients.push(client);
    return client;
  };
  return { ...driver, default: Object.assign(open, driver.default) };
});

const WRITTEN_FOR = { 'drizzle-orm': '0.45.4', postgres: '3.4.9', '@electric-sql/pglite': '0.5.16' } as const;
type Library = keyof typeof WRITTEN_FOR;
const installed = (library: Library): string =>
  (JSON.parse(readFileSync(new URL(`../../node_modules/${library}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

/** `file:line` of the first line of `file` that holds `anchor`: where the reliance sits today. */
const lineOf = (file: string, anchor: string): string => {
  const index = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
    .split('\n')
    .findIndex((line) => line.includes(anchor));
  return index < 0 ? `${file} (no line holds "${anchor}" any more)` : `${file}:${index + 1}`;
};

/** The failure message: the line that relies on the internal, what it assumes, and of which versions. */
const reliedOn = (file: string, anchor: string, libraries: Library[], assumption: string): string =>
  `${lineOf(file, anchor)} assumes ${assumption} (written for ${libraries.map((library) => `${library} ${WRITTEN_FOR[library]}, installed ${installed(library)}`).join('; ')}): revisit it`;

const CLIENT = 'server/db/client.ts';
const FIXED_SQL = 'server/db/fixed-sql.ts';
const ERRORS = 'server/db/errors.ts';

/** A table of this file's own, so that nothing here depends on the migrations. */
const probe = pgTable('fence_probe', { id: integer('id').primaryKey(), note: text('note') });
const PROBE_NOTE_TEXT = 'select "fence_probe"."note" from "fence_probe" where "fence_probe"."id" = $1';
/** The same statement as two shapes (a template is one), so that one test's build leaves the other's cache alone. */
const noteOf = (id: number) => fixedSql`select ${probe.note} from ${probe} where ${probe.id} = ${id}`;
const cachedNoteOf = (id: number) => fixedSql`select ${probe.note} from ${probe} where ${probe.id} = ${id}`;

/** A failure's code, else its message, through drizzle's wrapping. */
const reasonOf = (error: unknown): string => {
  const { code, message } = ((error as Error).cause ?? error) as { code?: string; message?: string };
  return code ?? message ?? String(error);
};
/** What a promise settles with: 'ok', or the reason it failed. */
const settled = (promise: PromiseLike<unknown>): Promise<string> => Promise.resolve(promise).then(() => 'ok', reasonOf);

describe('FixedSQL (server/db/fixed-sql.ts) and drizzle SQL', () => {
  const dialect = new PgDialect();

  it("drizzle's SQL constructor assigns queryChunks, so the accessor on FixedSQL.prototype is what a nesting fragment reads", () => {
    const message = reliedOn(FIXED_SQL, "Object.defineProperty(FixedSQL.prototype, 'queryChunks'", ['drizzle-orm'], "that SQL's constructor assigns queryChunks (no class field shadows the accessor) and that a nested fragment is built from its queryChunks");
    const fixed = noteOf(7);
    expect(fixed).toBeInstanceOf(FixedSQL);
    expect(Object.getOwnPropertyDescriptor(fixed, 'queryChunks'), message).toBeUndefined();
    expect(dialect.sqlToQuery(sql`with noted as (${fixed}) select * from noted where note <> ${'x'}`), message).toMatchObject({
      sql: `with noted as (${PROBE_NOTE_TEXT}) select * from noted where note <> $2`,
      params: [7, 'x'],
    });
  });
});

/** The contracts both drivers keep, on a handle as openDatabase makes it. */
const sharedContracts = (kind: 'pglite' | 'postgres', open: () => Promise<{ handle: DatabaseHandle; close: () => Promise<void> }>) => {
  const driver: Library = kind === 'pglite' ? '@electric-sql/pglite' : 'postgres';
  let handle: DatabaseHandle;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ handle, close } = await open());
    await handle.db.execute(sql`create table fence_probe (id integer primary key, note text constraint fence_probe_note unique)`);
    await handle.db.execute(sql`insert into fence_probe values (1, 'one'), (2, 'two')`);
  });
  afterAll(() => close?.());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('session.schema: drizzle keeps the relational schema on db.session and builds each transaction from it', async () => {
    const message = reliedOn(CLIENT, 'session.schema = undefined', ['drizzle-orm'], 'that db.session.schema holds the relational schema, read only to build a transaction (db.query is built already)');
    const client = (handle.db as unknown as { $client: PGlite & Sql }).$client;
    // As drizzle builds a database: the schema on its session, and a query builder per table in every transaction.
    const plain: Db = kind === 'pglite' ? drizzlePglite({ client, schema }) : drizzlePostgres({ client, schema });
    expect((plain as unknown as { session: { schema?: { fullSchema?: unknown } } }).session.schema?.fullSchema, message).toBe(schema);
    expect(await plain.transaction((tx) => Promise.resolve(Object.keys(tx.query))), message).toEqual(Object.keys(plain.query));
    // As openDatabase leaves it: transactions are built bare, and db.query still builds its statements.
    expect(await handle.db.transaction((tx) => Promise.resolve(Object.keys(tx.query))), message).toEqual([]);
    expect(handle.db.query.users.findFirst({ columns: { id: true } }).toSQL().sql, message).toMatch(/^select "id" from "users"/);
  });

  it('rowsOf: db.execute resolves to what the driver answered', async () => {
    const message = reliedOn(CLIENT, 'Array.isArray(result) ? result', ['drizzle-orm', driver], 'that db.execute resolves to the rows themselves on postgres.js and to a result holding `rows` on PGlite');
    const result: unknown = await handle.db.execute(sql`select 1::integer as one`);
    if (kind === 'postgres') expect([Array.isArray(result), [...(result as unknown[])]], message).toEqual([true, [{ one: 1 }]]);
    else expect([Array.isArray(result), (result as { rows: unknown }).rows], message).toEqual([false, [{ one: 1 }]]);
    expect(await rowsOf(handle.db, sql`select 1::integer as one`), message).toEqual([{ one: 1 }]);
  });

  it('statementsSent: a statement begun in a transaction reaches the driver through promise jobs alone, ahead of COMMIT', async () => {
    const message = reliedOn(
      CLIENT,
      'export const statementsSent',
      ['drizzle-orm', driver],
      `that a statement gets from drizzle to ${kind === 'pglite' ? "PGlite's query queue" : "postgres.js's connection"} in promise jobs, without a timer or I/O, so that COMMIT, sent a tick later, comes behind it (beginPipelined, and server/brokers/simulator/placement-queue.ts's placements)`,
    );
    const { own, sent } = await handle.db.transaction(async (tx) => {
      const [first] = await rowsOf<{ id: string }>(tx, sql`select txid_current()::text as id`);
      const sent = [1, 2, 3].map((n) => rowsOf<{ id: string; n: number }>(tx, sql`select txid_current()::text as id, ${n}::integer as n`));
      for (const statement of sent) statement.catch(() => undefined);
      await statementsSent();
      // In an object: a transaction resolving to the promises themselves would wait for them.
      return { own: first!.id, sent };
    });
    const answers = await Promise.all(sent.map((statement) => statement.then(([row]) => row, reasonOf)));
    expect(answers, message).toEqual([1, 2, 3].map((n) => ({ id: own, n })));
  });

  it('COMMIT commits a transaction, and refuses one whose unawaited statement failed', async () => {
    const message =
      kind === 'postgres'
        ? reliedOn(CLIENT, "committed.command !== 'COMMIT'", ['postgres'], "that a statement's result carries its command tag as `command`, 'ROLLBACK' for a COMMIT of a failed transaction")
        : reliedOn('server/brokers/simulator/placement-queue.ts', 'When a statement sent without waiting failed, COMMIT rolled back', ['drizzle-orm', '@electric-sql/pglite'], "that PGlite's transaction throws when its COMMIT answers ROLLBACK");
    const committed = handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into fence_probe values (3, 'three')`);
    });
    expect(await settled(committed), message).toBe('ok');
    let failed: Promise<unknown> | undefined;
    const refused = await handle.db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into fence_probe values (4, 'four')`);
        failed = rowsOf(tx, sql`insert into fence_probe values (5, 'one')`);
        failed.catch(() => undefined);
        await statementsSent();
      })
      .then(() => 'committed', (error: unknown) => error);
    expect(refused, message).toBeInstanceOf(kind === 'postgres' ? TransactionRolledBack : Error);
    expect(await settled(failed!)).toBe('23505');
    expect(await rowsOf(handle.db, sql`select id from fence_probe order by id`), message).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it("FixedSQL: drizzle builds a statement by calling its toQuery, where the text is kept, and gives placeholders back as Placeholder", async () => {
    const message = reliedOn(FIXED_SQL, 'param instanceof Placeholder', ['drizzle-orm'], 'that drizzle builds a statement it runs with its toQuery(config), and returns each sql.placeholder among the params as the Placeholder itself, numbered from paramStartIndex');
    const sent = kind === 'pglite' ? vi.spyOn((handle.db as unknown as { $client: PGlite }).$client, 'query') : vi.spyOn(rawClientOf(handle), 'unsafe');
    const toQuery = vi.spyOn(FixedSQL.prototype, 'toQuery');
    const plain = vi.spyOn(FixedSQL.prototype, 'plain');
    expect(await rowsOf(handle.db, cachedNoteOf(1)), message).toEqual([{ note: 'one' }]);
    const builtBefore = plain.mock.calls.length;
    expect(await rowsOf(handle.db, cachedNoteOf(2)), message).toEqual([{ note: 'two' }]);
    expect(toQuery, message).toHaveBeenCalledTimes(2);
    // The second statement of the shape took the kept text: nothing was built the ordinary way.
    expect(plain.mock.calls.length - builtBefore, message).toBe(0);
    expect(sent.mock.calls.map(([text, params]) => [text, params]), message).toEqual([
      [PROBE_NOTE_TEXT, [1]],
      [PROBE_NOTE_TEXT, [2]],
    ]);
  });

  it("errors: drizzle wraps the driver's error in DrizzleQueryError, whose cause names the SQLSTATE and the constraint", async () => {
    const message = reliedOn(
      ERRORS,
      kind === 'postgres' ? 'constraint_name: postgresJs' : 'constraint: pglite',
      ['drizzle-orm', driver],
      `that the driver's error gives the SQLSTATE as code and the constraint as ${kind === 'postgres' ? 'constraint_name' : 'constraint'}`,
    );
    const error = await handle.db.execute(sql`insert into fence_probe values (9, 'one')`).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error, reliedOn(ERRORS, 'e instanceof DrizzleQueryError', ['drizzle-orm'], "that drizzle wraps a failed statement's error in DrizzleQueryError, the driver's error its cause")).toBeInstanceOf(DrizzleQueryError);
    expect((error as Error).cause, message).toMatchObject(kind === 'postgres' ? { code: '23505', constraint_name: 'fence_probe_note' } : { code: '23505', constraint: 'fence_probe_note' });
    expect(isUniqueViolation(error, 'fence_probe_note'), message).toBe(true);
  });
};

/** The postgres.js client a handle opened (its drizzle sees it through `preparing`). */
const rawClients = new WeakMap<DatabaseHandle, Sql>();
const rawClientOf = (handle: DatabaseHandle): Sql => rawClients.get(handle)!;

describe('on PGlite', () => {
  sharedContracts('pglite', async () => {
    const dataDir = dataDirFromTemplate();
    const handle = await openDatabase({ databaseUrl: '', dataDir, poolSize: 1 });
    return {
      handle,
      close: async () => {
        await handle.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
});

describe.skipIf(!process.env.DATABASE_URL)('on PostgreSQL through postgres.js', () => {
  let handle: DatabaseHandle;
  const opened = async () => {
    const created = await createTestDatabase();
    handle = await openDatabase({ databaseUrl: created.url, dataDir: '', poolSize: 2 });
    rawClients.set(handle, clients.at(-1) as Sql);
    return {
      handle,
      close: async () => {
        await handle.close();
        await created.drop();
      },
    };
  };
  sharedContracts('postgres', opened);

  it("preparing: drizzle sends each statement through its client's unsafe(text, params, options)", async () => {
    const message = reliedOn(CLIENT, "if (property === 'unsafe') {", ['drizzle-orm'], "that drizzle's postgres-js session sends every statement by reading `unsafe` from its client and calling it with (text, params, options), so that prepare: true reaches postgres.js");
    const unsafe = vi.spyOn(rawClientOf(handle), 'unsafe');
    await handle.db.execute(sql`select ${1}::integer as one`);
    await handle.db.select({ id: probe.id }).from(probe).where(sql`${probe.id} = ${1}`);
    await handle.db.query.users.findFirst({ columns: { id: true } });
    expect(
      unsafe.mock.calls.map(([text, , options]) => [text, options]),
      message,
    ).toEqual([
      ['select $1::integer as one', { prepare: true }],
      ['select "id" from "fence_probe" where "fence_probe"."id" = $1', { prepare: true }],
      [expect.stringMatching(/^select "id" from "users" "users"/), { prepare: true }],
    ]);
  });

  it('preparing: drizzle begins a transaction with begin(body), the body its only argument, so BEGIN is pipelined', async () => {
    const message = reliedOn(CLIENT, "if (property === 'begin') {", ['drizzle-orm'], "that drizzle's postgres-js session begins every transaction (with or without a config) as client.begin(body), so that beginPipelined runs it");
    const client = rawClientOf(handle);
    const reserve = client.reserve.bind(client);
    const connections: MockInstance<Sql['unsafe']>[] = [];
    vi.spyOn(client, 'reserve').mockImplementation(async () => {
      const connection = await reserve();
      connections.push(vi.spyOn(connection, 'unsafe'));
      return connection;
    });
    const begin = vi.spyOn(client, 'begin');
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
    });
    await handle.db.transaction(
      async (tx) => {
        await tx.execute(sql`select 2`);
      },
      { isolationLevel: 'repeatable read' },
    );
    expect(begin, message).not.toHaveBeenCalled();
    expect(
      connections.map((unsafe) => unsafe.mock.calls.map(([text, , options]) => [text, options])),
      message,
    ).toEqual([[['select 1', { prepare: true }]], [['set transaction isolation level repeatable read', { prepare: true }], ['select 2', { prepare: true }]]]);
  });

  it("the transaction's guard: drizzle reads `unsafe` from its transaction's client at each statement", async () => {
    const message = reliedOn(CLIENT, 'const guarded = new Proxy(connection', ['drizzle-orm'], "that drizzle's transaction reads `unsafe` from the client it was given at every statement (not once), so that one begun after the end is refused");
    let kept: Tx | undefined;
    await handle.db.transaction(async (tx) => {
      kept = tx;
      await tx.execute(sql`select 1`);
    });
    expect(await settled(rowsOf(kept!, sql`select 1`)), message).toBe('a statement was sent after its transaction ended');
  });

  it('beginPipelined: a postgres.js query is sent once a handler is attached, without being awaited', async () => {
    const message = reliedOn(CLIENT, 'begun.catch(() => undefined)', ['postgres'], 'that attaching a catch handler to a postgres.js query sends it (queries are lazy), so BEGIN goes out ahead of the body');
    const connection = await rawClientOf(handle).reserve();
    try {
      connection`select set_config('fence.sent', 'yes', false)`.catch(() => undefined);
      const [row] = await connection<{ sent: string | null }[]>`select current_setting('fence.sent', true) as sent`;
      expect(row?.sent, message).toBe('yes');
    } finally {
      connection.release();
    }
  });
});

describe("postgres.js's own codes for a connection that is gone or never came (server/db/errors.ts)", () => {
  it('are the ones isDatabaseUnavailable knows', async () => {
    const message = reliedOn(ERRORS, 'const DRIVER_CODES', ['postgres'], "postgres.js's codes for a connection ended, destroyed or not opened in time, and the socket's code when refused");
    // A server that accepts connections and never answers; then a port nobody listens on.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const at = (options: postgres.Options<Record<string, never>>) => postgres({ host: '127.0.0.1', port, username: 'fence', database: 'fence', max: 1, onnotice: () => undefined, ...options });
    const errorOf = (query: PromiseLike<unknown>) => Promise.resolve(query).then(() => undefined, (error: unknown) => error as Error & { code?: string });
    try {
      const timedOut = at({ connect_timeout: 1 });
      const timeout = await errorOf(timedOut`select 1`);
      const ended = at({});
      await ended.end();
      const end = await errorOf(ended`select 1`);
      const destroyed = at({});
      const pending = errorOf(destroyed`select 1`);
      await new Promise((resolve) => setImmediate(resolve));
      await destroyed.end({ timeout: 0 });
      const destroy = await pending;
      await timedOut.end({ timeout: 0 });
      // Nobody listens on the port any more.
      silent.close();
      for (const socket of sockets) socket.destroy();
      const unheard = at({ connect_timeout: 5 });
      const refused = await errorOf(unheard`select 1`);
      await unheard.end({ timeout: 0 });
      expect([timeout, end, destroy, refused].map((error) => error?.code), message).toEqual(['CONNECT_TIMEOUT', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'ECONNREFUSED']);
      for (const error of [timeout, end, destroy, refused]) expect(isDatabaseUnavailable(error, { fromDatabase: true }), message).toBe(true);
    } finally {
      if (silent.listening) silent.close();
      for (const socket of sockets) socket.destroy();
    }
  });
});
