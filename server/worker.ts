// Entry point: `npm run worker`. Background workers without the HTTP API, for deployments that
// keep them apart (WORKERS_IN_PROCESS=false on the API processes). Needs DATABASE_URL when an
// API process already holds the embedded database.
import { createServices, openMigratedDatabase } from './app.ts';
import { loadConfig } from './config.ts';
import { runEntry, stopOnSignal } from './entry.ts';
import { startWorkers } from './jobs/index.ts';
import { createLogger } from './observability/logger.ts';

runEntry(async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const database = await openMigratedDatabase(config);
  const services = await createServices(config, logger, database);
  const workers = await startWorkers(services);
  stopOnSignal(async (signal) => {
    logger.info({ signal }, 'worker shutting down');
    await workers.stop();
    await services.close();
    logger.info('stopped');
    logger.flush();
  });
});
