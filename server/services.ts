// What procedures and HTTP handlers can reach: the composed services of one instance.
import type { AuthService } from './auth/service.ts';
import type { UserDirectory } from './auth/users.ts';
import type { Config } from './config.ts';
import type { DatabaseHandle, Db } from './db/client.ts';
import type { ChangeFeed } from './events/changes.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import type { HaltSwitch } from './system/halt.ts';

export interface Services {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  database: DatabaseHandle;
  db: Db;
  changes: ChangeFeed;
  users: UserDirectory;
  halt: HaltSwitch;
  auth: AuthService;
  startedAt: number;
  version: string;
}
