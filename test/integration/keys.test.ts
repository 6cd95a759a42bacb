// /api/exchange-keys over HTTP: registration rules, masks, the allow-list, per-broker switches,
// crypto keys naming their own exchange,
// ownership, the dry-run test against the simulated account, encryption at rest, and logs that
// never hold a key or a secret.
import { rmSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, exchangeKeys } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { capturedLogger } from '../support/logs.ts';
import { createTestDatabase, startTestServer, dataDirFromTemplate, type TestServer } from '../support/server.ts';

const FAKE_ORIGIN = 'http://127.0.0.1:9';
// Crypto keys may name binance (CRYPTO_EXCHANGE_ID, by default) or kraken.
const env = { FEATURE_USBROKER_BROKER: 'false', BROKER_BASE_URLS: `kr_broker:paper=${FAKE_ORIGIN},kraken:paper=${FAKE_ORIGIN}`, CRYPTO_EXCHANGE_IDS: 'kraken', SIM_TICK_INTERVAL_MS: '0' };
const captured = capturedLogger('debug');
let server: TestServer;
let alice: FactoryUser;
let bob: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ ...env, LOG_LEVEL: 'debug' }, undefined, { logger: captured.logger });
  alice = await newUser(server, { prefix: 'keys_alice' });
  bob = await newUser(server, { prefix: 'keys_bob' });
});
afterAll(() => server.stop());

let counter = 0;
const secretPair = () => ({ api_key: `AKIA-${process.pid}-${++counter}-PUBLICKEY`, api_secret: `s3cr3t-${process.pid}-${counter}-PRIVATE` });
const as = (user: FactoryUser) => ({
  create: (body: unknown) => server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body }),
  list: (query = '') => server.http('GET', `/api/exchange-keys${query}`, { token: user.tokens.access_token }),
  patch: (id: number | string, body: unknown) => server.http('PATCH', `/api/exchange-keys/${id}`, { token: user.tokens.access_token, body }),
  remove: (id: number | string) => server.http('DELETE', `/api/exchange-keys/${id}`, { token: user.tokens.access_token }),
  test: (body: unknown) => server.http('POST', '/api/exchange-keys/test', { token: user.tokens.access_token, body }),
});
const kr = { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01' };

describe('POST /api/exchange-keys', () => {
  it('registers a crypto key by default (201) with masks and defaults; the key and secret are stored encrypted only', async () => {
    const pair = secretPair();
    const res = await as(alice).create({ exchange: 'crypto_exchange', ...pair });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      asset_class: 'crypto',
      exchange: 'crypto_exchange',
      label: 'default',
      permissions: 'trade_only',
      is_active: true,
      paper_mode: true,
      api_key_masked: `${pair.api_key.slice(0, 4)}...${pair.api_key.slice(-4)}`,
      account_no_masked: null,
      account_product_code: null,
      created_at: expect.any(String),
    });
    expect(res.text).not.toContain(pair.api_secret);
    const [row] = await server.services.db.select().from(exchangeKeys).where(eq(exchangeKeys.id, res.body.id));
    expect(JSON.stringify(row)).not.toContain(pair.api_key);
    expect(JSON.stringify(row)).not.toContain(pair.api_secret);
    const [audit] = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'keys.create'), eq(auditEvents.actorUserId, alice.user.id)));
    expect(audit?.data).toMatchObject({ key_id: res.body.id, asset_class: 'crypto', exchange: 'crypto_exchange' });
  });

  it('needs account_no and account_product_code for kr_broker, and masks the account number', async () => {
    const missing = await as(alice).create({ ...kr, account_no: undefined, ...secretPair() });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: 'account_no', message: expect.any(String) }]);
    const noCode = await as(alice).create({ ...kr, account_product_code: undefined, ...secretPair() });
    expect(noCode.body.errors[0].path).toBe('account_product_code');
    const ok = await as(alice).create({ ...kr, ...secretPair(), label: 'kis paper' });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({ asset_class: 'kr_equity', label: 'kis paper', account_no_masked: '******45-01', account_product_code: '01' });
  });

  it.each([
    ['an exchange of another asset class', { asset_class: 'crypto', exchange: 'us_broker' }, 'exchange'],
    ['an unknown exchange', { asset_class: 'crypto', exchange: 'nasdaq' }, 'exchange'],
    ['paper_mode=false', { exchange: 'crypto_exchange', paper_mode: false }, 'paper_mode'],
    ['paper_mode as a string', { exchange: 'crypto_exchange', paper_mode: 'true' }, 'paper_mode'],
    ['a base_url off the allow-list', { ...kr, base_url: 'http://169.254.169.254' }, 'base_url'],
    ['a live origin for a paper key', { ...kr, base_url: 'https://openapi.koreainvestment.com:9443' }, 'base_url'],
    ['an allowed origin with a path', { ...kr, base_url: `${FAKE_ORIGIN}/internal` }, 'base_url'],
    ['an exchange longer than 32', { exchange: 'x'.repeat(33) }, 'exchange'],
    ['an empty api_key', { exchange: 'crypto_exchange', api_key: '' }, 'api_key'],
  ])('answers 422 naming the field for %s, on create and on test', async (_name, body, path) => {
    for (const call of [as(alice).create, as(alice).test]) {
      const res = await call({ ...secretPair(), ...body });
      expect(res.status, res.text).toBe(422);
      expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(path);
    }
  });

  it('accepts an allow-listed base_url', async () => {
    const res = await as(alice).create({ ...kr, ...secretPair(), base_url: `${FAKE_ORIGIN}/` });
    expect(res.status, res.text).toBe(201);
  });

  it('registers a crypto key naming an allowed ccxt exchange id; the key keeps what it names', async () => {
    const res = await as(alice).create({ exchange: 'kraken', ...secretPair(), label: 'kraken paper' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ asset_class: 'crypto', exchange: 'kraken', label: 'kraken paper' });
    expect((await as(alice).list('?asset_class=crypto')).body).toEqual(expect.arrayContaining([expect.objectContaining({ id: res.body.id, exchange: 'kraken' })]));
    // CRYPTO_EXCHANGE_ID is allowed by name too.
    expect((await as(alice).create({ exchange: 'binance', ...secretPair() })).body).toMatchObject({ exchange: 'binance' });
  });

  it('refuses a crypto exchange the service does not allow: 422 VALIDATION_ERROR naming the field and listing what is allowed, on create and on test', async () => {
    for (const call of [as(alice).create, as(alice).test]) {
      const res = await call({ asset_class: 'crypto', exchange: 'bitmex', ...secretPair() });
      expect(res.status, res.text).toBe(422);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'exchange', message: expect.stringContaining('crypto_exchange') }] });
      expect(res.body.errors[0].message).toContain('binance, kraken');
    }
  });

  it('checks a crypto base_url against the origins of the key’s own exchange', async () => {
    // The allow-list names the fake for kraken: a kraken key may carry it, a binance one may not.
    expect((await as(alice).create({ exchange: 'kraken', ...secretPair(), base_url: FAKE_ORIGIN })).status).toBe(201);
    for (const exchange of ['binance', 'crypto_exchange']) {
      const res = await as(alice).create({ exchange, ...secretPair(), base_url: FAKE_ORIGIN });
      expect(res.status, res.text).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ path: 'base_url', message: expect.stringContaining('binance') });
    }
    // Binance's testnet for a binance paper key (named, or as CRYPTO_EXCHANGE_ID); its live origin never on a paper key.
    expect((await as(alice).create({ exchange: 'crypto_exchange', ...secretPair(), base_url: 'https://testnet.binance.vision' })).status).toBe(201);
    expect((await as(alice).create({ exchange: 'binance', ...secretPair(), base_url: 'https://api.binance.com' })).status).toBe(422);
    expect((await as(alice).create({ exchange: 'kraken', ...secretPair(), base_url: 'https://testnet.binance.vision' })).status).toBe(422);
  });

  it('answers 503 FEATURE_DISABLED for a broker whose flag is off, on create and on test', async () => {
    for (const call of [as(alice).create, as(alice).test]) {
      const res = await call({ asset_class: 'us_equity', exchange: 'us_broker', ...secretPair() });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('FEATURE_DISABLED');
    }
  });

  it("answers 409 when another user already holds the api_key; the same user may register it again", async () => {
    const pair = secretPair();
    expect((await as(alice).create({ exchange: 'crypto_exchange', ...pair })).status).toBe(201);
    const taken = await as(bob).create({ exchange: 'crypto_exchange', ...pair });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('CONFLICT');
    expect(taken.text).not.toContain(pair.api_key);
    expect((await as(alice).create({ exchange: 'crypto_exchange', ...pair, label: 'again' })).status).toBe(201);
  });
});

describe('list, change, delete', () => {
  it('lists only the caller’s keys as a plain array, filtered by asset class', async () => {
    const carol = await newUser(server, { prefix: 'keys_carol' });
    await as(carol).create({ exchange: 'crypto_exchange', ...secretPair() });
    await as(carol).create({ ...kr, ...secretPair() });
    const all = await as(carol).list();
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((key: { asset_class: string }) => key.asset_class).sort()).toEqual(['crypto', 'kr_equity']);
    expect((await as(carol).list('?asset_class=kr_equity')).body).toHaveLength(1);
    expect((await as(carol).list('?asset_class=stocks')).status).toBe(422);
  });

  it('PATCH changes label and is_active (audited); another user’s key is 404 like a missing one', async () => {
    const key = (await as(alice).create({ exchange: 'crypto_exchange', ...secretPair() })).body;
    const changed = await as(alice).patch(key.id, { label: 'renamed', is_active: false });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ id: key.id, label: 'renamed', is_active: false });
    const foreign = await as(bob).patch(key.id, { label: 'mine now' });
    const missing = await as(bob).patch(2_000_000_000, { label: 'mine now' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await as(alice).patch('0x10', { label: 'x' })).status).toBe(422);
    expect((await as(alice).patch(key.id, { is_active: 'no' })).status).toBe(422);
  });

  it('DELETE answers 204 and the key is gone; another user’s is 404', async () => {
    const key = (await as(alice).create({ exchange: 'crypto_exchange', ...secretPair() })).body;
    expect((await as(bob).remove(key.id)).status).toBe(404);
    const removed = await as(alice).remove(key.id);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect((await as(alice).remove(key.id)).status).toBe(404);
    expect((await as(alice).list()).body.map((item: { id: number }) => item.id)).not.toContain(key.id);
  });
});

describe('POST /api/exchange-keys/test', () => {
  it('answers ok with the simulated account of that asset class, and stores nothing', async () => {
    const dave = await newUser(server, { prefix: 'keys_dave' });
    const res = await as(dave).test({ exchange: 'crypto_exchange', ...secretPair() });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ok: true, asset_class: 'crypto', paper_mode: true, equity: 100000, buying_power: 100000, currency: 'USDT', error: null });
    const krw = await as(dave).test({ ...kr, ...secretPair() });
    expect(krw.body).toMatchObject({ ok: true, currency: 'KRW', equity: 100000000 });
    expect((await as(dave).list()).body).toEqual([]);
  });
});

describe('secrets', () => {
  it('never reach a log line', () => {
    const logs = captured.text();
    expect(logs.length).toBeGreaterThan(0);
    for (let i = 1; i <= counter; i++) {
      expect(logs).not.toContain(`AKIA-${process.pid}-${i}-PUBLICKEY`);
      expect(logs).not.toContain(`s3cr3t-${process.pid}-${i}-PRIVATE`);
    }
  });

  it('a restart with another ENCRYPTION_SALT shows **** for keys that no longer decrypt', async () => {
    const dataDir = dataDirFromTemplate();
    const database = await createTestDatabase();
    const reuse = { dataDir, databaseUrl: database.url };
    const secrets = { AUTH_SECRET_KEY: 'k'.repeat(40), ENCRYPTION_SALT: 'first-salt-of-this-test-1234567890' };
    try {
      const first = await startTestServer({ ...env, ...secrets }, reuse);
      const keeper = await newUser(first, { prefix: 'keys_salt' });
      const created = await first.http('POST', '/api/exchange-keys', { token: keeper.tokens.access_token, body: { ...kr, ...secretPair() } });
      expect(created.status).toBe(201);
      await first.stop();
      const other = await startTestServer({ ...env, ...secrets, ENCRYPTION_SALT: 'a-different-salt-than-before-123456' }, reuse);
      try {
        const res = await other.http('GET', '/api/exchange-keys', { token: keeper.tokens.access_token });
        expect(res.status, res.text).toBe(200);
        expect(res.body).toEqual([expect.objectContaining({ id: created.body.id, api_key_masked: '****', account_no_masked: '****' })]);
      } finally {
        await other.stop();
      }
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
