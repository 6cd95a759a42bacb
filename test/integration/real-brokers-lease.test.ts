// Who takes in a real account's broker events: one consumer per active key, started when the key
// is registered or activated, stopped when it is deactivated or deleted; with two instances on
// one PostgreSQL, one of them holds the account (its lease), and the other takes over when the
// holder stops.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, tempDir, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const key = { keyId: `PKLEASE${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `lease-secret-${randomBytes(12).toString('hex')}` };
let alpaca: FakeAlpaca;
const envOf = (url: string) => ({
  BROKER_MODE: 'real',
  BROKER_BASE_URLS: `us_broker:paper=${url}`,
  BROKER_US_DATA_URL: url,
  RISK_MARKET_HOURS: 'ignore',
  SIM_TICK_INTERVAL_MS: '0',
  // Instances share their secrets through settings (a generated secret is one DATA_DIR's own).
  AUTH_SECRET_KEY: 'k'.repeat(24) + 'shared-across-instances',
  ENCRYPTION_SALT: 'shared-salt-for-both-instances',
});
const listeners = (count: number, deadlineMs = 10_000) =>
  waitFor(
    () => Promise.resolve(alpaca.listenerCount(key.keyId)),
    (now) => now === count,
    deadlineMs,
  );

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...key, cash: '100000' }], prices: { AAPL: '200' } });
});
afterAll(() => alpaca?.close());

describe('one instance', () => {
  let server: TestServer;
  let user: FactoryUser;
  beforeAll(async () => {
    server = await startTestServer(envOf(alpaca.url));
    user = await newUser(server, { prefix: 'lease_one' });
  });
  afterAll(() => server?.stop());
  const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: user.tokens.access_token, ...(body === undefined ? {} : { body }) });

  it('starts the account’s stream on registration, stops it on deactivation and deletion, and starts it again on activation', async () => {
    const created = await call('POST', '/api/exchange-keys', { asset_class: 'us_equity', exchange: 'us_broker', api_key: key.keyId, api_secret: key.secretKey, base_url: alpaca.url });
    expect(created.status, created.text).toBe(201);
    await listeners(1);
    expect(server.services.brokerEvents?.consuming()).toEqual([created.body.id]);
    expect((await call('PATCH', `/api/exchange-keys/${created.body.id}`, { is_active: false })).status).toBe(200);
    await listeners(0);
    expect(server.services.brokerEvents?.consuming()).toEqual([]);
    expect((await call('PATCH', `/api/exchange-keys/${created.body.id}`, { is_active: true })).status).toBe(200);
    await listeners(1);
    expect((await call('DELETE', `/api/exchange-keys/${created.body.id}`)).status).toBe(204);
    await listeners(0);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('two instances on one database', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer(envOf(alpaca.url));
    b = await startTestServer(envOf(alpaca.url), { dataDir: tempDir(), databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.stop();
    if (b) rmSync(b.dataDir, { recursive: true, force: true });
    await a?.stop();
  });

  it('one of them takes the account’s events in; when it stops, the other takes over', async () => {
    const user = await newUser(a, { prefix: 'lease_two' });
    const created = await a.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { asset_class: 'us_equity', exchange: 'us_broker', api_key: key.keyId, api_secret: key.secretKey, base_url: alpaca.url } });
    expect(created.status, created.text).toBe(201);
    await listeners(1);
    // Both instances have looked at the key by now (the change feed reaches both); one holds it.
    await waitFor(
      async () => {
        await Promise.all([a.services.brokerEvents?.sync(), b.services.brokerEvents?.sync()]);
        return [a.services.brokerEvents?.consuming().length ?? 0, b.services.brokerEvents?.consuming().length ?? 0];
      },
      ([onA, onB]) => onA! + onB! === 1,
    );
    expect(alpaca.listenerCount(key.keyId)).toBe(1);
    const [holder, other] = a.services.brokerEvents?.consuming().length === 1 ? [a, b] : [b, a];
    await holder.services.brokerEvents?.stop();
    await waitFor(
      async () => {
        await other.services.brokerEvents?.sync();
        return other.services.brokerEvents?.consuming().length ?? 0;
      },
      (count) => count === 1,
    );
    await listeners(1);
  });
});
