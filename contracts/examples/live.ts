// Examples of /api/operations/live: the live status per asset class and the promotion to live.
import type { z } from 'zod';
import type { ZAssetClassRequest, ZConfirmIssued, ZLiveEnabled, ZLiveEnableRequest, ZLiveReadiness, ZLiveStatus } from '../live.ts';
import { example, type OperationExample } from './types.ts';

const NOT_LIVE = { live_enabled: false, first_live_order_at: null, locked_until: null, live_orders_today: 0, daily_limit: 10 };

export const LIVE_EXAMPLES: Record<string, OperationExample> = {
  liveStatus: example<z.ZodVoid, typeof ZLiveStatus>({
    output: {
      crypto: { live_enabled: true, first_live_order_at: '2026-11-20T09:30:12.000Z', locked_until: null, live_orders_today: 3, daily_limit: 10 },
      us_equity: NOT_LIVE,
      kr_equity: NOT_LIVE,
    },
  }),
  liveReadiness: example<typeof ZAssetClassRequest, typeof ZLiveReadiness>({
    input: { asset_class: 'us_equity' },
    output: {
      ok: false,
      asset_class: 'us_equity',
      paper_days: 41,
      paper_trades: 63,
      required_days: 90,
      required_trades: 50,
      reasons: ['41 days of paper trading; 90 required'],
    },
  }),
  liveIssueConfirm: example<typeof ZAssetClassRequest, typeof ZConfirmIssued>({ input: { asset_class: 'crypto' }, output: { asset_class: 'crypto', expires_at: '2026-12-02T16:20:00.000Z', delivery: 'email' } }),
  liveEnable: example<typeof ZLiveEnableRequest, typeof ZLiveEnabled>({
    input: { confirm_token: 'lct_q8ZbW1vR3nT6yK0pL5mX9cD2fH7jA4sE1gU8iO3rQ6w.Fj2kL9mN4pQ7rS0tV3wX6yZ1aB5cD8eG2hJ7kM0nP3q', botcheck_token: '0.Xk2fQ9pL7mN3vR8tY1wZ4bC6dE0gH5jK' },
    output: { asset_class: 'crypto', live_enabled: true },
  }),
};
