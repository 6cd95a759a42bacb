// Daily bars over HTTP: CSV and JSON imports (all rows or none), re-import, reading by range,
// and demo bars that real ones replace.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, dailyBars } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, '../fixtures/ohlcv', name), 'utf8');

let server: TestServer;
let user: FactoryUser;
let admin: FactoryUser;

beforeAll(async () => {
  server = await startTestServer();
  user = await newUser(server, { prefix: 'md_user' });
  admin = await newUser(server, { role: 'admin', prefix: 'md_admin' });
});
afterAll(() => server.stop());

const importCsv = (query: string, csv: string) =>
  server.http('POST', `/api/admin/market-data/ohlcv?${query}`, { token: admin.tokens.access_token, rawBody: csv, headers: { 'content-type': 'text/csv' } });
const importJson = (body: unknown) => server.http('POST', '/api/admin/market-data/ohlcv', { token: admin.tokens.access_token, body });
const bars = (query: string) => server.http('GET', `/api/market-data/ohlcv?${query}`, { token: user.tokens.access_token });

describe('CSV import', () => {
  it('reads a pandas-style file (index column, lower-case headers, float volume) and serves it by range', async () => {
    const csv = fixture('spy-index-and-float-volume.csv');
    const rows = csv.trim().split('\n').length - 1;
    const res = await importCsv('asset_class=us_equity&symbol=spy', csv);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ asset_class: 'us_equity', symbol: 'SPY', imported: rows, replaced_synthetic: 0, first_date: '1999-11-01' });
    const all = await bars('asset_class=us_equity&symbol=SPY');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ asset_class: 'us_equity', symbol: 'SPY', currency: 'USD' });
    expect(all.body.bars).toHaveLength(rows);
    expect(all.body.bars[0]).toEqual({ date: '1999-11-01', open: 136.5, high: 137, low: 135.5625, close: 135.5625, adj_close: null, volume: 4006500, source: 'import' });
    const window = await bars('asset_class=us_equity&symbol=SPY&from=1999-11-02&to=1999-11-03');
    expect(window.body.bars.map((bar: { date: string }) => bar.date)).toEqual(['1999-11-02', '1999-11-03']);
    const [audit] = await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.action, 'marketdata.import'), eq(auditEvents.actorUserId, admin.user.id)));
    expect(audit?.data).toMatchObject({ asset_class: 'us_equity', symbol: 'SPY', count: rows, format: 'csv' });
  });

  it('re-importing a date replaces it', async () => {
    const res = await importCsv('asset_class=us_equity&symbol=SPY', 'date,open,high,low,close,volume\n1999-11-01,1,2,0.5,1.5,10\n');
    expect(res.status, res.text).toBe(200);
    const day = await bars('asset_class=us_equity&symbol=SPY&from=1999-11-01&to=1999-11-01');
    expect(day.body.bars).toEqual([{ date: '1999-11-01', open: 1, high: 2, low: 0.5, close: 1.5, adj_close: null, volume: 10, source: 'import' }]);
  });

  it('refuses a file with bad rows with 422 naming each row, and writes none of it', async () => {
    const csv = ['Date,Open,High,Low,Close,Volume', '2020-01-02,10,11,9,10.5,100', '2020-01-03,10,9,8,10.5,100', '2020-01-06,10,11,9,10.5,-5', '2020-01-02,10,11,9,10.5,100', '2020-02-30,10,11,9,10.5,100'].join('\n');
    const res = await importCsv('asset_class=us_equity&symbol=QQQ', csv);
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const paths = res.body.errors.map((error: { path: string }) => error.path);
    expect(paths).toEqual(expect.arrayContaining(['row 2', 'row 3', 'row 4', 'row 5']));
    expect(paths).not.toContain('row 1');
    expect(await server.services.db.select().from(dailyBars).where(and(eq(dailyBars.assetClass, 'us_equity'), eq(dailyBars.symbol, 'QQQ')))).toEqual([]);
  });

  it('answers 422 for an unregistered symbol or a missing column, and 415 for an undocumented media type', async () => {
    const unknown = await importCsv('asset_class=us_equity&symbol=NOPEX', fixture('spy-index-and-float-volume.csv'));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ path: 'symbol', message: expect.stringContaining('not a registered us_equity instrument') }]);
    const noClose = await importCsv('asset_class=us_equity&symbol=SPY', 'date,open,high,low,volume\n2020-01-02,1,2,0.5,10\n');
    expect(noClose.status).toBe(422);
    expect(noClose.body.errors[0].path).toBe('file');
    const xml = await server.http('POST', '/api/admin/market-data/ohlcv?asset_class=us_equity&symbol=SPY', { token: admin.tokens.access_token, rawBody: '<bars/>', headers: { 'content-type': 'application/xml' } });
    expect(xml.status).toBe(415);
  });
});

describe('JSON import', () => {
  it('takes numbers or numeric strings, and refuses a duplicate date naming both rows', async () => {
    const ok = await importJson({
      asset_class: 'kr_equity',
      symbol: '005930.KS',
      bars: [
        { date: '2024-01-02', open: 78200, high: 79800, low: 78200, close: 79600, volume: '17142847' },
        { date: '2024-01-03', open: '78500', high: 78800, low: 77000, close: 77000, volume: 21753644 },
      ],
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ symbol: '005930', imported: 2, first_date: '2024-01-02', last_date: '2024-01-03' });
    const duplicate = await importJson({
      asset_class: 'kr_equity',
      symbol: '005930',
      bars: [
        { date: '2024-02-01', open: 1, high: 1, low: 1, close: 1, volume: 1 },
        { date: '2024-02-01', open: 1, high: 1, low: 1, close: 1, volume: 1 },
      ],
    });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.errors.map((error: { path: string }) => error.path)).toContain('row 2');
  });

  it('answers 422 when both or neither of bars and csv are sent', async () => {
    expect((await importJson({ asset_class: 'crypto', symbol: 'BTC/USDT' })).status).toBe(422);
    expect((await importJson({ asset_class: 'crypto', symbol: 'BTC/USDT', bars: [{ date: '2024-01-01', open: 1, high: 1, low: 1, close: 1, volume: 1 }], csv: 'x' })).status).toBe(422);
  });
});

describe('demo data', () => {
  let demo: TestServer;
  beforeAll(async () => {
    demo = await startTestServer({ DEMO_DATA: 'true' });
  });
  afterAll(() => demo.stop());

  it('seeds synthetic bars up to today for every instrument; real bars then replace one symbol’s', async () => {
    const reader = await newUser(demo, { prefix: 'demo_reader' });
    const before = await demo.http('GET', '/api/market-data/ohlcv?asset_class=crypto&symbol=ETH-USDT&from=2015-01-01', { token: reader.tokens.access_token });
    expect(before.status).toBe(200);
    expect(before.body.bars.length).toBeGreaterThan(3000);
    expect(before.body.bars[0].date).toBe('2015-01-01');
    expect(new Set(before.body.bars.map((bar: { source: string }) => bar.source))).toEqual(new Set(['synthetic']));
    const demoAdmin = await newUser(demo, { role: 'admin', prefix: 'demo_admin' });
    const imported = await demo.http('POST', '/api/admin/market-data/ohlcv?asset_class=crypto&symbol=ETH/USDT', {
      token: demoAdmin.tokens.access_token,
      rawBody: 'date,open,high,low,close,volume\n2024-01-02,2350,2420,2340,2400,123.5\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.replaced_synthetic).toBe(before.body.bars.length);
    const after = await demo.http('GET', '/api/market-data/ohlcv?asset_class=crypto&symbol=ETH/USDT', { token: reader.tokens.access_token });
    expect(after.body.bars).toHaveLength(1);
    // Other symbols keep their demo bars.
    const btc = await demo.http('GET', '/api/market-data/ohlcv?asset_class=crypto&symbol=BTC/USDT&from=2024-01-01&to=2024-01-31', { token: reader.tokens.access_token });
    expect(btc.body.bars).toHaveLength(31);
  });
});
