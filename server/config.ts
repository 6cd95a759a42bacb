// Every setting of the service, read from the environment and validated once, here.
// Nothing else reads process.env. Secrets follow DESIGN §4: generated and kept in DATA_DIR
// outside production, required in production, placeholders always refused.
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { trustProxySetting } from './http/proxy.ts';
import { ZPassword, ZUsername } from '../contracts/auth.ts';
import { CCXT_EXCHANGE_ID } from '../contracts/keys.ts';
import { allowListEntryExchange, parseAllowList } from './keys/allowlist.ts';

export class ConfigError extends Error {
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

const flag = (fallback: boolean) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      ctx.addIssue({ code: 'custom', message: 'expected true, false, 1 or 0' });
      return z.NEVER;
    });

const int = (fallback: number, min: number, max: number) =>
  z.preprocess(
    (value) => (value === undefined || value === '' ? fallback : value),
    z.coerce.number().int().min(min).max(max),
  );

/**
 * A decimal setting kept as exact text (money and rates never go through a binary float): the
 * text must match `form`, and `accept` may bound its value.
 */
const decimalText = (fallback: string, form: RegExp, message: string, accept: (value: number) => boolean = () => true) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value, ctx) => {
      const text = value === undefined || value === '' ? fallback : value;
      if (!form.test(text) || !accept(Number(text))) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return text;
    });

/** A non-negative amount of money. */
const decimalSetting = (fallback: string) => decimalText(fallback, /^\d{1,15}(\.\d{1,8})?$/, 'expected a non-negative decimal number');

/** A percentage in (0, 100]. */
const percentSetting = (fallback: string) =>
  decimalText(fallback, /^\d{1,3}(\.\d{1,6})?$/, 'expected a percentage above 0 and at most 100', (value) => value > 0 && value <= 100);

const text = (fallback = '') =>
  z
    .string()
    .optional()
    .transform((value) => (value === undefined ? fallback : value.trim()));

const list = () =>
  text().transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

// Each area brings its own settings when it lands: nothing here is parsed for code that does not
// exist yet. The feature flags are the exception: /health/flags reports them today.
const ZEnv = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: text('127.0.0.1'),
  PORT: int(8000, 0, 65535),
  DATA_DIR: text('./data'),
  DATABASE_URL: text(),
  DB_POOL_SIZE: int(10, 1, 200),
  /** How long start-up waits for a database that cannot be reached yet (0: not at all). */
  DB_CONNECT_TIMEOUT_SEC: int(60, 0, 3600),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WORKERS_IN_PROCESS: flag(true),
  BODY_LIMIT_BYTES: int(1_048_576, 1024, 64 * 1_048_576),
  /** Calls one tRPC batch may hold, over HTTP and WebSocket; a longer batch is refused whole (422), before any call runs. */
  TRPC_MAX_BATCH_SIZE: int(50, 1, 1_000),
  CORS_ORIGINS: list(),
  TRUST_PROXY: trustProxySetting(),
  METRICS_TOKEN: text(),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 300_000),
  /** The built web console served under /app/ (`npm run build` writes it); empty is client/console/dist. */
  CONSOLE_DIR: text(),

  AUTH_SECRET_KEY: text(),
  ENCRYPTION_SALT: text(),
  LIVE_CONFIRM_SECRET: text(),
  AUTH_ACCESS_TOKEN_TTL_MIN: int(30, 1, 24 * 60),
  /** Seconds, for tests that watch tokens expire (0: the minutes setting holds); refused in production. */
  AUTH_ACCESS_TOKEN_TTL_SEC: int(0, 0, 24 * 3600),
  AUTH_REFRESH_TOKEN_TTL_DAYS: int(7, 1, 365),
  LOGIN_MAX_FAILURES: int(5, 1, 1000),
  LOGIN_WINDOW_MIN: int(15, 1, 24 * 60),
  /** Failed logins from one client address (any username, unknown ones included) per LOGIN_WINDOW_MIN. */
  LOGIN_MAX_FAILURES_PER_ADDRESS: int(50, 1, 1_000_000),
  /** Registrations from one client address per hour. */
  REGISTER_MAX_PER_HOUR: int(20, 1, 1_000_000),
  /** Password hashes (argon2) one process runs at once: libuv's pool of 4 less one, and one core left to the event loop. */
  PASSWORD_HASH_CONCURRENCY: int(Math.max(1, Math.min(3, availableParallelism() - 1)), 1, 64),
  /** Password hashes that may wait for a slot; beyond, the request answers 429 at once. */
  PASSWORD_HASH_MAX_WAITING: int(100, 0, 100_000),
  ADMIN_USERNAME: text(),
  ADMIN_PASSWORD: text(),
  ADMIN_EMAIL: text(),
  DEMO_DATA: flag(true),

  FEATURE_EQUITY_PAPER: flag(true),
  FEATURE_EQUITY_LIVE: flag(false),
  FEATURE_LLM_ANALYSIS: flag(true),
  FEATURE_EQUITY_ANALYSIS: flag(false),
  FEATURE_USBROKER_BROKER: flag(true),
  FEATURE_KRBROKER_BROKER: flag(true),
  ALLOW_LIVE: z
    .string()
    .optional()
    .transform((value) => value?.trim() === '1'),

  /** `simulated`: every key trades on the simulator. `real`: a key's orders go to the broker it names (no crypto adapter yet). */
  BROKER_MODE: z.enum(['simulated', 'real'], { message: "expected 'simulated' or 'real'" }).default('simulated'),
  /** Real mode: one broker REST call's limit. */
  BROKER_TIMEOUT_MS: int(10_000, 500, 120_000),
  /** Real mode: a broker stream silent this long is taken for dead and reconnected. */
  BROKER_STREAM_SILENCE_SEC: int(30, 5, 600),
  /** Real mode: the market data origin of the US broker (latest trades for prices). */
  BROKER_US_DATA_URL: text('https://data.alpaca.markets'),
  /** Real mode: the US broker's market data stream (trade prices); empty: the IEX feed on BROKER_US_DATA_URL's stream host. */
  BROKER_US_DATA_STREAM_URL: text(''),
  /** Real mode: requests a minute per US broker key, shared by every user and path of the key in this instance. */
  BROKER_US_REQUESTS_PER_MIN: int(200, 1, 100_000),
  /** Real mode: requests a second per KR broker key in this instance; 0 is KIS's published limits (2 paper, 20 live). */
  BROKER_KR_REQUESTS_PER_SEC: int(0, 0, 1_000),
  /** Real mode: how often the KR broker's day of orders is read for fills (KIS has no fill stream here). */
  BROKER_KR_POLL_INTERVAL_MS: int(2_000, 200, 600_000),
  /** The ccxt exchange crypto keys naming `crypto_exchange` trade on in real mode. */
  CRYPTO_EXCHANGE_ID: z.string().regex(CCXT_EXCHANGE_ID, 'a ccxt exchange id (lower-case letters and digits), e.g. binance').default('binance'),
  /** The ccxt exchange ids a crypto key may name (comma-separated); CRYPTO_EXCHANGE_ID is always one of them. */
  CRYPTO_EXCHANGE_IDS: list().pipe(z.array(z.string().regex(CCXT_EXCHANGE_ID, 'a comma-separated list of ccxt exchange ids (lower-case letters and digits), e.g. binance,kraken'))),
  BROKER_CRYPTO_REQUESTS_PER_MIN: int(1_200, 1, 100_000),
  BROKER_CRYPTO_POLL_INTERVAL_MS: int(2_000, 200, 600_000),
  /** Real mode: `auto` takes crypto order events from ccxt's watchOrders where the exchange has it (else polls); `poll` always polls. */
  BROKER_CRYPTO_STREAM: z.enum(['auto', 'poll'], { message: "expected 'auto' or 'poll'" }).default('auto'),
  SIM_INITIAL_CASH_USD: decimalSetting('100000'),
  SIM_INITIAL_CASH_USDT: decimalSetting('100000'),
  SIM_INITIAL_CASH_KRW: decimalSetting('100000000'),
  SIM_TICK_INTERVAL_MS: int(1000, 0, 3_600_000),
  /** The most a resting order fills per price tick, in lots of its instrument; 0 is no limit. */
  SIM_LIQUIDITY_LOTS_PER_TICK: int(0, 0, 1_000_000_000),
  /** Extra allowed key origins (`exchange:mode=origin`, comma-separated), added to the brokers' own. */
  BROKER_BASE_URLS: list(),
  /** Registering keys with paper_mode=false; off by default. */
  ALLOW_LIVE_KEYS: flag(false),

  RATE_LIMIT_ORDERS_PER_MIN: int(30, 1, 1_000_000),
  LIVE_DAILY_TRADE_LIMIT: int(10, 0, 1_000_000),
  /** Calls of a user's signal webhooks per minute, all hooks together (each order still counts in RATE_LIMIT_ORDERS_PER_MIN). */
  SIGNAL_WEBHOOK_CALLS_PER_MIN: int(60, 1, 1_000_000),
  RISK_MARKET_HOURS: z.enum(['enforce', 'ignore']).default('enforce'),
  RISK_DEFAULT_STOP_PCT: percentSetting('5'),
  RISK_MAX_RISK_PER_TRADE_PCT: percentSetting('2'),
  /** The risk gate's daily loss bound on new buys (checkDailyLoss, orders/risk.ts); not the kill switch's lines (controls/kill-switch-lines.ts). */
  RISK_DAILY_LOSS_LIMIT_PCT: percentSetting('5'),
  /** Live promotion's paper validation: days since the first paper order of the asset class. */
  RISK_PAPER_MIN_DAYS: int(90, 0, 36_500),
  /** Live promotion's paper validation: filled paper orders of the asset class. */
  RISK_PAPER_MIN_TRADES: int(50, 0, 1_000_000),
  /** The bot check's secret (Turnstile/hCaptcha siteverify); empty skips the check on live enable. */
  BOTCHECK_SECRET_KEY: text(),
  /** Where the bot check is verified (a siteverify endpoint answering {success: bool}). */
  BOTCHECK_VERIFY_URL: text('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  /** The kill switch also sells every position at market when it locks an account. */
  KILL_SWITCH_LIQUIDATE: flag(false),

  /** Worker threads for long backtests; 0 runs every backtest on the event loop. */
  BACKTEST_WORKERS: int(Math.max(1, availableParallelism() - 1), 0, 64),
  /** Backtests of up to this many bars run on the event loop (a handoff to a worker costs more than they do). */
  BACKTEST_INLINE_MAX_BARS: int(5_000, 0, 100_000_000),
  /** Backtests (runs, sweeps, walk-forwards) one user may have under way at once in one instance (429 beyond). */
  BACKTEST_MAX_RUNNING_PER_USER: int(2, 1, 1_000),
  /** The most grid points one backtest sweep may run. */
  BACKTEST_SWEEP_MAX_POINTS: int(200, 1, 1_000),
  /** Closed bars a bot keeps per symbol for its strategy's indicators (and reads back after a restart). */
  BOT_HISTORY_BARS: int(500, 10, 10_000),
  /** How often each instance renews the leases of the bots it runs and takes up newly started ones. */
  BOT_SYNC_INTERVAL_MS: int(2_000, 10, 60_000),
  /** A bot's lease: another instance takes the bot over this long after its holder stopped renewing. */
  BOT_LEASE_TTL_MS: int(15_000, 100, 600_000),
  /** How soon a bot tries again an order the gates refused (a closed market, a full rate window) while its bar is the newest. */
  BOT_RETRY_INTERVAL_MS: int(30_000, 0, 3_600_000),
  /** Seconds between server pings on the WebSocket channels; a client that misses two is dropped. */
  WS_HEARTBEAT_INTERVAL_SEC: int(30, 1, 3_600),
  /** WebSocket connections one user may hold on one instance (1008 beyond). */
  WS_MAX_CONNECTIONS_PER_USER: int(5, 1, 1_000),
  /** Bytes a connection may have waiting to be sent; a reader that falls further behind is closed with 1013. */
  WS_SEND_BUFFER_BYTES: int(1_048_576, 1_024, 1_073_741_824),
  /** Subscriptions one /trpc WebSocket may hold at once; one more is refused (429). */
  WS_MAX_SUBSCRIPTIONS_PER_SOCKET: int(20, 1, 1_000),
  /**
   * Frames one /trpc subscription may hold for a reader that has not taken them, beyond those of
   * its start (its backfill and hello); a reader further behind is closed with 1013.
   */
  WS_MAX_QUEUED_FRAMES: int(1_000, 1, 100_000),
  /** Seconds a /trpc WebSocket has to show a valid token in its connection params; then it is closed (4001). */
  WS_AUTH_TIMEOUT_SEC: int(10, 1, 600),
  /** Hours an event stays in the outbox (how far back last_event_id can resume). */
  EVENTS_RETENTION_HOURS: int(72, 1, 8_760),

  /** Who writes the analysis: deterministic rules (no network, cost 0), or an LLM over HTTP. */
  LLM_PROVIDER: z.enum(['heuristic', 'openai', 'anthropic']).default('heuristic'),
  /** The provider's API root (default: OpenAI's or Anthropic's own); any OpenAI-compatible endpoint works. */
  LLM_BASE_URL: text(),
  LLM_API_KEY: text(),
  /** The model id asked for (default: gpt-4o-mini, or claude-3-5-haiku-latest). */
  LLM_MODEL: text(),
  /** USD per million tokens by model id (JSON: {"model": {"input": 0.15, "output": 0.6}}); a dated id finds its prefix. */
  LLM_MODEL_PRICES: text('{"gpt-4o-mini":{"input":0.15,"output":0.6},"claude-3-5-haiku":{"input":0.8,"output":4}}'),
  /** One LLM call's wall-clock cap, retries included. */
  LLM_TIMEOUT_MS: int(30_000, 100, 600_000),
  /** Retries of a call answered 429 or 5xx (Retry-After honoured). */
  LLM_MAX_RETRIES: int(2, 0, 10),
  /** The cap on one call's answer, in tokens. */
  LLM_MAX_TOKENS_PER_CALL: int(1_024, 16, 100_000),
  /** The cap on one report's tokens, in and out, all calls together. */
  LLM_MAX_TOKENS_PER_REPORT: int(20_000, 100, 10_000_000),
  /** A report's wall-clock cap. */
  ANALYSIS_REPORT_TIMEOUT_MS: int(120_000, 1_000, 3_600_000),
  /** USD a user's reports may cost per UTC day; at or over it, analyze is 429 LLM_BUDGET_EXCEEDED. */
  LLM_DAILY_BUDGET_USD: decimalSetting('5'),
  /** USD all reports together may cost per UTC day. */
  LLM_GLOBAL_DAILY_BUDGET_USD: decimalSetting('100'),
  /** Analyses a user may ask for per minute (a token bucket in the database). */
  RATE_LIMIT_ANALYSES_PER_MIN: int(5, 1, 100_000),
  /** Queued analyses each instance's workers run at once. */
  ANALYSIS_WORKERS: int(2, 1, 64),
  /** Rounds of the bull/bear debate in full mode. */
  ANALYSIS_DEBATE_ROUNDS: int(2, 1, 10),
  /** Daily bars the agents read (the newest, up to the as-of date). */
  ANALYSIS_BARS: int(400, 30, 10_000),

  ALERT_WEBHOOK_URL: text(),
  OPERATOR_EMAILS: list(),
  SMTP_HOST: text(),
  SMTP_PORT: int(587, 1, 65535),
  SMTP_USER: text(),
  SMTP_PASSWORD: text(),
  SMTP_FROM: text(),

  /** Hosts (`host` or `host:port`) every notification channel may reach besides the usual ones (a relay of your own; the tests' fakes). */
  NOTIFY_HOSTS: list().transform((hosts) => hosts.map((host) => host.toLowerCase())),
  /** Webhook channels may reach private, loopback and link-local addresses, and plain http (tests, a closed network). */
  NOTIFY_ALLOW_PRIVATE: flag(false),
  /** Where Telegram's Bot API is (its sendMessage is `<this>/bot<token>/sendMessage`). */
  NOTIFY_TELEGRAM_API_URL: text('https://api.telegram.org'),
  /** Retries of one notification after its first attempt fails (pg-boss, with backoff). */
  NOTIFY_RETRY_LIMIT: int(5, 0, 50),
  /** The first retry's delay in seconds, doubled each retry (0: retry at once, no backoff). */
  NOTIFY_RETRY_DELAY_SEC: int(10, 0, 3_600),
  /** Days a delivered (or given up) notification message is kept, for the channel's history; pruned hourly. */
  NOTIFY_MESSAGES_RETENTION_DAYS: int(30, 1, 3_650),
});

type TEnv = z.infer<typeof ZEnv>;

export type Config = Omit<TEnv, 'AUTH_SECRET_KEY' | 'ENCRYPTION_SALT' | 'LIVE_CONFIRM_SECRET'> & {
  AUTH_SECRET_KEY: string;
  ENCRYPTION_SALT: string;
  LIVE_CONFIRM_SECRET: string;
  /** Absolute DATA_DIR. */
  dataDir: string;
  isProduction: boolean;
  /** What start-up should say once a logger exists (never a secret's value). */
  warnings: string[];
};

/** Where `npm run build` writes the console, beside its sources. */
const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../client/console/dist', import.meta.url));

const PLACEHOLDERS = new Set(['change-me', 'changeme', 'secret', 'your-secret-key', 'please-change-me']);
const GENERATED_SECRETS = ['AUTH_SECRET_KEY', 'ENCRYPTION_SALT'] as const;
type GeneratedSecret = (typeof GENERATED_SECRETS)[number];

const refusePlaceholder = (setting: string, value: string) => {
  if (PLACEHOLDERS.has(value.toLowerCase())) {
    throw new ConfigError(setting, 'is a placeholder value; set a long random secret');
  }
};

/** Reads DATA_DIR/secrets.json, adding any generated secret that is missing. */
const keptSecrets = (dataDir: string, missing: GeneratedSecret[]): Record<GeneratedSecret, string> => {
  const file = path.join(dataDir, 'secrets.json');
  let kept: Partial<Record<GeneratedSecret, string>> = {};
  if (existsSync(file)) {
    try {
      kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<GeneratedSecret, string>>;
    } catch {
      throw new ConfigError('DATA_DIR', `${file} is not valid JSON; fix or remove it`);
    }
  }
  let changed = false;
  for (const name of missing) {
    if (typeof kept[name] !== 'string' || kept[name].length < 32) {
      kept[name] = randomBytes(48).toString('base64url');
      changed = true;
    }
  }
  if (changed) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return kept as Record<GeneratedSecret, string>;
};

/** The rule of the user-facing schema, applied to a setting (the value itself is never echoed). */
const refuseInvalid = (setting: string, schema: z.ZodType, value: string) => {
  const checked = schema.safeParse(value);
  if (!checked.success) throw new ConfigError(setting, checked.error.issues[0]?.message ?? 'invalid value');
};

/** The URL the text names, or undefined where it names none. */
const urlOf = (text: string): URL | undefined => {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
};

/** One address per admin name, so two deployments' admins never collide; `.invalid` never resolves. */
export const defaultAdminEmail = (username: string): string => (username ? `${username.toLowerCase()}@admin.invalid` : '');

export const loadConfig = (env: Record<string, string | undefined> = process.env): Config => {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const setting = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(setting, issue?.message ?? 'invalid value');
  }
  const values = parsed.data;
  const isProduction = values.NODE_ENV === 'production';
  const dataDir = path.resolve(values.DATA_DIR);
  const warnings: string[] = [];

  for (const name of [...GENERATED_SECRETS, 'LIVE_CONFIRM_SECRET', 'BOTCHECK_SECRET_KEY'] as const) {
    if (values[name]) refusePlaceholder(name, values[name]);
  }
  if (values.AUTH_ACCESS_TOKEN_TTL_SEC > 0 && isProduction) {
    throw new ConfigError('AUTH_ACCESS_TOKEN_TTL_SEC', 'is for tests; in production the lifetime is AUTH_ACCESS_TOKEN_TTL_MIN');
  }
  if (values.AUTH_SECRET_KEY && values.AUTH_SECRET_KEY.length < 32) {
    throw new ConfigError('AUTH_SECRET_KEY', 'must be at least 32 characters');
  }

  const missing = GENERATED_SECRETS.filter((name) => !values[name]);
  if (missing.length > 0 && isProduction) {
    throw new ConfigError(missing[0]!, 'is required when NODE_ENV=production');
  }
  const secrets = { AUTH_SECRET_KEY: values.AUTH_SECRET_KEY, ENCRYPTION_SALT: values.ENCRYPTION_SALT };
  if (missing.length > 0) {
    const kept = keptSecrets(dataDir, missing);
    for (const name of missing) secrets[name] = kept[name];
    warnings.push(`${missing.join(', ')} not set: using the generated value kept in ${path.join(dataDir, 'secrets.json')}`);
  }

  if (values.ADMIN_USERNAME) {
    if (!values.ADMIN_PASSWORD) throw new ConfigError('ADMIN_PASSWORD', 'is required when ADMIN_USERNAME is set');
    refuseInvalid('ADMIN_USERNAME', ZUsername, values.ADMIN_USERNAME);
  }
  if (values.ADMIN_PASSWORD) refuseInvalid('ADMIN_PASSWORD', ZPassword, values.ADMIN_PASSWORD);
  if (values.BOTCHECK_SECRET_KEY) {
    const verifyUrl = urlOf(values.BOTCHECK_VERIFY_URL);
    if (!verifyUrl || (verifyUrl.protocol !== 'https:' && verifyUrl.protocol !== 'http:')) throw new ConfigError('BOTCHECK_VERIFY_URL', 'must be an http(s) URL');
  }
  // A lease shorter than two renewal rounds would pass a live bot from instance to instance.
  if (values.BOT_LEASE_TTL_MS < 2 * values.BOT_SYNC_INTERVAL_MS) throw new ConfigError('BOT_LEASE_TTL_MS', `must be at least twice BOT_SYNC_INTERVAL_MS (${values.BOT_SYNC_INTERVAL_MS})`);
  try {
    const dataUrl = new URL(values.BROKER_US_DATA_URL);
    if ((dataUrl.protocol !== 'https:' && dataUrl.protocol !== 'http:') || dataUrl.origin === 'null') throw new Error('not http(s)');
  } catch {
    throw new ConfigError('BROKER_US_DATA_URL', 'must be an http(s) origin');
  }
  if (values.BROKER_US_DATA_STREAM_URL) {
    const streamUrl = urlOf(values.BROKER_US_DATA_STREAM_URL);
    if (!streamUrl || (streamUrl.protocol !== 'wss:' && streamUrl.protocol !== 'ws:')) throw new ConfigError('BROKER_US_DATA_STREAM_URL', 'must be a ws(s) URL, e.g. wss://stream.data.alpaca.markets/v2/sip');
  }
  // CRYPTO_EXCHANGE_ID is allowed whether listed or not: a key naming crypto_exchange trades on it.
  const cryptoExchangeIds = [...new Set([values.CRYPTO_EXCHANGE_ID, ...values.CRYPTO_EXCHANGE_IDS])];
  try {
    parseAllowList(values.BROKER_BASE_URLS, values.CRYPTO_EXCHANGE_ID);
  } catch (error) {
    throw new ConfigError('BROKER_BASE_URLS', (error as Error).message);
  }
  for (const entry of values.BROKER_BASE_URLS) {
    const exchange = allowListEntryExchange(entry);
    if (exchange && exchange !== 'us_broker' && exchange !== 'kr_broker' && exchange !== 'crypto_exchange' && !cryptoExchangeIds.includes(exchange)) {
      throw new ConfigError('BROKER_BASE_URLS', `"${entry.slice(0, 80)}" names ${exchange}, which is not in CRYPTO_EXCHANGE_IDS (${cryptoExchangeIds.join(', ')})`);
    }
  }

  return {
    ...values,
    ...secrets,
    LIVE_CONFIRM_SECRET: values.LIVE_CONFIRM_SECRET || secrets.AUTH_SECRET_KEY,
    ADMIN_EMAIL: values.ADMIN_EMAIL || defaultAdminEmail(values.ADMIN_USERNAME),
    CONSOLE_DIR: values.CONSOLE_DIR ? path.resolve(values.CONSOLE_DIR) : DEFAULT_CONSOLE_DIR,
    CRYPTO_EXCHANGE_IDS: cryptoExchangeIds,
    // Synthetic demo bars: on by default, except in production and in tests (which bring fixtures).
    DEMO_DATA: env.DEMO_DATA === undefined || env.DEMO_DATA.trim() === '' ? values.NODE_ENV === 'development' : values.DEMO_DATA,
    dataDir,
    isProduction,
    warnings,
  };
};
