// One instance's composed parts: the infrastructure (config, logs, metrics, clock, database,
// change feed) and the areas built once from it. HTTP handlers reach the whole; procedures see
// the areas through their context.
import type { Auth } from './auth/auth.ts';
import type { Sessions } from './auth/sessions.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DatabaseHandle, Db } from './db/client.ts';
import type { ChangeFeed } from './events/changes.ts';
import type { EventBus } from './events/bus.ts';
import type { Backtests } from './backtest/backtests.ts';
import type { Logger } from './observability/logger.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Brokers } from './brokers/brokers.ts';
import type { Simulator } from './brokers/simulator/index.ts';
import type { BrokerIngestion } from './brokers/real/ingestion.ts';
import type { Instruments } from './instruments/instruments.ts';
import type { ExchangeKeys } from './keys/keys.ts';
import type { AuditTrail } from './audit/trail.ts';
import type { Orders } from './orders/orders.ts';
import type { Portfolio } from './portfolio/portfolio.ts';
import type { Alerts } from './alerts/index.ts';
import type { Analysis } from './analysis/analysis.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { Live } from './live/live.ts';
import type { KillSwitch } from './live/kill-switch.ts';
import type { Bots } from './bot/bot.ts';
import type { BotRunner } from './bot/runner.ts';
import type { BarsFetch } from './marketdata/fetch.ts';
import type { MarketData } from './marketdata/marketdata.ts';
import type { Halt } from './system/halt.ts';
import type { Users } from './users/users.ts';
import type { ApiKeys } from './auth/api-keys.ts';
import type { Notifications } from './notifications/notifications.ts';
import type { Signals } from './signals/signals.ts';

/** The domain areas, each built once in the composition root (app.ts). */
export interface Areas {
  auth: Auth;
  /** The user's own sessions (refresh-token families): list, end one, end the others. */
  sessions: Sessions;
  /** Personal API keys: create, list, revoke, and a key's caller. */
  apiKeys: ApiKeys;
  users: Users;
  halt: Halt;
  instruments: Instruments;
  marketData: MarketData;
  brokers: Brokers;
  keys: ExchangeKeys;
  orders: Orders;
  /** Durable per-user events: the outbox, and its delivery to this process's subscribers. */
  events: EventBus;
  backtests: Backtests;
  analysis: Analysis;
  live: Live;
  /** The per-user trading bot: start, stop, status, force stop, the kill switch's halt, its fills and positions. */
  bots: Bots;
  /** A user's own audit trail. */
  audit: AuditTrail;
  /** An account's past: the portfolio history. */
  portfolio: Portfolio;
  /** The user's notification channels (webhook, Slack, Discord, Telegram, e-mail) and their delivery. */
  notifications: Notifications;
  /** Signal webhooks: the user's hooks, the calls they take, the signals and their orders. */
  signals: Signals;
}

export interface Services extends Areas {
  /** Daily bars from a user's broker, imported (the CLI's `ohlcv fetch`). */
  barsFetch: BarsFetch;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  clock: Clock;
  database: DatabaseHandle;
  db: Db;
  changes: ChangeFeed;
  /** The simulated broker's engine: its books, prices and leased loop (workers start the loop). */
  simulator: Simulator;
  /** BROKER_MODE=real: the leased consumers of every active key's broker events (undefined when simulated). */
  brokerEvents: BrokerIngestion | undefined;
  /** Operator alerts: the log, the webhook and e-mail. */
  alerts: Alerts;
  /** The process's pg-boss, started on first use (queued work and its workers). */
  jobs: JobQueue;
  /** The daily-loss kill switch: after fills, and the minute sweep (the bot subscribes to onLock). */
  killSwitch: KillSwitch;
  /** Runs the users' bots, each under its lease (workers start its rounds). */
  botRunner: BotRunner;
  /** The clock's instant at start-up. */
  startedAt: Date;
  version: string;
  /** Stops the areas' timers and the change feed, then closes the database. */
  close(): Promise<void>;
}
