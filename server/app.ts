// The composition root of one service instance: config -> db -> change feed -> areas -> http ->
// workers. main.ts, the worker, the CLI and the tests all build it here, so there is one wiring.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuditTrail } from './audit/trail.ts';
import { createPortfolio } from './portfolio/portfolio.ts';
import { createAuth } from './auth/auth.ts';
import { createApiKeys } from './auth/api-keys.ts';
import { createSessions } from './auth/sessions.ts';
import { createPasswords } from './auth/passwords.ts';
import { createThrottle, throttleLimits } from './auth/throttle.ts';
import { createTokenSigner } from './auth/tokens.ts';
import { systemClock, type Clock } from './clock.ts';
import { ConfigError, type Config } from './config.ts';
import { openDatabase, untilReachable, type DatabaseHandle, type ReachOptions } from './db/client.ts';
import { AppError } from './errors.ts';
import { startChangeFeed } from './events/changes.ts';
import { createEventBus } from './events/bus.ts';
import { createBacktests } from './backtest/backtests.ts';
import { createBacktestPool } from './backtest/pool.ts';
import { attachWebSocketChannels, type WebSocketChannels } from './http/ws.ts';
import { createHttpServer } from './http/server.ts';
import { startWorkers, type Workers } from './jobs/index.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { appRouter } from './routers/index.ts';
import type { Services } from './services.ts';
import { createInstruments } from './instruments/instruments.ts';
import { createMarketData } from './marketdata/marketdata.ts';
import { createBrokers } from './brokers/brokers.ts';
import { createSimulator } from './brokers/simulator/index.ts';
import { unknownCcxtExchangeIds } from './brokers/ccxt/index.ts';
import { createRealAdapters } from './brokers/real/adapters.ts';
import { createBrokerIngestion } from './brokers/real/ingestion.ts';
import { createRealEquities } from './brokers/real/equities.ts';
import type { TBrokerEvent, TTradingMode } from './brokers/types.ts';
import { createKeyCredentialsReader } from './keys/credentials.ts';
import { createBarsFetch } from './marketdata/fetch.ts';
import { parseAllowList, DEFAULT_BASE_URLS } from './keys/allowlist.ts';
import { createKeyCipher } from './keys/crypto.ts';
import { cryptoExchangesOf } from './keys/exchanges.ts';
import { createExchangeKeys } from './keys/keys.ts';
import { inBooksSubmission } from './orders/in-books-submission.ts';
import { orderLinkStores } from './orders/broker-links.ts';
import { createOrders } from './orders/orders.ts';
import { remoteSubmission } from './orders/remote-submission.ts';
import { alertChannelsFromConfig, createAlerts } from './alerts/index.ts';
import { createHalt } from './system/halt.ts';
import { createUsers } from './users/users.ts';
import { createAnalysis } from './analysis/analysis.ts';
import { llmClientFromConfig } from './analysis/llm/from-config.ts';
import { createJobQueue } from './jobs/queue.ts';
import { createLive } from './live/live.ts';
import { createPromotion } from './live/promotion.ts';
import { createKillSwitch } from './live/kill-switch.ts';
import { createLiveSuspension } from './live/suspension.ts';
import { createBotCheck } from './live/botcheck.ts';
import { createMailer } from './alerts/email.ts';
import { createBots } from './bot/bot.ts';
import { createBotRunner } from './bot/runner.ts';
import { createNotifications } from './notifications/notifications.ts';
import { createSignals } from './signals/signals.ts';

export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** How often cached shared state is re-read even without a notification: a bound, not the mechanism. */
const CACHE_SAFETY_RELOAD_MS = 30_000;
/** One confirm-token e-mail's limit (the issuing request waits on it). */
const MAIL_TIMEOUT_MS = 10_000;

export interface AppOptions {
  logger?: Logger;
  clock?: Clock;
  /** Tests shorten it to see the safety reload work. */
  cacheSafetyReloadMs?: number;
  /** Real mode: take in the broker events of accounts (default); the CLI's short runs do not. */
  takeBrokerEvents?: boolean;
  /** How long a duplicate placement waits for its first copy's answer: tests lengthen it, so only a wake-up answers it. */
  replayWaitMs?: number;
  /** How often an idle trigger watch looks again on its own: tests lengthen it, so only a signal wakes it. */
  triggerIdleReloadMs?: number;
  /** What paces the WebSocket heartbeat's rounds (pings, the tokens' expiry): timers by default; tests move a clock of their own to run a round. */
  heartbeatClock?: Clock;
}

/**
 * Opens the database and applies migrations: what every entry point needs first. A database that
 * cannot be reached yet is waited for, up to DB_CONNECT_TIMEOUT_SEC, saying why in the log.
 */
export const openMigratedDatabase = async (config: Config, wait: Partial<Omit<ReachOptions, 'timeoutSec'>> = {}): Promise<DatabaseHandle> => {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir, poolSize: config.DB_POOL_SIZE });
  try {
    await untilReachable(() => database.migrate(), { ...wait, logger: wait.logger ?? createLogger(config.LOG_LEVEL), timeoutSec: config.DB_CONNECT_TIMEOUT_SEC });
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
};

/** Builds every area once. On failure, whatever was started is stopped again (the database stays the caller's). */
export const createServices = async (config: Config, logger: Logger, database: DatabaseHandle, options: AppOptions = {}): Promise<Services> => {
  const db = database.db;
  const clock = options.clock ?? systemClock();
  const metrics = createMetrics();
  // Real mode trades on these exchanges through ccxt: each must be one of ccxt's (its own list, no network).
  if (config.BROKER_MODE === 'real') {
    const unknown = await unknownCcxtExchangeIds(config.CRYPTO_EXCHANGE_IDS);
    if (unknown.length > 0) throw new ConfigError(unknown.includes(config.CRYPTO_EXCHANGE_ID) ? 'CRYPTO_EXCHANGE_ID' : 'CRYPTO_EXCHANGE_IDS', `ccxt has no exchange ${unknown.join(', ')}`);
  }
  const changes = await startChangeFeed(database, logger);
  const events = await createEventBus({ database, logger }).catch(async (error: unknown) => {
    await changes.close().catch(() => undefined);
    throw error;
  });
  try {
    const users = createUsers({ db, changes, clock, logger });
    const halt = await createHalt({ db, clock, changes, logger, safetyReloadMs: options.cacheSafetyReloadMs ?? CACHE_SAFETY_RELOAD_MS });
    const tokens = createTokenSigner({
      secret: config.AUTH_SECRET_KEY,
      accessTtlSec: config.AUTH_ACCESS_TOKEN_TTL_SEC || config.AUTH_ACCESS_TOKEN_TTL_MIN * 60,
      refreshTtlDays: config.AUTH_REFRESH_TOKEN_TTL_DAYS,
      clock,
    });
    const throttle = createThrottle({ db, clock, limits: throttleLimits(config) });
    const passwords = createPasswords({ concurrency: config.PASSWORD_HASH_CONCURRENCY, maxWaiting: config.PASSWORD_HASH_MAX_WAITING });
    const auth = await createAuth({ db, clock, tokens, throttle, passwords, users, halt, changes });
    const instruments = createInstruments({ db, clock, logger, changes });
    const marketData = createMarketData({ db, clock, logger, instruments });
    // Reference data every entry point needs: seeded into an empty database, production too.
    await instruments.seedIfEmpty();
    const simulator = await createSimulator({
      db,
      clock,
      logger,
      changes,
      findInstrument: instruments.find,
      initialCash: { crypto: config.SIM_INITIAL_CASH_USDT, us_equity: config.SIM_INITIAL_CASH_USD, kr_equity: config.SIM_INITIAL_CASH_KRW },
      tickIntervalMs: config.SIM_TICK_INTERVAL_MS,
      liquidityLotsPerTick: config.SIM_LIQUIDITY_LOTS_PER_TICK,
      marketHours: config.RISK_MARKET_HOURS,
    });
    const cipher = createKeyCipher({ secret: config.AUTH_SECRET_KEY, salt: config.ENCRYPTION_SALT });
    // Real mode: the brokers the keys name, with the keys' credentials read in clear only here.
    // The ids a real broker cannot keep for us are read back from the order service's records.
    const orderLinks = orderLinkStores(db);
    const real = config.BROKER_MODE === 'real' ? { adapters: createRealAdapters({ db, clock, config, logger, cipher, orderLinks }), keys: createKeyCredentialsReader({ db, cipher }) } : undefined;
    const brokers = createBrokers({ db, clock, simulator, instruments, changes, real });
    // Bars from a user's broker (`ohlcv fetch`), in either broker mode: the real adapters are built on first use outside real mode.
    let fetchAdapters = real?.adapters;
    const barsFetch = createBarsFetch({
      keys: real?.keys ?? createKeyCredentialsReader({ db, cipher }),
      adapters: () => (fetchAdapters ??= createRealAdapters({ db, clock, config, logger, cipher, orderLinks })),
      instruments,
      marketData,
      clock,
    });
    const keys = createExchangeKeys({
      db,
      clock,
      cipher,
      fingerprintSecret: config.AUTH_SECRET_KEY,
      changes,
      rules: {
        brokerEnabled: { us_broker: config.FEATURE_USBROKER_BROKER, kr_broker: config.FEATURE_KRBROKER_BROKER },
        allowLiveKeys: config.ALLOW_LIVE_KEYS,
        allowList: parseAllowList([...DEFAULT_BASE_URLS, ...config.BROKER_BASE_URLS], config.CRYPTO_EXCHANGE_ID),
        cryptoExchanges: cryptoExchangesOf(config),
      },
      brokers: brokers.forKeys,
    });
    const backtestPool = config.BACKTEST_WORKERS > 0 ? createBacktestPool({ size: config.BACKTEST_WORKERS, logger }) : undefined;
    const backtests = createBacktests({ db, clock, config, instruments, pool: backtestPool, poolSize: config.BACKTEST_WORKERS });
    const alerts = createAlerts({ logger, clock, ...alertChannelsFromConfig(config) });
    const suspension = await createLiveSuspension({ db, clock, changes, logger, safetyReloadMs: options.cacheSafetyReloadMs ?? CACHE_SAFETY_RELOAD_MS });
    // A paper order of a simulated account goes into the simulator's books, which share our
    // database (one transaction for the intent, the order and our record of it); every other order
    // (real mode, live orders) commits its intent and then calls its broker.
    const inBooks = inBooksSubmission(simulator);
    const remote = remoteSubmission();
    const submissionFor = ({ mode }: { mode: TTradingMode }) => (!real && mode === 'paper' ? inBooks : remote);
    const orders = createOrders({ db, clock, config, logger, metrics, instruments, forUser: brokers.forUser, alerts, events, submissionFor, liveSuspended: () => suspension.isSuspended(), replayWaitMs: options.replayWaitMs, triggerIdleReloadMs: options.triggerIdleReloadMs });
    const jobs = createJobQueue({ database, logger });
    const analysis = createAnalysis({ db, clock, config, logger, metrics, instruments, jobs, events, llm: llmClientFromConfig(config, clock) });
    const smtp = alertChannelsFromConfig(config).smtp;
    // The confirm token's relay: the alerts' SMTP settings, its own transport (its own recipients).
    const mailer = smtp ? createMailer({ smtp, attemptTimeoutMs: MAIL_TIMEOUT_MS }) : undefined;
    const botCheck = createBotCheck({ secret: config.BOTCHECK_SECRET_KEY, verifyUrl: config.BOTCHECK_VERIFY_URL, logger });
    const promotion = createPromotion({ db, clock, config, logger, alerts, botCheck, mailer, events });
    // Signal webhooks place through the same order service (its gates and idempotency) as REST.
    const signals = createSignals({ db, clock, config, logger, users, instruments, forUser: brokers.forUser, orders });
    const bots = createBots({ db, clock, config, instruments, events, orders, forUser: brokers.forUser });
    // Built in every instance (it only listens until started); the workers start its rounds.
    const botRunner = createBotRunner({ db, clock, config, logger, events, orders, instruments, forUser: brokers.forUser, isHalted: () => halt.isHalted(), holder: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}` });
    // A start or stop made here reaches this instance's runner at once, not at its next round.
    bots.onChange(() => botRunner.kick());
    const live = createLive({ db, clock, config, promotion, suspension, halt, runningBots: () => bots.runningBots(), botOf: (userId) => bots.statusIfAny({ userId }) });
    const killSwitch = createKillSwitch({ db, clock, config, logger, alerts, events, orders, forUser: brokers.forUser, equities: real ? createRealEquities({ keys: real.keys, forUser: brokers.forUser, logger }) : (only) => simulator.accountEquities(only), jobs, mailer });
    // A lock stops the user's bot of that asset class (the kill switch has told the user already).
    killSwitch.onLock((userId, assetClass, lockedUntil) => {
      bots.haltForLock(userId, assetClass, `kill switch: daily loss at or below the limit; locked until ${lockedUntil.toISOString()}`).catch((error: unknown) => logger.error({ err: error, userId, assetClass }, 'could not halt the bot after a lock'));
    });
    // Every broker event of this instance goes to the order service (its fills, statuses, audit);
    // once a fill is recorded, the kill switch looks at that account, off the order's path.
    const takeBrokerEvent = (event: TBrokerEvent) => {
      const applied = orders.ingest(event);
      if (event.fill) void applied.then(() => killSwitch.afterFill({ userId: event.user_id, assetClass: event.asset_class }));
    };
    simulator.onEvent(takeBrokerEvent);
    // Real mode: each active key's broker events, one consumer per account across instances.
    const brokerEvents = real && options.takeBrokerEvents !== false
      ? createBrokerIngestion({ db, clock, logger, changes, holder: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, keys: real.keys, adapters: real.adapters, onEvent: takeBrokerEvent, alongside: orders.watchTriggers, reconcile: (account) => orders.reconcile(account) })
      : undefined;
    await brokerEvents?.start();
    // Prices made here (the walk, an operator's price) reach the /ws/live clients of every instance.
    simulator.onPrice(({ assetClass, symbol, price, at }) => {
      events.publishTick({ assetClass, symbol, price, at }).catch((error: unknown) => logger.warn({ err: error }, 'could not announce a price'));
    });
    // Users' notification channels; the workers start its dispatcher and delivery queue.
    const notifications = createNotifications({ database, clock, config, logger, cipher, jobs, mailer });
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        halt.close();
        suspension.close();
        await notifications.stopWorkers();
        // Signals taken before the server closed get their orders while the brokers still run.
        await signals.idle();
        await jobs.stop(config.SHUTDOWN_TIMEOUT_MS).catch((error: unknown) => logger.warn({ err: error }, 'the job queue did not stop cleanly'));
        await botRunner.stop();
        await simulator.stop();
        await brokerEvents?.stop();
        fetchAdapters?.close();
        await orders.idle();
        await killSwitch.idle();
        await backtestPool?.close();
        await alerts.close();
        mailer?.close();
        await events.close().catch(() => undefined);
        await changes.close().catch(() => undefined);
        await database.close();
      })());
    return { config, logger, metrics, clock, database, db, changes, users, halt, auth, sessions: createSessions({ db, clock }), apiKeys: createApiKeys({ db, clock, users, changes }), instruments, marketData, barsFetch, simulator, brokerEvents, alerts, brokers, keys, orders, events, backtests, jobs, analysis, live, killSwitch, bots, botRunner, audit: createAuditTrail({ db }), notifications, portfolio: createPortfolio({ db, clock, forUser: brokers.forUser }), signals, startedAt: clock.now(), version: VERSION, close };
  } catch (error) {
    await events.close().catch(() => undefined);
    await changes.close().catch(() => undefined);
    throw error;
  }
};

/** Start-up's ADMIN_USERNAME: create the admin when missing; never promote or revive an existing user. */
const bootstrapAdmin = async ({ config, users, logger }: Services) => {
  try {
    const result = await users.bootstrapAdmin({ username: config.ADMIN_USERNAME, password: config.ADMIN_PASSWORD, email: config.ADMIN_EMAIL });
    const fields = { userId: result.user.id, username: result.user.username };
    if (result.outcome === 'created') logger.info(fields, 'admin user created');
    else if (result.outcome === 'exists') logger.info(fields, 'admin user exists');
    else {
      logger.warn(
        { ...fields, reason: result.reason },
        result.reason === 'not_admin'
          ? 'ADMIN_USERNAME names an existing user who is not an admin: left as it is (promote it with `npm run cli -- users create-admin`)'
          : 'ADMIN_USERNAME names a deactivated admin: left deactivated (reactivate it with `npm run cli -- users create-admin`)',
      );
    }
  } catch (error) {
    if (error instanceof AppError && error.code === 'CONFLICT') throw new ConfigError('ADMIN_EMAIL', `${config.ADMIN_EMAIL} belongs to another user; choose another address`);
    throw error;
  }
};

export interface RunningApp {
  services: Services;
  /** The in-process workers, when WORKERS_IN_PROCESS is on. */
  workers: Workers | undefined;
  server: Server;
  /** The WebSocket channels on `server`. */
  channels: WebSocketChannels;
  /** Base URL, e.g. http://127.0.0.1:8000 */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), closes the DB. */
  close(): Promise<void>;
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });

export const startApp = async (config: Config, options: AppOptions = {}): Promise<RunningApp> => {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  const database = await openMigratedDatabase(config, { logger });
  let services: Services;
  try {
    services = await createServices(config, logger, database, options);
  } catch (error) {
    await database.close();
    throw error;
  }

  let workers: Workers | undefined;
  let server: Server | undefined;
  let channels: WebSocketChannels | undefined;
  try {
    if (config.DEMO_DATA) await services.marketData.seedDemoIfEmpty();
    // Intents a crash left without the broker's answer are settled before any request is served.
    await services.orders.reconcile();
    if (config.ADMIN_USERNAME) await bootstrapAdmin(services);
    workers = config.WORKERS_IN_PROCESS ? await startWorkers(services) : undefined;
    server = createHttpServer(appRouter, services);
    channels = attachWebSocketChannels(server, appRouter, services, options.heartbeatClock);
    await listen(server, config.PORT, config.HOST);
  } catch (error) {
    // Nothing started here may outlive a failed start: a port in use must not leave the data dir held.
    await channels?.close();
    server?.close();
    await workers?.stop();
    await services.close();
    throw error;
  }
  const httpServer = server;
  const wsChannels = channels;
  const { port } = httpServer.address() as AddressInfo;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  logger.info({ host: config.HOST, port, db: database.kind }, 'listening');
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  logger.info({ console: `${url}/app/`, docs: `${url}/docs` }, `the web console is at ${url}/app/ and the API's documentation at ${url}/docs`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await wsChannels.close();
      const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      const deadline = setTimeout(() => httpServer.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await stopped;
      clearTimeout(deadline);
      await workers?.stop();
      await services.close();
      logger.info('stopped');
      logger.flush();
    })());

  return { services, workers, server: httpServer, channels: wsChannels, url, port, close };
};
