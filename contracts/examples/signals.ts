// Examples of /api/signals: a TradingView hook on the paper crypto account, and its signals.
import type { z } from 'zod';
import type { TSignalWebhook, TWebhookSignal, ZSignalPayload, ZSignalReceived, ZSignalWebhookCreate, ZSignalWebhookCreated, ZSignalWebhookIdPath, ZSignalWebhookList, ZWebhookSignalList, ZSignalListQuery } from '../signals.ts';
import { example, type OperationExample } from './types.ts';

const TOKEN = 'wh_k3Vb9QmZr2Lx7TpA0sNdE4fGh6JyW1cU5iO8aRtYu2e';

/** A hook as it is listed (its token never is). */
const HOOK: TSignalWebhook = {
  id: '6f1c2b7e-8d3a-4e5f-9a0b-1c2d3e4f5a6b',
  name: 'btc-ema-cross',
  asset_class: 'crypto',
  mode: 'paper',
  max_lag_sec: 120,
  has_passphrase: true,
  token_prefix: TOKEN.slice(0, 7),
  created_at: '2026-12-01T18:20:00.000Z',
  rotated_at: null,
};

const ACCEPTED: TWebhookSignal = {
  id: '2a9d4c3b-1e0f-4a8b-b7c6-d5e4f3a2b1c0',
  webhook_id: HOOK.id,
  webhook_name: HOOK.name,
  asset_class: 'crypto',
  mode: 'paper',
  received_at: '2026-12-02T04:10:03.204Z',
  outcome: 'accepted',
  symbol: 'BTC/USDT',
  side: 'buy',
  order_type: 'market',
  qty: 0.01,
  qty_pct: null,
  alert_id: 'ema-cross-2026-12-02T04:10',
  order_id: 'wh-3f7a1c9e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a1c3e5b7d',
  broker_order_id: 'sim_0d2e4c6a8b1f3e5d7c9a0b2e4f6a8c1d',
  error_code: null,
  error_message: null,
  decided_at: '2026-12-02T04:10:03.251Z',
};

const REFUSED: TWebhookSignal = {
  ...ACCEPTED,
  id: '7b6a5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d',
  received_at: '2026-12-02T05:00:01.004Z',
  outcome: 'refused',
  side: 'buy',
  alert_id: 'ema-cross-2026-12-02T05:00',
  order_id: null,
  broker_order_id: null,
  error_code: 'RISK_RULE_VIOLATION',
  error_message: 'Trading is locked until 2026-12-03T00:00:00.000Z (kill switch: daily loss at or below the limit); only sells that reduce a position are taken',
  decided_at: '2026-12-02T05:00:01.040Z',
};

export const SIGNAL_EXAMPLES: Record<string, OperationExample> = {
  signalsCreateWebhook: example<typeof ZSignalWebhookCreate, typeof ZSignalWebhookCreated>({
    input: { name: HOOK.name, asset_class: 'crypto', mode: 'paper', max_lag_sec: 120, passphrase: 'correct-horse' },
    output: { ...HOOK, token: TOKEN, url: `/hooks/${TOKEN}` },
  }),
  signalsWebhooks: example<z.ZodVoid, typeof ZSignalWebhookList>({ output: { items: [HOOK] } }),
  signalsRotateWebhook: example<typeof ZSignalWebhookIdPath, typeof ZSignalWebhookCreated>({
    input: { id: HOOK.id },
    output: { ...HOOK, token_prefix: 'wh_Pq8n', rotated_at: '2026-12-02T09:00:00.000Z', token: 'wh_Pq8nLm2Vx5Zc7Bk9Jh1Gf3Ds4Ap6Oi8Uy0Tr2Ew4Qz6Xc', url: '/hooks/wh_Pq8nLm2Vx5Zc7Bk9Jh1Gf3Ds4Ap6Oi8Uy0Tr2Ew4Qz6Xc' },
  }),
  // The hook's call: its token in the path, the alert's message as the body.
  signalsHook: example<z.ZodObject<{ token: z.ZodString }> & typeof ZSignalPayload, typeof ZSignalReceived>({
    input: { token: TOKEN, symbol: 'BTCUSDT', side: 'buy', qty: 0.01, order_type: 'market', alert_id: ACCEPTED.alert_id!, timestamp: '2026-12-02T04:10:00Z', passphrase: 'correct-horse' },
    output: { signal_id: ACCEPTED.id },
  }),
  signalsRemoveWebhook: example<typeof ZSignalWebhookIdPath, z.ZodVoid>({ input: { id: HOOK.id } }),
  signalsList: example<typeof ZSignalListQuery, typeof ZWebhookSignalList>({
    input: { page: 1, size: 20, webhook_id: HOOK.id, outcome: 'refused' },
    output: { items: [REFUSED], total: 1, page: 1, size: 20 },
  }),
};
