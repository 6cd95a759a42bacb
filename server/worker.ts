// Entry point: `npm run worker`. Background workers without the HTTP API, for deployments that
// keep them apart (WORKERS_IN_PROCESS=false on the API processes). Needs DATABASE_URL when an
// API process already holds the embedded database.
import { loadConfig } from './config.ts';
import { loadModules, runEntry, stopOnSignal } from './entry.ts';

runEntry(async () => {
  const config = loadConfig();
  const [{ createServices, openMigratedDatabase }, { startWorkers }, { createLogger }] = await loadModules(() =>
    Promise.all([import('./app.ts'), import('./jobs/index.ts'), import('./observability/logger.ts')]),
  );
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
