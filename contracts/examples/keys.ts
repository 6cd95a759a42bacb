// Examples of /api/exchange-keys: registering, listing, testing, changing and deleting a key.
import type { z } from 'zod';
import type { ZExchangeKeyCreate, ZExchangeKeyIdPath, ZExchangeKeyListQuery, ZExchangeKeyPatch, ZExchangeKeyResponse, ZExchangeKeyTestRequest, ZExchangeKeyTestResponse, TExchangeKeyResponse } from '../keys.ts';
import { example, type OperationExample } from './types.ts';

/** A paper key of the US broker, as sent (plain text, once) and as shown afterwards (masked). */
const API_KEY = 'PKTEST7Q2M4X9B3N8V1C';
const API_SECRET = 'sQ3vN8pL2xR7tY4wK9mB1cF6hJ0dG5aE3zU8iO2r';

const KEY: TExchangeKeyResponse = {
  id: 7,
  asset_class: 'us_equity',
  exchange: 'us_broker',
  label: 'alpaca paper',
  permissions: 'trade_only',
  is_active: true,
  paper_mode: true,
  api_key_masked: 'PKTE...8V1C',
  account_no_masked: null,
  account_product_code: null,
  created_at: '2026-11-15T10:20:00.000Z',
};

const KEY_FIELDS = { asset_class: 'us_equity', exchange: 'us_broker', api_key: API_KEY, api_secret: API_SECRET, paper_mode: true } as const;

export const KEY_EXAMPLES: Record<string, OperationExample> = {
  exchangeKeysCreate: example<typeof ZExchangeKeyCreate, typeof ZExchangeKeyResponse>({ input: { ...KEY_FIELDS, label: 'alpaca paper', permissions: 'trade_only' }, output: KEY }),
  exchangeKeysList: example<typeof ZExchangeKeyListQuery, z.ZodArray<typeof ZExchangeKeyResponse>>({ input: { asset_class: 'us_equity' }, output: [KEY] }),
  exchangeKeysTest: example<typeof ZExchangeKeyTestRequest, typeof ZExchangeKeyTestResponse>({
    input: KEY_FIELDS,
    output: { ok: true, asset_class: 'us_equity', paper_mode: true, equity: 100000, buying_power: 200000, currency: 'USD', error: null },
  }),
  exchangeKeysUpdate: example<typeof ZExchangeKeyPatch, typeof ZExchangeKeyResponse>({ input: { id: 7, label: 'alpaca paper (old)', is_active: false }, output: { ...KEY, label: 'alpaca paper (old)', is_active: false } }),
  exchangeKeysRemove: example<typeof ZExchangeKeyIdPath, z.ZodVoid>({ input: { id: 7 } }),
};
