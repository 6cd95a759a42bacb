// Entry point: `npm run worker`. Background workers without the HTTP API, for deployments that
// keep them apart (WORKERS_IN_PROCESS=false on the API processes). Needs DATABASE_URL when an
// API process already holds the embedded database.
import { createServices, openMigratedDatabase } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/client.ts';
import { startWorkers } from './jobs/index.ts';
import { createLogger } from './observability/logger.ts';

const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

try {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await openMigratedDatabase(config);
  const services = await createServices(config, logger, database);
  const workers = startWorkers(services);
  const stop = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'worker shutting down');
    workers
      .stop()
      .then(() => services.changes.close())
      .then(() => database.close())
      .then(() => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((error: unknown) => fail(`shutdown failed: ${String(error)}`));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} catch (error) {
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  if (error instanceof DataDirLockedError) fail(error.message);
  throw error;
}
