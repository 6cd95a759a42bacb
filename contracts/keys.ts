// Wire shapes of /api/exchange-keys: registering, listing, changing, deleting and testing a
// user's exchange or broker API keys. The key and secret go in, never out.
import { z } from 'zod';
import { bodyBoolean, intParam, requestText, storableText, ZAssetClass, ZTimestamp } from './common.ts';

/**
 * Which adapter a key is for; each fits one asset class. A crypto key may instead name its ccxt
 * exchange id, one of those the service allows (CRYPTO_EXCHANGE_IDS); `crypto_exchange` is the
 * service's default exchange (CRYPTO_EXCHANGE_ID).
 */
export const EXCHANGE_OF_ASSET_CLASS = { crypto: 'crypto_exchange', us_equity: 'us_broker', kr_equity: 'kr_broker' } as const;

/** The form of a ccxt exchange id (binance, kraken, ...): lower-case letters and digits. */
export const CCXT_EXCHANGE_ID = /^[a-z0-9]{2,32}$/;

const hasControlCharacter = (value: string) => Array.from(value).some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
const secretText = () => requestText().trim().min(1).max(512).refine((value) => !hasControlCharacter(value), 'must not contain control characters');

const keyFields = {
  asset_class: ZAssetClass.default('crypto'),
  exchange: requestText()
    .trim()
    .min(1)
    .max(32)
    .meta({
      description:
        '`us_broker` for us_equity, `kr_broker` for kr_equity. For crypto: `crypto_exchange` (the service\'s default exchange), or a ccxt exchange id the service allows (its CRYPTO_EXCHANGE_IDS setting, e.g. `binance`); anything else is 422 VALIDATION_ERROR listing what is allowed. The key keeps what it names.',
    }),
  api_key: secretText(),
  api_secret: secretText(),
  base_url: storableText(z.url({ protocol: /^https?$/ }).max(255)).optional(),
  account_no: requestText().trim().min(1).max(32).optional(),
  account_product_code: requestText().trim().min(1).max(8).optional(),
  paper_mode: bodyBoolean().default(true),
};

export const ZExchangeKeyTestRequest = z.object(keyFields);
export type TExchangeKeyTestRequest = z.infer<typeof ZExchangeKeyTestRequest>;

export const ZExchangeKeyCreate = z.object({
  ...keyFields,
  label: requestText().trim().min(1).max(64).default('default'),
  permissions: requestText().trim().min(1).max(64).default('trade_only'),
});
export type TExchangeKeyCreate = z.infer<typeof ZExchangeKeyCreate>;

export const ZExchangeKeyPatch = z.object({
  id: intParam({ min: 1, max: 2_147_483_647 }),
  label: requestText().trim().min(1).max(64).optional(),
  is_active: bodyBoolean().optional(),
});
export type TExchangeKeyPatch = z.infer<typeof ZExchangeKeyPatch>;

export const ZExchangeKeyIdPath = z.object({ id: intParam({ min: 1, max: 2_147_483_647 }) });

export const ZExchangeKeyListQuery = z.object({ asset_class: ZAssetClass.optional() });

export const ZExchangeKeyResponse = z.object({
  id: z.number().int(),
  asset_class: ZAssetClass,
  exchange: z.string().meta({ description: 'As registered: `us_broker`, `kr_broker`, `crypto_exchange` (the service\'s default crypto exchange) or a ccxt exchange id' }),
  label: z.string(),
  permissions: z.string(),
  is_active: z.boolean(),
  paper_mode: z.boolean(),
  /** First 4, `...`, last 4; `****` when the stored key no longer decrypts. */
  api_key_masked: z.string(),
  account_no_masked: z.string().nullable(),
  account_product_code: z.string().nullable(),
  created_at: ZTimestamp,
});
export type TExchangeKeyResponse = z.infer<typeof ZExchangeKeyResponse>;

export const ZExchangeKeyTestResponse = z.object({
  ok: z.boolean(),
  asset_class: ZAssetClass,
  paper_mode: z.boolean(),
  equity: z.number().nullable(),
  buying_power: z.number().nullable(),
  currency: z.string().nullable(),
  error: z.string().nullable(),
});
export type TExchangeKeyTestResponse = z.infer<typeof ZExchangeKeyTestResponse>;
