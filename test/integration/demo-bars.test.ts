// Demo bars as the seed writes them, at a fixed instant: on the exchanges' trading days only, and
// up to the last session that has opened (12:00 UTC on Tuesday 2026-03-10 is before the NYSE's
// open and after the KRX's, and mid-day for crypto).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { openDatabase, type DatabaseHandle } from '../../server/db/client.ts';
import { createInstruments } from '../../server/instruments/instruments.ts';
import { createMarketData } from '../../server/marketdata/marketdata.ts';
import { readBars } from '../../server/marketdata/queries.ts';
import { capturedLogger } from '../support/logs.ts';
import { createTestDatabase, dataDirFromTemplate } from '../support/server.ts';

const { logger } = capturedLogger('silent');
const cleanups: Array<() => Promise<void> | void> = [];
let handle: DatabaseHandle;

beforeAll(async () => {
  const database = await createTestDatabase();
  const dataDir = dataDirFromTemplate();
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }), database.drop);
  handle = await openDatabase({ databaseUrl: database.url, dataDir, poolSize: 2 });
  const clock = manualClock('2026-03-10T12:00:00.000Z');
  const instruments = createInstruments({ db: handle.db, clock, logger });
  await instruments.seedIfEmpty();
  expect(await createMarketData({ db: handle.db, clock, logger, instruments }).seedDemoIfEmpty()).toBeGreaterThan(0);
}, 120_000);

afterAll(async () => {
  await handle.close();
  for (const cleanup of cleanups) await cleanup();
});

const datesOf = async (assetClass: 'us_equity' | 'kr_equity' | 'crypto', symbol: string, from: string) =>
  (await readBars(handle.db, { assetClass, symbol, from })).map((bar) => bar.date);

describe('demo bars (DEMO_DATA)', () => {
  it('end at the last session that has opened: not today’s NYSE session before its open, today’s KRX and crypto ones', async () => {
    expect((await datesOf('us_equity', 'AAPL', '2026-03-01')).at(-1)).toBe('2026-03-09');
    expect((await datesOf('kr_equity', '005930', '2026-03-01')).at(-1)).toBe('2026-03-10');
    expect((await datesOf('crypto', 'BTC/USDT', '2026-03-01')).at(-1)).toBe('2026-03-10');
  });

  it('skip exchange holidays and weekends per asset class', async () => {
    const us = await datesOf('us_equity', 'AAPL', '2025-06-30');
    expect(us.slice(0, 5)).toEqual(['2025-06-30', '2025-07-01', '2025-07-02', '2025-07-03', '2025-07-07']);
    const kr = await datesOf('kr_equity', '005930', '2025-01-24');
    expect(kr.slice(0, 2)).toEqual(['2025-01-24', '2025-01-31']);
    expect((await datesOf('crypto', 'BTC/USDT', '2025-07-04')).slice(0, 3)).toEqual(['2025-07-04', '2025-07-05', '2025-07-06']);
  });
});
