// loadConfig(env): defaults, parsing of flags and numbers, and the secret rules of DESIGN §4
// (placeholders refused, required in production, generated and kept in DATA_DIR otherwise).
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A DATA_DIR of the test's own. */
const dataDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ts-config-'));
  dirs.push(dir);
  return dir;
};

const KEY = 'k'.repeat(24) + '-auth-secret-key-for-tests';
const SALT = 'an-encryption-salt-for-the-tests';
/** An environment with both secrets set, so nothing is generated. */
const withSecrets = (env: Record<string, string | undefined> = {}) => ({
  DATA_DIR: dataDir(),
  AUTH_SECRET_KEY: KEY,
  ENCRYPTION_SALT: SALT,
  ...env,
});

const configError = (env: Record<string, string | undefined>): ConfigError => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
};

const expectRejected = (env: Record<string, string | undefined>, setting: string) => {
  const error = configError(env);
  expect(error.setting).toBe(setting);
  expect(error.message).toContain(setting);
  return error;
};

describe('defaults', () => {
  it('applies the documented defaults', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir, AUTH_SECRET_KEY: KEY, ENCRYPTION_SALT: SALT });
    expect(config).toMatchObject({
      NODE_ENV: 'development',
      isProduction: false,
      PORT: 8000,
      HOST: '127.0.0.1',
      AUTH_ACCESS_TOKEN_TTL_MIN: 30,
      AUTH_REFRESH_TOKEN_TTL_DAYS: 7,
      LOGIN_MAX_FAILURES: 5,
      LOGIN_WINDOW_MIN: 15,
      LOGIN_MAX_FAILURES_PER_ADDRESS: 50,
      REGISTER_MAX_PER_HOUR: 20,
      PASSWORD_HASH_MAX_WAITING: 100,
      BODY_LIMIT_BYTES: 1_048_576,
      CORS_ORIGINS: [],
      TRUST_PROXY: { mode: 'off' },
      WORKERS_IN_PROCESS: true,
      DATABASE_URL: '',
      ADMIN_EMAIL: '',
      FEATURE_EQUITY_PAPER: true,
      FEATURE_EQUITY_LIVE: false,
      FEATURE_LLM_ANALYSIS: true,
      FEATURE_EQUITY_ANALYSIS: false,
      FEATURE_USBROKER_BROKER: true,
      FEATURE_KRBROKER_BROKER: true,
      ALLOW_LIVE: false,
    });
    expect(config.dataDir).toBe(path.resolve(dir));
    expect(config.warnings).toEqual([]);
  });

  it('resolves a relative DATA_DIR to an absolute path', () => {
    const dir = dataDir();
    const relative = path.relative(process.cwd(), dir);
    expect(loadConfig(withSecrets({ DATA_DIR: relative })).dataDir).toBe(path.resolve(dir));
  });

  it('treats an empty value as unset', () => {
    const config = loadConfig(withSecrets({ PORT: '', FEATURE_EQUITY_LIVE: '', LOGIN_MAX_FAILURES: '' }));
    expect(config.PORT).toBe(8000);
    expect(config.FEATURE_EQUITY_LIVE).toBe(false);
    expect(config.LOGIN_MAX_FAILURES).toBe(5);
  });

  it('reads numbers from their text', () => {
    const config = loadConfig(withSecrets({ PORT: '0', AUTH_ACCESS_TOKEN_TTL_MIN: '5', BODY_LIMIT_BYTES: '2048' }));
    expect(config.PORT).toBe(0);
    expect(config.AUTH_ACCESS_TOKEN_TTL_MIN).toBe(5);
    expect(config.BODY_LIMIT_BYTES).toBe(2048);
  });
});

describe('feature flags', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('accepts %s', (value, expected) => {
    const config = loadConfig(withSecrets({ FEATURE_EQUITY_PAPER: value, FEATURE_EQUITY_LIVE: value }));
    expect(config.FEATURE_EQUITY_PAPER).toBe(expected);
    expect(config.FEATURE_EQUITY_LIVE).toBe(expected);
  });

  it.each(['FEATURE_EQUITY_PAPER', 'FEATURE_LLM_ANALYSIS', 'FEATURE_KRBROKER_BROKER', 'WORKERS_IN_PROCESS'])(
    'rejects %s=yes with a ConfigError naming the setting',
    (setting) => {
      expectRejected(withSecrets({ [setting]: 'yes' }), setting);
    },
  );

  it.each([
    ['1', true],
    [undefined, false],
    ['', false],
    ['0', false],
    ['true', false],
    ['yes', false],
  ])('ALLOW_LIVE=%s is %s: only "1" allows live trading', (value, expected) => {
    expect(loadConfig(withSecrets({ ALLOW_LIVE: value })).ALLOW_LIVE).toBe(expected);
  });
});

describe('numbers out of range', () => {
  it.each([
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', 'abc'],
    ['PORT', '80.5'],
    ['AUTH_ACCESS_TOKEN_TTL_MIN', '0'],
    ['AUTH_REFRESH_TOKEN_TTL_DAYS', '0'],
    ['LOGIN_MAX_FAILURES', '0'],
    ['BODY_LIMIT_BYTES', '10'],
  ])('rejects %s=%s naming the setting', (setting, value) => {
    expectRejected(withSecrets({ [setting]: value }), setting);
  });

  it('the bot’s settings: defaults, bounds, and a lease of at least two sync rounds', () => {
    expect(loadConfig(withSecrets({}))).toMatchObject({ BOT_HISTORY_BARS: 500, BOT_SYNC_INTERVAL_MS: 2_000, BOT_LEASE_TTL_MS: 15_000, BOT_RETRY_INTERVAL_MS: 30_000 });
    expectRejected(withSecrets({ BOT_HISTORY_BARS: '5' }), 'BOT_HISTORY_BARS');
    expectRejected(withSecrets({ BOT_SYNC_INTERVAL_MS: '0' }), 'BOT_SYNC_INTERVAL_MS');
    expect(expectRejected(withSecrets({ BOT_SYNC_INTERVAL_MS: '1000', BOT_LEASE_TTL_MS: '1999' }), 'BOT_LEASE_TTL_MS').message).toContain('twice BOT_SYNC_INTERVAL_MS');
    expect(loadConfig(withSecrets({ BOT_SYNC_INTERVAL_MS: '1000', BOT_LEASE_TTL_MS: '2000' })).BOT_LEASE_TTL_MS).toBe(2000);
  });

  it('accepts the bounds of PORT', () => {
    expect(loadConfig(withSecrets({ PORT: '65535' })).PORT).toBe(65535);
  });

  it('rejects a value outside an enumeration, naming the setting', () => {
    expectRejected(withSecrets({ NODE_ENV: 'staging' }), 'NODE_ENV');
    expectRejected(withSecrets({ LOG_LEVEL: 'loud' }), 'LOG_LEVEL');
  });
});

describe('secrets: placeholders', () => {
  const placeholders = ['change-me', 'changeme', 'secret', 'your-secret-key', 'please-change-me', 'CHANGE-ME', 'Secret', 'Your-Secret-Key', ' ChangeMe '];
  const settings = ['AUTH_SECRET_KEY', 'ENCRYPTION_SALT', 'LIVE_CONFIRM_SECRET'];
  const cases = settings.flatMap((setting) => placeholders.map((value) => [setting, value] as const));

  it.each(cases)('%s=%j is refused with a ConfigError naming the setting', (setting, value) => {
    const dir = dataDir();
    const error = expectRejected(withSecrets({ DATA_DIR: dir, [setting]: value }), setting);
    expect(error.name).toBe('ConfigError');
    // Refused before anything is generated.
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(false);
  });

  it('refuses a placeholder even when the other secret is missing', () => {
    expectRejected({ DATA_DIR: dataDir(), ENCRYPTION_SALT: 'secret' }, 'ENCRYPTION_SALT');
  });

  it('refuses an AUTH_SECRET_KEY shorter than 32 characters and accepts 32', () => {
    expectRejected(withSecrets({ AUTH_SECRET_KEY: 'x'.repeat(31) }), 'AUTH_SECRET_KEY');
    expect(loadConfig(withSecrets({ AUTH_SECRET_KEY: 'x'.repeat(32) })).AUTH_SECRET_KEY).toBe('x'.repeat(32));
  });

  it('does not put the refused value in the message', () => {
    const short = 'short-but-real-secret-value';
    expect(configError(withSecrets({ AUTH_SECRET_KEY: short })).message).not.toContain(short);
  });
});

describe('secrets: production', () => {
  it('requires AUTH_SECRET_KEY', () => {
    const dir = dataDir();
    expectRejected({ NODE_ENV: 'production', DATA_DIR: dir, ENCRYPTION_SALT: SALT }, 'AUTH_SECRET_KEY');
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(false);
  });

  it('requires ENCRYPTION_SALT', () => {
    const dir = dataDir();
    expectRejected({ NODE_ENV: 'production', DATA_DIR: dir, AUTH_SECRET_KEY: KEY }, 'ENCRYPTION_SALT');
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(false);
  });

  it('ignores a secrets.json left in DATA_DIR', () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, 'secrets.json'), JSON.stringify({ AUTH_SECRET_KEY: KEY, ENCRYPTION_SALT: SALT }));
    expectRejected({ NODE_ENV: 'production', DATA_DIR: dir }, 'AUTH_SECRET_KEY');
  });

  it('refuses the test-only access-token lifetime in seconds', () => {
    expectRejected(withSecrets({ NODE_ENV: 'production', AUTH_ACCESS_TOKEN_TTL_SEC: '5' }), 'AUTH_ACCESS_TOKEN_TTL_SEC');
    expect(loadConfig(withSecrets({ NODE_ENV: 'test', AUTH_ACCESS_TOKEN_TTL_SEC: '5' })).AUTH_ACCESS_TOKEN_TTL_SEC).toBe(5);
  });

  it('starts with both secrets set and no warning', () => {
    const config = loadConfig(withSecrets({ NODE_ENV: 'production' }));
    expect(config.isProduction).toBe(true);
    expect(config.AUTH_SECRET_KEY).toBe(KEY);
    expect(config.ENCRYPTION_SALT).toBe(SALT);
    expect(config.warnings).toEqual([]);
  });
});

describe('secrets: generated outside production', () => {
  it.each(['development', 'test'])('NODE_ENV=%s generates missing secrets into DATA_DIR/secrets.json (0600) and keeps them', (nodeEnv) => {
    const dir = dataDir();
    const first = loadConfig({ NODE_ENV: nodeEnv, DATA_DIR: dir });
    const file = path.join(dir, 'secrets.json');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.AUTH_SECRET_KEY.length).toBeGreaterThanOrEqual(32);
    expect(first.ENCRYPTION_SALT.length).toBeGreaterThanOrEqual(32);
    expect(first.AUTH_SECRET_KEY).not.toBe(first.ENCRYPTION_SALT);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      AUTH_SECRET_KEY: first.AUTH_SECRET_KEY,
      ENCRYPTION_SALT: first.ENCRYPTION_SALT,
    });

    const second = loadConfig({ NODE_ENV: nodeEnv, DATA_DIR: dir });
    expect(second.AUTH_SECRET_KEY).toBe(first.AUTH_SECRET_KEY);
    expect(second.ENCRYPTION_SALT).toBe(first.ENCRYPTION_SALT);
  });

  it('returns a warning that names the settings but never holds a secret value', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config.warnings).toHaveLength(1);
    const [warning] = config.warnings;
    expect(warning).toContain('AUTH_SECRET_KEY');
    expect(warning).toContain('ENCRYPTION_SALT');
    expect(warning).toContain('secrets.json');
    expect(warning).not.toContain(config.AUTH_SECRET_KEY);
    expect(warning).not.toContain(config.ENCRYPTION_SALT);
    // The second start warns again (the value is still generated), still without the value.
    const again = loadConfig({ DATA_DIR: dir });
    expect(again.warnings.join('\n')).not.toContain(again.AUTH_SECRET_KEY);
  });

  it('generates only the missing secret and never writes a provided one to the file', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir, AUTH_SECRET_KEY: KEY });
    expect(config.AUTH_SECRET_KEY).toBe(KEY);
    expect(config.ENCRYPTION_SALT.length).toBeGreaterThanOrEqual(32);
    const text = readFileSync(path.join(dir, 'secrets.json'), 'utf8');
    expect(text).not.toContain(KEY);
    expect(config.warnings.join('\n')).toContain('ENCRYPTION_SALT');
    expect(config.warnings.join('\n')).not.toContain('AUTH_SECRET_KEY');
  });

  it('a provided secret wins over a kept one', () => {
    const dir = dataDir();
    const generated = loadConfig({ DATA_DIR: dir });
    const provided = loadConfig({ DATA_DIR: dir, AUTH_SECRET_KEY: KEY });
    expect(provided.AUTH_SECRET_KEY).toBe(KEY);
    expect(provided.ENCRYPTION_SALT).toBe(generated.ENCRYPTION_SALT);
  });

  it('writes nothing when both secrets are set', () => {
    const dir = dataDir();
    loadConfig(withSecrets({ DATA_DIR: dir }));
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(false);
  });

  it('creates a DATA_DIR that does not exist yet', () => {
    const dir = path.join(dataDir(), 'nested', 'data');
    const config = loadConfig({ DATA_DIR: dir });
    expect(existsSync(path.join(dir, 'secrets.json'))).toBe(true);
    expect(config.dataDir).toBe(dir);
  });

  it('refuses a secrets.json that is not JSON, naming DATA_DIR', () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, 'secrets.json'), '{not json');
    expectRejected({ DATA_DIR: dir }, 'DATA_DIR');
  });
});

describe('LIVE_CONFIRM_SECRET', () => {
  it.each([undefined, ''])('falls back to AUTH_SECRET_KEY when %j', (value) => {
    expect(loadConfig(withSecrets({ LIVE_CONFIRM_SECRET: value })).LIVE_CONFIRM_SECRET).toBe(KEY);
  });

  it('falls back to the generated AUTH_SECRET_KEY and is never generated itself', () => {
    const dir = dataDir();
    const config = loadConfig({ DATA_DIR: dir });
    expect(config.LIVE_CONFIRM_SECRET).toBe(config.AUTH_SECRET_KEY);
    expect(Object.keys(JSON.parse(readFileSync(path.join(dir, 'secrets.json'), 'utf8')))).not.toContain('LIVE_CONFIRM_SECRET');
  });

  it('is not required in production', () => {
    expect(loadConfig(withSecrets({ NODE_ENV: 'production' })).LIVE_CONFIRM_SECRET).toBe(KEY);
  });

  it('keeps its own value when set', () => {
    const own = 'a-separate-live-confirmation-secret';
    expect(loadConfig(withSecrets({ LIVE_CONFIRM_SECRET: own })).LIVE_CONFIRM_SECRET).toBe(own);
  });
});

describe('CORS_ORIGINS', () => {
  it('parses a comma list, trimming blanks and dropping empty items', () => {
    const config = loadConfig(withSecrets({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ,, ' }));
    expect(config.CORS_ORIGINS).toEqual(['https://app.example.com', 'http://localhost:5173']);
  });

  it('is empty when unset or blank', () => {
    expect(loadConfig(withSecrets()).CORS_ORIGINS).toEqual([]);
    expect(loadConfig(withSecrets({ CORS_ORIGINS: '  ' })).CORS_ORIGINS).toEqual([]);
  });

  it('reads a single origin', () => {
    expect(loadConfig(withSecrets({ CORS_ORIGINS: 'https://one.example' })).CORS_ORIGINS).toEqual(['https://one.example']);
  });
});

describe('first admin', () => {
  it('requires ADMIN_PASSWORD when ADMIN_USERNAME is set', () => {
    expectRejected(withSecrets({ ADMIN_USERNAME: 'boss_user' }), 'ADMIN_PASSWORD');
  });

  it('refuses an ADMIN_PASSWORD shorter than 8 characters', () => {
    expectRejected(withSecrets({ ADMIN_USERNAME: 'boss_user', ADMIN_PASSWORD: 'short' }), 'ADMIN_PASSWORD');
  });

  it('derives ADMIN_EMAIL from the username, so two admins never share one', () => {
    const first = loadConfig(withSecrets({ ADMIN_USERNAME: 'Boss_User', ADMIN_PASSWORD: 'a-long-password' }));
    const second = loadConfig(withSecrets({ ADMIN_USERNAME: 'other_boss', ADMIN_PASSWORD: 'a-long-password' }));
    expect(first.ADMIN_EMAIL).toBe('boss_user@admin.invalid');
    expect(second.ADMIN_EMAIL).toBe('other_boss@admin.invalid');
  });

  it('applies the API rules to ADMIN_USERNAME and ADMIN_PASSWORD, naming the setting', () => {
    expect(() => loadConfig(withSecrets({ ADMIN_USERNAME: 'no spaces', ADMIN_PASSWORD: 'a-long-password' }))).toThrow(/^ADMIN_USERNAME: /);
    expect(() => loadConfig(withSecrets({ ADMIN_USERNAME: 'ab', ADMIN_PASSWORD: 'a-long-password' }))).toThrow(/^ADMIN_USERNAME: /);
    expect(() => loadConfig(withSecrets({ ADMIN_USERNAME: 'boss_user', ADMIN_PASSWORD: 'short' }))).toThrow(/^ADMIN_PASSWORD: /);
  });
});

describe('settings of instruments, market data and the simulator', () => {
  it('DEMO_DATA defaults on in development only, and follows an explicit value', () => {
    expect(loadConfig(withSecrets()).DEMO_DATA).toBe(true);
    expect(loadConfig(withSecrets({ NODE_ENV: 'test' })).DEMO_DATA).toBe(false);
    expect(loadConfig(withSecrets({ NODE_ENV: 'production' })).DEMO_DATA).toBe(false);
    expect(loadConfig(withSecrets({ NODE_ENV: 'production', DEMO_DATA: 'true' })).DEMO_DATA).toBe(true);
    expect(loadConfig(withSecrets({ DEMO_DATA: 'false' })).DEMO_DATA).toBe(false);
    expectRejected(withSecrets({ DEMO_DATA: 'yes' }), 'DEMO_DATA');
  });

  it('keeps starting cash as exact decimal text and refuses anything else', () => {
    expect(loadConfig(withSecrets({ SIM_INITIAL_CASH_KRW: '5000000.25' })).SIM_INITIAL_CASH_KRW).toBe('5000000.25');
    expect(loadConfig(withSecrets()).SIM_INITIAL_CASH_USDT).toBe('100000');
    for (const value of ['-1', '1e6', 'abc', '0x10']) expectRejected(withSecrets({ SIM_INITIAL_CASH_USD: value }), 'SIM_INITIAL_CASH_USD');
  });

  it('keeps risk percentages as exact text within (0, 100], refusing anything else', () => {
    expect(loadConfig(withSecrets({ RISK_MAX_RISK_PER_TRADE_PCT: '2.5' })).RISK_MAX_RISK_PER_TRADE_PCT).toBe('2.5');
    expect(loadConfig(withSecrets()).RISK_DAILY_LOSS_LIMIT_PCT).toBe('5');
    for (const value of ['0', '100.5', '-1', 'abc', '1e1']) expectRejected(withSecrets({ RISK_DEFAULT_STOP_PCT: value }), 'RISK_DEFAULT_STOP_PCT');
  });

  it('takes the simulated (default) or real broker mode, and bounds the real brokers\' settings', () => {
    const defaults = loadConfig(withSecrets());
    expect(defaults).toMatchObject({ BROKER_MODE: 'simulated', BROKER_TIMEOUT_MS: 10_000, BROKER_STREAM_SILENCE_SEC: 30, BROKER_US_REQUESTS_PER_MIN: 200, BROKER_KR_REQUESTS_PER_SEC: 0, BROKER_KR_POLL_INTERVAL_MS: 2_000, BROKER_US_DATA_URL: 'https://data.alpaca.markets' });
    expect(loadConfig(withSecrets({ BROKER_MODE: 'real' })).BROKER_MODE).toBe('real');
    expectRejected(withSecrets({ BROKER_MODE: 'live' }), 'BROKER_MODE');
    expectRejected(withSecrets({ BROKER_TIMEOUT_MS: '10' }), 'BROKER_TIMEOUT_MS');
    expectRejected(withSecrets({ BROKER_STREAM_SILENCE_SEC: '0' }), 'BROKER_STREAM_SILENCE_SEC');
    expectRejected(withSecrets({ BROKER_US_REQUESTS_PER_MIN: '0' }), 'BROKER_US_REQUESTS_PER_MIN');
    expectRejected(withSecrets({ BROKER_KR_REQUESTS_PER_SEC: '-1' }), 'BROKER_KR_REQUESTS_PER_SEC');
    expectRejected(withSecrets({ BROKER_KR_POLL_INTERVAL_MS: '10' }), 'BROKER_KR_POLL_INTERVAL_MS');
    expect(defaults).toMatchObject({ CRYPTO_EXCHANGE_ID: 'binance', BROKER_CRYPTO_REQUESTS_PER_MIN: 1_200, BROKER_CRYPTO_POLL_INTERVAL_MS: 2_000, BROKER_CRYPTO_STREAM: 'auto' });
    expect(loadConfig(withSecrets({ BROKER_CRYPTO_STREAM: 'poll' })).BROKER_CRYPTO_STREAM).toBe('poll');
    expectRejected(withSecrets({ BROKER_CRYPTO_STREAM: 'websocket' }), 'BROKER_CRYPTO_STREAM');
    expect(loadConfig(withSecrets({ CRYPTO_EXCHANGE_ID: 'kraken' })).CRYPTO_EXCHANGE_ID).toBe('kraken');
    expectRejected(withSecrets({ CRYPTO_EXCHANGE_ID: 'Binance US' }), 'CRYPTO_EXCHANGE_ID');
    expectRejected(withSecrets({ BROKER_CRYPTO_POLL_INTERVAL_MS: '10' }), 'BROKER_CRYPTO_POLL_INTERVAL_MS');
    expectRejected(withSecrets({ BROKER_US_DATA_URL: 'ftp://data.example' }), 'BROKER_US_DATA_URL');
    expect(defaults.BROKER_US_DATA_STREAM_URL).toBe('');
    expect(loadConfig(withSecrets({ BROKER_US_DATA_STREAM_URL: 'wss://stream.data.alpaca.markets/v2/sip' })).BROKER_US_DATA_STREAM_URL).toBe('wss://stream.data.alpaca.markets/v2/sip');
    expectRejected(withSecrets({ BROKER_US_DATA_STREAM_URL: 'https://stream.data.alpaca.markets/v2/sip' }), 'BROKER_US_DATA_STREAM_URL');
  });

  it('checks BROKER_BASE_URLS entries, naming the setting', () => {
    expect(loadConfig(withSecrets({ BROKER_BASE_URLS: 'us_broker:paper=http://127.0.0.1:9000' })).BROKER_BASE_URLS).toEqual(['us_broker:paper=http://127.0.0.1:9000']);
    for (const value of ['us_broker=http://x', 'bank:paper=http://x', 'us_broker:paper=not a url']) expectRejected(withSecrets({ BROKER_BASE_URLS: value }), 'BROKER_BASE_URLS');
    // Crypto entries are per ccxt exchange id, one the service allows (crypto_exchange: CRYPTO_EXCHANGE_ID).
    expect(loadConfig(withSecrets({ BROKER_BASE_URLS: 'binance:paper=http://127.0.0.1:9000,crypto_exchange:live=https://x.example' })).BROKER_BASE_URLS).toHaveLength(2);
    expect(loadConfig(withSecrets({ CRYPTO_EXCHANGE_IDS: 'kraken', BROKER_BASE_URLS: 'kraken:paper=http://127.0.0.1:9000' })).BROKER_BASE_URLS).toHaveLength(1);
    expectRejected(withSecrets({ BROKER_BASE_URLS: 'kraken:paper=http://127.0.0.1:9000' }), 'BROKER_BASE_URLS');
  });

  it('allows crypto keys CRYPTO_EXCHANGE_ID and the ids of CRYPTO_EXCHANGE_IDS, each a ccxt id in form', () => {
    expect(loadConfig(withSecrets()).CRYPTO_EXCHANGE_IDS).toEqual(['binance']);
    expect(loadConfig(withSecrets({ CRYPTO_EXCHANGE_IDS: ' kraken, binance ,okx' })).CRYPTO_EXCHANGE_IDS).toEqual(['binance', 'kraken', 'okx']);
    // CRYPTO_EXCHANGE_ID is added when the list leaves it out.
    expect(loadConfig(withSecrets({ CRYPTO_EXCHANGE_ID: 'kraken', CRYPTO_EXCHANGE_IDS: 'binance' })).CRYPTO_EXCHANGE_IDS).toEqual(['kraken', 'binance']);
    for (const value of ['Kraken', 'binance,crypto_exchange', 'binance us']) expectRejected(withSecrets({ CRYPTO_EXCHANGE_IDS: value }), 'CRYPTO_EXCHANGE_IDS');
  });

  it('reads the live promotion and kill switch settings, refusing a placeholder bot-check secret and a verify URL that is not http(s)', () => {
    const defaults = loadConfig(withSecrets({}));
    expect([defaults.RISK_PAPER_MIN_DAYS, defaults.RISK_PAPER_MIN_TRADES, defaults.BOTCHECK_SECRET_KEY, defaults.KILL_SWITCH_LIQUIDATE]).toEqual([90, 50, '', false]);
    expect(defaults.BOTCHECK_VERIFY_URL).toBe('https://challenges.cloudflare.com/turnstile/v0/siteverify');
    expect(loadConfig(withSecrets({ KILL_SWITCH_LIQUIDATE: 'true', RISK_PAPER_MIN_DAYS: '0' }))).toMatchObject({ KILL_SWITCH_LIQUIDATE: true, RISK_PAPER_MIN_DAYS: 0 });
    expectRejected(withSecrets({ BOTCHECK_SECRET_KEY: 'changeme' }), 'BOTCHECK_SECRET_KEY');
    expectRejected(withSecrets({ BOTCHECK_SECRET_KEY: 'a-real-secret-value', BOTCHECK_VERIFY_URL: 'ftp://example.com/verify' }), 'BOTCHECK_VERIFY_URL');
    expectRejected(withSecrets({ RISK_PAPER_MIN_TRADES: '-1' }), 'RISK_PAPER_MIN_TRADES');
  });
});
