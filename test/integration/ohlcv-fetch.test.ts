// `ohlcv fetch`: daily bars from the broker of a user's key, imported as a file's would be, against
// the fakes on 127.0.0.1 (Alpaca's data API with its page tokens, KIS's daily chart in pages of
// 100, Binance's klines through ccxt), in simulated broker mode (reading bars places nothing).
// The command's refusals run in-process on the running service; the last test runs the command
// itself once, as an operator would, on the same database (a child process that loads the whole
// service: seconds of CPU, so one run, not one per case).
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { ohlcvFetch } from '../../server/cli-commands.ts';
import { CommandError } from '../../server/entry.ts';
import { TEST_NODE_FLAGS } from '../support/child-node.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { createTestDatabase, dataDirFromTemplate, startTestServer, tempDir, type TestServer } from '../support/server.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const alpacaKey = { keyId: `PKBARS${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };
const kisKey = { appKey: `PSBARS${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000009', productCode: '01' };
const binanceKey = { apiKey: `bnbars${randomBytes(6).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };

let alpaca: FakeAlpaca;
let kis: FakeKis;
let binance: FakeBinance;
let server: TestServer;
/** The service's data, kept past its stop for the command's run (and removed after). */
let database: { url: string; drop: () => Promise<void> };
let dataDir: string;
let alice: FactoryUser;
let keyless: FactoryUser;

const DAY = 86_400_000;

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...alpacaKey, cash: '100000' }], prices: { AAPL: '200' } });
  kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { '005930': '70000' } });
  binance = await startFakeBinance({ accounts: [{ ...binanceKey, balances: { USDT: '1000' } }], prices: { BTCUSDT: '50000' } });
  // 150 KIS trading days from 2025-01-01 (two pages of 100 on the wire).
  kis.setBars(
    '005930',
    Array.from({ length: 150 }, (_, index) => {
      const date = new Date(Date.UTC(2025, 0, 1) + index * DAY).toISOString().slice(0, 10).replaceAll('-', '');
      return { stck_bsop_date: date, stck_oprc: String(70000 + index), stck_hgpr: String(71000 + index), stck_lwpr: String(69000 + index), stck_clpr: String(70500 + index), acml_vol: String(1000 + index), acml_tr_pbmn: '0' };
    }),
  );
  // 800 UTC days of BTC/USDT klines from 2023-01-01 (two of ccxt's pages of 500).
  binance.setBars(
    'BTCUSDT',
    Array.from({ length: 800 }, (_, index) => {
      const open = Date.UTC(2023, 0, 1) + index * DAY;
      return [open, String(20000 + index), String(20100 + index), String(19900 + index), String(20050 + index), '12.5', open + DAY - 1, '0', 100, '0', '0', '0'];
    }),
  );
  dataDir = process.env.DATABASE_URL ? tempDir() : dataDirFromTemplate();
  database = await createTestDatabase();
  server = await startTestServer(
    {
      BROKER_BASE_URLS: `us_broker:paper=${alpaca.url},kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url}`,
      BROKER_US_DATA_URL: alpaca.url,
    },
    { dataDir, databaseUrl: database.url },
  );
  alice = await newUser(server, { prefix: 'bars_alice' });
  keyless = await newUser(server, { prefix: 'bars_keyless' });
  const keys = [
    { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true, api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url },
    { asset_class: 'kr_equity', exchange: 'kr_broker', paper_mode: true, api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url, account_no: `${kisKey.accountNo}-${kisKey.productCode}`, account_product_code: kisKey.productCode },
    { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, api_key: binanceKey.apiKey, api_secret: binanceKey.secret, base_url: binance.url },
  ];
  for (const key of keys) {
    const created = await server.http('POST', '/api/exchange-keys', { token: alice.tokens.access_token, body: key });
    expect(created.status, created.text).toBe(201);
  }
});
afterAll(async () => {
  await server?.stop();
  await database?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await Promise.all([alpaca?.close(), kis?.close(), binance?.close()]);
});

const stored = async (assetClass: string, symbol: string, from: string, to: string) => {
  const res = await server.http('GET', `/api/market-data/ohlcv?asset_class=${assetClass}&symbol=${encodeURIComponent(symbol)}&from=${from}&to=${to}`, { token: alice.tokens.access_token });
  expect(res.status, res.text).toBe(200);
  return res.body as { bars: { date: string; open: number; close: number; volume: number }[] };
};

describe('ohlcv fetch from the broker of a user’s key', () => {
  it('imports a US stock’s daily bars from Alpaca’s data API, across its pages, weekdays only', async () => {
    const result = await server.services.barsFetch({ userId: alice.user.id, assetClass: 'us_equity', symbol: 'aapl', from: '2021-01-01', to: '2025-06-30' });
    // 1,172 weekdays: two pages of 1,000 on the wire.
    expect(result).toMatchObject({ asset_class: 'us_equity', symbol: 'AAPL', imported: 1172, first_date: '2021-01-01', last_date: '2025-06-30' });
    expect(alpaca.requests.filter((request) => request.url.startsWith('/v2/stocks/AAPL/bars')).length).toBeGreaterThanOrEqual(2);
    const { bars } = await stored('us_equity', 'AAPL', '2025-06-23', '2025-06-27');
    expect(bars.map((bar) => bar.date)).toEqual(['2025-06-23', '2025-06-24', '2025-06-25', '2025-06-26', '2025-06-27']);
  });

  it('imports a KRX stock’s daily bars from KIS’s daily chart, walked back across pages of 100', async () => {
    const result = await server.services.barsFetch({ userId: alice.user.id, assetClass: 'kr_equity', symbol: 'KRX:005930', from: '2025-01-01', to: '2025-12-31' });
    expect(result).toMatchObject({ asset_class: 'kr_equity', symbol: '005930', imported: 150, first_date: '2025-01-01', last_date: '2025-05-30' });
    const { bars } = await stored('kr_equity', '005930', '2025-01-01', '2025-01-02');
    expect(bars).toEqual([expect.objectContaining({ date: '2025-01-01', open: 70000, close: 70500 }), expect.objectContaining({ date: '2025-01-02', open: 70001, close: 70501 })]);
  });

  it('imports a crypto pair’s daily bars from the exchange’s OHLCV through ccxt, across its pages, within the dates asked', async () => {
    const result = await server.services.barsFetch({ userId: alice.user.id, assetClass: 'crypto', symbol: 'BTC-USDT', from: '2023-01-11', to: '2025-02-28' });
    // 2023-01-11 .. 2025-03-10 are on the exchange (800 days); the range stops at 2025-02-28.
    expect(result).toMatchObject({ asset_class: 'crypto', symbol: 'BTC/USDT', imported: 780, first_date: '2023-01-11', last_date: '2025-02-28' });
    const { bars } = await stored('crypto', 'BTC/USDT', '2023-01-11', '2023-01-11');
    expect(bars).toEqual([expect.objectContaining({ date: '2023-01-11', open: 20010, close: 20060, volume: 12.5 })]);
  });

  it('refuses what it cannot fetch: no key, an unknown symbol, dates out of order, a venue with no bars then', async () => {
    await expect(server.services.barsFetch({ userId: keyless.user.id, assetClass: 'us_equity', symbol: 'AAPL', from: '2025-01-01', to: '2025-01-31' })).rejects.toMatchObject({ code: 'BROKER_NOT_CONFIGURED' });
    await expect(server.services.barsFetch({ userId: alice.user.id, assetClass: 'us_equity', symbol: 'NOPEX', from: '2025-01-01', to: '2025-01-31' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(server.services.barsFetch({ userId: alice.user.id, assetClass: 'us_equity', symbol: 'AAPL', from: '2025-02-01', to: '2025-01-31' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    // Not a calendar date, though Date.parse takes it (as 2 March).
    await expect(server.services.barsFetch({ userId: alice.user.id, assetClass: 'us_equity', symbol: 'AAPL', from: '2025-02-01', to: '2025-02-30' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'to' }] });
    await expect(server.services.barsFetch({ userId: alice.user.id, assetClass: 'kr_equity', symbol: '005930', from: '2019-01-01', to: '2019-12-31' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('as the operator’s command, refuses a bad end date, an unknown user and a user without a key, naming each and no secret', async () => {
    const refusal = async (values: Parameters<typeof ohlcvFetch>[1]) => {
      const error = await ohlcvFetch(server.services, values).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(CommandError);
      return (error as CommandError).message;
    };
    // A bad end date with the start left out: refused naming it, not a crash working out the start.
    const badTo = await refusal({ symbol: 'AAPL', 'asset-class': 'us_equity', user: alice.user.username, to: 'soon' });
    expect(badTo).toContain('to: must be a date, YYYY-MM-DD');
    expect(badTo).not.toContain('RangeError');
    expect(await refusal({ symbol: 'AAPL', 'asset-class': 'us_equity', user: 'no_such_user' })).toContain('no user named no_such_user');
    const noKey = await refusal({ symbol: 'AAPL', 'asset-class': 'us_equity', user: keyless.user.username });
    expect(noKey).toContain('no active us_equity key');
    for (const secret of [alpacaKey.secretKey, kisKey.appSecret, binanceKey.secret]) expect(`${badTo}${noKey}`).not.toContain(secret);
  });

  // One child process that loads the whole service: a bound for a loaded machine, not a race.
  it('runs as the operator’s command: npm run cli -- ohlcv fetch', { timeout: 180_000 }, async () => {
    // PGlite admits one process: the service lets go of the database first.
    await server.stop();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      AUTH_SECRET_KEY: server.config.AUTH_SECRET_KEY,
      ENCRYPTION_SALT: server.config.ENCRYPTION_SALT,
      BROKER_US_DATA_URL: alpaca.url,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    };
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [...TEST_NODE_FLAGS, 'server/cli.ts', 'ohlcv', 'fetch', ...args], { cwd: REPO, env, timeout: 170_000 }, (error, stdout, stderr) => {
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
        });
      });
    const ok = await run(['--symbol', 'AAPL', '--asset-class', 'us_equity', '--user', alice.user.username, '--from', '2025-07-01', '--to', '2025-07-04']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('imported 4 bars of us_equity AAPL (2025-07-01 .. 2025-07-04)');
    for (const secret of [alpacaKey.secretKey, kisKey.appSecret, binanceKey.secret]) expect(`${ok.stdout}${ok.stderr}`).not.toContain(secret);
  });
});
