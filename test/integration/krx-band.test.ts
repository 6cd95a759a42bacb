// The KRX daily price limit at the order gate: its base is the previous session's close, never a
// bar of today, and it holds for market orders at the price they would fill at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { upsertBars } from '../../server/marketdata/queries.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Tuesday 2026-03-10, 10:00 in Seoul: the KRX is open. */
const clock = manualClock('2026-03-10T01:00:00.000Z');
const SYMBOL = '005930';

let server: TestServer;
let user: FactoryUser;

const bar = (date: string, close: string) => ({ date, open: close, high: close, low: close, close, volume: '1000' });

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
  user = await newUser(server, { prefix: 'krx_band' });
  const key = await server.http('POST', '/api/exchange-keys', {
    token: user.tokens.access_token,
    body: { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01', api_key: `krx-band-${process.pid}`, api_secret: 's' },
  });
  expect(key.status, key.text).toBe(201);
  // Monday's close is the base (upper limit 65,000); Tuesday's bar (the bot's, an import's) is not.
  await upsertBars(server.services.db, { assetClass: 'kr_equity', symbol: SYMBOL, bars: [bar('2026-03-09', '50000'), bar('2026-03-10', '60000')], source: 'test', at: clock.now() });
});
afterAll(() => server.stop());

const place = (body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: { asset_class: 'kr_equity', symbol: SYMBOL, side: 'buy', qty: 1, ...body } });

describe('KRX daily price limit', () => {
  it("takes the previous session's close as its base, not a bar of today", async () => {
    await server.services.simulator.setPrice({ assetClass: 'kr_equity', symbol: SYMBOL, price: '60000' });
    const above = await place({ order_type: 'limit', limit_price: 66000 });
    expect(above.status, above.text).toBe(422);
    expect(above.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('above the upper price limit 65000') });
    expect(above.body.message).toContain('previous close 50000');
    const at = await place({ order_type: 'limit', limit_price: 65000 });
    expect(at.status, at.text).toBe(201);
  });

  it('refuses a market buy whose expected fill is above the upper limit, as it refuses such a limit', async () => {
    await server.services.simulator.setPrice({ assetClass: 'kr_equity', symbol: SYMBOL, price: '65000' });
    const res = await place({ order_type: 'market' });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('expected fill price') });
    await server.services.simulator.setPrice({ assetClass: 'kr_equity', symbol: SYMBOL, price: '64000' });
    const inside = await place({ order_type: 'market' });
    expect(inside.status, inside.text).toBe(201);
  });
});
