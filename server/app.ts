// Composition of one service instance: config -> db -> services -> http. main.ts, the CLI and
// the tests all build it here, so there is one wiring.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensureAdmin } from './auth/admin.ts';
import { createAuthService } from './auth/service.ts';
import { createLoginThrottle } from './auth/throttle.ts';
import { createTokenSigner } from './auth/tokens.ts';
import { createUserDirectory } from './auth/users.ts';
import type { Config } from './config.ts';
import { openDatabase, type DatabaseHandle } from './db/client.ts';
import { startChangeFeed } from './events/changes.ts';
import { createHttpServer } from './http/server.ts';
import { startWorkers } from './jobs/index.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { appRouter } from './routers/index.ts';
import type { Services } from './services.ts';
import { createHaltSwitch } from './system/halt.ts';

export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Opens the database and applies migrations: what every entry point needs first. */
export const openMigratedDatabase = async (config: Config): Promise<DatabaseHandle> => {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir, poolSize: config.DB_POOL_SIZE });
  try {
    await database.migrate();
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
};

export const createServices = async (config: Config, logger: Logger, database: DatabaseHandle): Promise<Services> => {
  const db = database.db;
  const changes = await startChangeFeed(database, logger);
  const users = createUserDirectory({ db, changes });
  const halt = await createHaltSwitch({ db, changes, logger });
  const tokens = createTokenSigner({
    secret: config.AUTH_SECRET_KEY,
    accessTtlMin: config.AUTH_ACCESS_TOKEN_TTL_MIN,
    refreshTtlDays: config.AUTH_REFRESH_TOKEN_TTL_DAYS,
  });
  const throttle = createLoginThrottle({ db, maxFailures: config.LOGIN_MAX_FAILURES, windowMin: config.LOGIN_WINDOW_MIN });
  const auth = await createAuthService({ db, tokens, throttle, users, halt, changes });
  return { config, logger, metrics: createMetrics(), database, db, changes, users, halt, auth, startedAt: Date.now(), version: VERSION };
};

export interface RunningApp {
  services: Services;
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:8000 */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), closes the DB. */
  close(): Promise<void>;
}

export const startApp = async (config: Config, options: { logger?: Logger } = {}): Promise<RunningApp> => {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  const database = await openMigratedDatabase(config);
  let services: Services;
  try {
    services = await createServices(config, logger, database);
    if (config.ADMIN_USERNAME) {
      const { user, created } = await ensureAdmin({
        db: services.db,
        changes: services.changes,
        username: config.ADMIN_USERNAME,
        password: config.ADMIN_PASSWORD,
        email: config.ADMIN_EMAIL,
        via: 'startup',
      });
      logger.info({ userId: user.id, username: user.username }, created ? 'admin user created' : 'admin user ensured');
    }
  } catch (error) {
    await database.close();
    throw error;
  }

  const workers = config.WORKERS_IN_PROCESS ? startWorkers(services) : undefined;
  const server = createHttpServer(appRouter, services);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  logger.info({ host: config.HOST, port, db: database.kind }, 'listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await stopped;
      clearTimeout(deadline);
      await workers?.stop();
      await services.changes.close().catch(() => undefined);
      await database.close();
      logger.info('stopped');
      logger.flush();
    })());

  return { services, server, url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, port, close };
};
