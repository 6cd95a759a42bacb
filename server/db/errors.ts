// What database errors mean, as both drivers report them.
import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * Postgres' unique_violation (SQLSTATE 23505), of the named constraint when one is given; drizzle
 * wraps the driver's error in `cause`, and the drivers name the constraint differently (contract
 * test in test/integration/db-internals.test.ts).
 */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const { code, constraint_name: postgresJs, constraint: pglite } = e as { code?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (code === '23505') return constraint === undefined || (postgresJs ?? pglite) === constraint;
  }
  return false;
};

/** Seconds a client is told to wait (Retry-After) before it retries what the database's absence refused. */
export const DATABASE_RETRY_AFTER_SEC = 1;

/**
 * What the database seam throws when it has no connection to work on (a transaction that could
 * not begin): the driver's error is its cause.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(cause: unknown) {
    super('the database cannot be reached', { cause });
  }
}

/**
 * The driver's own codes for a connection that is gone or never came (postgres.js): closed under
 * a query, ended or destroyed by our own shutdown, or not opened in time (contract test in
 * test/integration/db-internals.test.ts).
 */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);
/**
 * SQLSTATEs of a server that cannot serve the session: class 08 (connection exception),
 * admin_shutdown (pg_terminate_backend, a fast shutdown, a failover), crash_shutdown,
 * cannot_connect_now (starting up, in recovery), too_many_connections.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_EXCEPTION = /^08[0-9A-Z]{3}$/;
/**
 * What a socket says when the server is not there, went away or cannot be found (yet). Other
 * clients' sockets say the same (a broker's, an LLM provider's), so these count only in an error
 * the database gave.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

const codeOf = (error: Error): unknown => (error as { code?: unknown }).code;

/** A socket failure, or a connect whose every address failed (an AggregateError of them). */
const isSocketFailure = (error: Error): boolean => {
  const code = codeOf(error);
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  const { errors } = error as { errors?: unknown };
  return Array.isArray(errors) && errors.some((inner) => inner instanceof Error && isSocketFailure(inner));
};

/**
 * True when the error says the database cannot be reached, rather than that a statement was
 * wrong: the request may succeed as it is once a connection is back (503 SERVICE_UNAVAILABLE).
 * Looks through drizzle's wrapping (`cause`; contract test in
 * test/integration/db-internals.test.ts). `fromDatabase`: the caller knows the error came from
 * the database (start-up's connect and migrate), so a bare socket failure counts too.
 */
export const isDatabaseUnavailable = (error: unknown, { fromDatabase = false } = {}): boolean => {
  let ours = fromDatabase;
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    ours ||= e instanceof DrizzleQueryError || e instanceof DatabaseUnavailableError;
    const code = codeOf(e);
    if (typeof code === 'string' && (DRIVER_CODES.has(code) || SERVER_CODES.has(code) || CONNECTION_EXCEPTION.test(code))) return true;
    if (ours && isSocketFailure(e)) return true;
  }
  return false;
};

/** Another process holds the embedded database's DATA_DIR. */
export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `DATA_DIR ${dir} is in use by process ${pid} (embedded database). Stop it first, ` +
        'use its HTTP routes, or point DATABASE_URL at PostgreSQL to run several processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

/** Start-up gave up on a database it could not reach within DB_CONNECT_TIMEOUT_SEC. */
export class DatabaseNotReachedError extends Error {
  override readonly name = 'DatabaseNotReachedError';
  constructor(timeoutSec: number, reason: string) {
    super(`the database could not be reached within DB_CONNECT_TIMEOUT_SEC (${timeoutSec} s); last error: ${reason}`);
  }
}
