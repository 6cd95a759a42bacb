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
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
