// Entry point: `npm start`. Loads the configuration (a bad one exits non-zero with the setting
// named, before the service's modules are loaded), starts the service and stops it gracefully on
// SIGTERM / SIGINT.
import { loadConfig } from './config.ts';
import { loadModules, runEntry, stopOnSignal } from './entry.ts';

runEntry(async () => {
  const config = loadConfig();
  const { startApp } = await loadModules(() => import('./app.ts'));
  const app = await startApp(config);
  stopOnSignal(async (signal) => {
    app.services.logger.info({ signal }, 'shutting down');
    await app.close();
  });
});
