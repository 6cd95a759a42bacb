// The instrument registry over HTTP: the seeded universe, search and paging, and the operator's
// add-or-update with its audit record.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let user: FactoryUser;
let admin: FactoryUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await newUser(server, { prefix: 'inst_user' });
  admin = await newUser(server, { role: 'admin', prefix: 'inst_admin' });
});
afterAll(() => server.stop());

const list = (query: string) => server.http('GET', `/api/instruments${query}`, { token: user.tokens.access_token });
const upsert = (body: unknown) => server.http('POST', '/api/admin/instruments', { token: admin.tokens.access_token, body });

describe('GET /api/instruments', () => {
  it('holds the seeded universe: at least 10 crypto pairs in USDT, 30 US stocks and ETFs, 20 KRX stocks', async () => {
    const counts: Record<string, number> = {};
    for (const assetClass of ['crypto', 'us_equity', 'kr_equity']) {
      const res = await list(`?asset_class=${assetClass}&size=100`);
      expect(res.status, res.text).toBe(200);
      counts[assetClass] = res.body.total;
      expect(res.body.items.every((item: { asset_class: string }) => item.asset_class === assetClass)).toBe(true);
    }
    expect(counts.crypto).toBeGreaterThanOrEqual(10);
    expect(counts.us_equity).toBeGreaterThanOrEqual(30);
    expect(counts.kr_equity).toBeGreaterThanOrEqual(20);
    const btc = (await list('?asset_class=crypto&q=btc')).body.items.find((item: { symbol: string }) => item.symbol === 'BTC/USDT');
    expect(btc).toMatchObject({ currency: 'USDT', tick_rule: 'fixed', fractional: true, exchange: 'BINANCE' });
  });

  it('searches symbol and name in any case, and pages', async () => {
    const samsung = await list('?q=SAMSUNG%20elec');
    expect(samsung.body.items.map((item: { symbol: string }) => item.symbol)).toContain('005930');
    expect(samsung.body.items[0]).toMatchObject({ asset_class: 'kr_equity', currency: 'KRW', tick_rule: 'krx_bands', fractional: false, lot_size: 1 });
    const first = await list('?size=5&page=1');
    const second = await list('?size=5&page=2');
    expect(first.body).toMatchObject({ page: 1, size: 5 });
    expect(first.body.items).toHaveLength(5);
    expect(second.body.items.map((item: { symbol: string }) => item.symbol)).not.toContain(first.body.items[0].symbol);
    // A search with LIKE's own wildcards finds nothing rather than everything.
    expect((await list('?q=%25')).body.total).toBe(0);
  });

  it('answers 422 for an unknown asset class or an empty search', async () => {
    expect((await list('?asset_class=bonds')).status).toBe(422);
    expect((await list('?q=')).status).toBe(422);
  });
});

describe('POST /api/admin/instruments', () => {
  const custom = { asset_class: 'us_equity', symbol: 'nasdaq:zzzq', exchange: 'NASDAQ', currency: 'USD', name: 'Test Corp', reference_price: 12.34, tick_size: 0.01, lot_size: 1, fractional: true };

  it('adds (201) with the symbol normalised, then updates (200), each audited', async () => {
    const created = await upsert(custom);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ symbol: 'ZZZQ', asset_class: 'us_equity', reference_price: 12.34, tick_size: 0.01, tick_rule: 'fixed' });
    const updated = await upsert({ ...custom, symbol: 'ZZZQ', name: 'Test Corp Renamed', reference_price: 13.5 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ symbol: 'ZZZQ', name: 'Test Corp Renamed', reference_price: 13.5 });
    expect((await list('?q=zzzq')).body.items).toHaveLength(1);
    const audits = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'admin.instrument_upsert'), eq(auditEvents.actorUserId, admin.user.id)));
    expect(audits.map((row) => row.data)).toEqual([
      { asset_class: 'us_equity', symbol: 'ZZZQ', created: true },
      { asset_class: 'us_equity', symbol: 'ZZZQ', created: false },
    ]);
  });

  it('gives KRX stocks the price-band tick', async () => {
    const res = await upsert({ asset_class: 'kr_equity', symbol: 'KRX:999990', exchange: 'KRX', currency: 'KRW', name: 'Test KRX', reference_price: 61000, lot_size: 1, fractional: false });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ symbol: '999990', tick_rule: 'krx_bands', tick_size: 100 });
  });

  it.each([
    ['a symbol of another asset class', { ...custom, symbol: '005930' }, 'symbol'],
    ['junk in the symbol', { ...custom, symbol: "x'; drop table instruments" }, 'symbol'],
    ['a crypto pair without a tick size', { ...custom, asset_class: 'crypto', symbol: 'ZZZ/USDT', currency: 'USDT', tick_size: undefined }, 'tick_size'],
    ['a fractional KRX stock', { ...custom, asset_class: 'kr_equity', symbol: '999991', currency: 'KRW', fractional: true }, 'fractional'],
    ['a negative price', { ...custom, reference_price: -1 }, 'reference_price'],
    ['a lower-case currency', { ...custom, currency: 'usd' }, 'currency'],
  ])('answers 422 naming the field for %s, and writes nothing', async (_name, body, path) => {
    const res = await upsert(body);
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.errors.map((error: { path: string }) => error.path)).toContain(path);
  });
});
