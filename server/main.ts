// Entry point: `npm start`. Loads the configuration (a bad one exits non-zero with the setting
// named), starts the service and stops it gracefully on SIGTERM / SIGINT.
import { startApp } from './app.ts';
import { loadConfig } from './config.ts';
import { runEntry, stopOnSignal } from './entry.ts';

runEntry(async () => {
  const app = await startApp(loadConfig());
  stopOnSignal(async (signal) => {
    app.services.logger.info({ signal }, 'shutting down');
    await app.close();
  });
});
