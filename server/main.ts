// Entry point: `npm start`. Loads the configuration (a bad one exits non-zero with the setting
// named), starts the service and stops it gracefully on SIGTERM / SIGINT.
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/client.ts';
import { startApp } from './app.ts';

const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  throw error;
}

try {
  const app = await startApp(config);
  let signalled = false;
  const stop = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    app.services.logger.info({ signal }, 'shutting down');
    app
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} catch (error) {
  if (error instanceof DataDirLockedError) fail(error.message);
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  throw error;
}
