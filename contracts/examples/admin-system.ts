// Examples of the operator's service-wide routes under /api/admin: the overview and alerts, the
// halt and the live suspension, instruments and bar imports, and the simulator's controls.
import type { z } from 'zod';
import type { ZAdminOverview, ZCriticalAlertList, ZCriticalAlertListQuery, ZHaltRequest, ZHaltState, ZLiveSuspendRequest, ZLiveSuspendState } from '../admin.ts';
import type { ZInstrument, ZInstrumentUpsert } from '../instruments.ts';
import type { ZOhlcvImport, ZOhlcvImportResult } from '../marketdata.ts';
import type { ZSimOutageRequest, ZSimOutageResponse, ZSimPriceRequest, ZSimPriceResponse } from '../simulator.ts';
import { EXAMPLE_INSTRUMENT } from './market.ts';
import { example, type OperationExample } from './types.ts';

const LOCKED_UNTIL = '2026-12-03T01:12:40.000Z';
const LOCK_TITLE = `Kill switch: user 43's crypto locked until ${LOCKED_UNTIL} (daily loss -5.12 %)`;

const LOCK_ALERT: z.output<typeof ZCriticalAlertList>['items'][number] = {
  id: 311,
  user_id: 43,
  asset_class: 'crypto',
  day: '2026-12-02',
  kind: 'kill_switch_lock',
  title: LOCK_TITLE,
  data: { user_id: 43, asset_class: 'crypto', mode: 'paper', pnl_pct: '-5.12', equity: '9488.00', day_start_equity: '10000.00', day_flows: '0', locked_until: LOCKED_UNTIL, liquidate: false },
  at: '2026-12-02T01:12:40.000Z',
};

export const ADMIN_SYSTEM_EXAMPLES: Record<string, OperationExample> = {
  adminUpsertInstrument: example<typeof ZInstrumentUpsert, typeof ZInstrument>({
    input: { asset_class: 'us_equity', symbol: 'AAPL', exchange: 'NASDAQ', currency: 'USD', name: 'Apple Inc.', reference_price: 238.5, tick_size: 0.01, lot_size: 1, fractional: true },
    output: EXAMPLE_INSTRUMENT,
  }),
  adminImportOhlcv: example<typeof ZOhlcvImport, typeof ZOhlcvImportResult>({
    input: {
      asset_class: 'us_equity',
      symbol: 'AAPL',
      bars: [
        { date: '2026-11-27', open: 234.1, high: 236.92, low: 233.5, close: 235.86, adj_close: 235.86, volume: 28481400 },
        { date: '2026-11-28', open: '236.00', high: '238.95', low: '235.70', close: '238.50', volume: '31904200' },
      ],
    },
    output: { asset_class: 'us_equity', symbol: 'AAPL', imported: 2, replaced_synthetic: 2, first_date: '2026-11-27', last_date: '2026-11-28' },
    // The same two bars as a text/csv body, in Yahoo's layout (server/marketdata/csv.ts reads its headers).
    textInput: {
      asset_class: 'us_equity',
      symbol: 'AAPL',
      csv: 'Date,Open,High,Low,Close,Adj Close,Volume\n2026-11-27,234.10,236.92,233.50,235.86,235.86,28481400\n2026-11-28,236.00,238.95,235.70,238.50,238.50,31904200\n',
    },
  }),
  adminSetSimPrice: example<typeof ZSimPriceRequest, typeof ZSimPriceResponse>({
    input: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 91500 },
    output: { asset_class: 'crypto', symbol: 'BTC/USDT', price: 91500, source: 'admin', at: '2026-12-02T04:05:00.000Z' },
  }),
  adminSetSimOutage: example<typeof ZSimOutageRequest, typeof ZSimOutageResponse>({ input: { asset_class: 'kr_equity', down: true }, output: { crypto: false, us_equity: false, kr_equity: true } }),
  adminSuspendLive: example<typeof ZLiveSuspendRequest, typeof ZLiveSuspendState>({ input: { suspended: true }, output: { suspended: true, updated_at: '2026-12-02T04:06:00.000Z' } }),
  adminOverview: example<z.ZodVoid, typeof ZAdminOverview>({
    output: {
      as_of: '2026-12-02T04:30:00.000Z',
      halted: false,
      live_suspended: false,
      live_enabled: [{ user_id: 42, username: 'alice_trader', asset_class: 'crypto', first_live_order_at: '2026-11-20T09:30:12.000Z' }],
      active_locks: [{ user_id: 43, username: 'bob_swing', asset_class: 'crypto', locked_until: LOCKED_UNTIL, reason: `kill switch: daily loss -5.12 % in crypto; locked until ${LOCKED_UNTIL}` }],
      running_bots: [{ user_id: 42, asset_class: 'crypto', strategy_name: 'ema_crossover', live_mode: false, started_at: '2026-12-02T01:00:00.000Z' }],
      live_orders_today: [{ user_id: 42, asset_class: 'crypto', count: 3 }],
      critical_alerts: [{ id: 311, user_id: 43, asset_class: 'crypto', day: '2026-12-02', kind: 'kill_switch_lock', title: LOCK_TITLE, at: '2026-12-02T01:12:40.000Z' }],
    },
  }),
  adminAlerts: example<typeof ZCriticalAlertListQuery, typeof ZCriticalAlertList>({
    input: { page: 1, size: 20, user_id: 43, kind: 'kill_switch_lock' },
    output: { items: [LOCK_ALERT], total: 1, page: 1, size: 20 },
  }),
  adminHaltState: example<z.ZodVoid, typeof ZHaltState>({ output: { halted: false, updated_at: '2026-11-30T22:00:00.000Z' } }),
  adminHalt: example<typeof ZHaltRequest, typeof ZHaltState>({ input: { halted: true }, output: { halted: true, updated_at: '2026-12-02T04:31:00.000Z' } }),
};
