// Structured JSON logs (pino). Redaction is a second line of defence: nothing that logs should
// pass a secret in the first place, but headers and bodies never leave here unredacted.
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.access_token',
  '*.refresh_token',
  '*.token',
  '*.api_key',
  '*.api_secret',
  'password',
  'token',
];

/**
 * Errors as logs show them. A failed query's message carries its parameters (password hashes,
 * token ids, whatever was written): keep the SQL and the database's own reason, drop the values.
 */
export const serializeError = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { message: String(error) };
  const failedQuery = error instanceof DrizzleQueryError;
  const cause = error.cause instanceof Error ? serializeError(error.cause) : undefined;
  return {
    // Some libraries leave `name` as plain 'Error'; the class says more.
    type: error.name === 'Error' ? error.constructor.name : error.name,
    message: failedQuery ? `Failed query: ${error.query}` : error.message,
    ...((error as { code?: unknown }).code !== undefined ? { code: (error as { code?: unknown }).code } : {}),
    ...(cause ? { cause } : {}),
    stack: failedQuery ? undefined : error.stack,
  };
};

/**
 * Log lines reach the file or stdout in batches of at least this many bytes (or after
 * LOG_FLUSH_MS): one write per batch, not one per request line, which cost the order path more
 * than half a millisecond per request. Lines still buffered when the process is killed outright
 * are lost; a graceful stop flushes them. The audit trail is in the database, not here.
 */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/** An asynchronous, batching destination for `dest` (a file descriptor or a path). */
export const logDestination = (dest: number | string) => {
  const destination = pino.destination({ dest, sync: false, minLength: LOG_BATCH_BYTES });
  const timer = setInterval(() => {
    // A closing stream is destroyed before it emits 'close' (it syncs and closes the file in
    // between), and a flush then throws from this timer, where nothing can catch it: the end
    // writes what is left by itself.
    if (!(destination as { destroyed?: boolean }).destroyed) destination.flush();
  }, LOG_FLUSH_MS);
  // The timer never keeps a process alive, and stops before the destination does.
  timer.unref();
  destination.once('close', () => clearInterval(timer));
  destination.once('error', () => clearInterval(timer));
  return destination;
};

export const createLogger = (level: string, destination?: pino.DestinationStream): Logger =>
  pino(
    {
      level,
      base: { service: 'trading-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: serializeError },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? logDestination(1),
  );
