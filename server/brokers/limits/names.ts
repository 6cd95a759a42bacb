// The names of the shared request budgets (rows of broker_request_budgets): one per broker key and
// one per exchange host. A key is named by its SHA-256, so the table never holds a credential.
import { createHash } from 'node:crypto';
import type { TTradingMode } from '../../../contracts/brokers.ts';

const digest = (secret: string) => createHash('sha256').update(secret).digest('hex');

export const budgetNames = {
  /** An Alpaca-style key, by its key id. */
  usKey: (keyId: string) => `us:key:${digest(keyId)}`,
  /** A KIS app key, by `origin|appKey` (the registry's key id); paper and live budgets differ. */
  krKey: (mode: TTradingMode) => (originAndKey: string) => `kr:${mode}:key:${digest(originAndKey)}`,
  /** A KIS host, by its origin (not a secret). */
  krHost: (origin: string) => `kr:host:${origin}`,
  /** A crypto exchange key, on its exchange. */
  cryptoKey: (exchangeId: string) => (apiKey: string) => `crypto:${exchangeId}:key:${digest(apiKey)}`,
};
