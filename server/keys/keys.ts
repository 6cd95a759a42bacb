// Exchange and broker keys of users: registration (encrypted at rest), listing with masks,
// label and activation changes, deletion, and the dry-run test that asks a temporary broker for
// its account. The key and secret never leave this module in clear, and never reach a log, a
// response or an error message.
import type { TTradingMode } from '../../contracts/brokers.ts';
import { ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import {
  EXCHANGE_OF_ASSET_CLASS,
  type TExchangeKeyCreate,
  type TExchangeKeyPatch,
  type TExchangeKeyResponse,
  type TExchangeKeyTestRequest,
  type TExchangeKeyTestResponse,
} from '../../contracts/keys.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { BrokerAccount } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { ExchangeKeyRow } from '../db/schema/index.ts';
import { sql } from 'drizzle-orm';
import { AppError } from '../errors.ts';
import type { AllowList } from './allowlist.ts';
import { cryptoExchangeOf, type CryptoExchanges } from './exchanges.ts';
import { keyFingerprint, maskAccountNo, maskKey, MASK_UNDECRYPTABLE, type KeyCipher } from './crypto.ts';
import { deleteKey, insertKey, isFingerprintHeldByOther, listKeys, updateKey } from './queries.ts';

/** The credentials of a key, in clear, for an adapter to use. */
export interface KeyCredentials {
  /** What the key names: us_broker, kr_broker, crypto_exchange or a ccxt exchange id (exchanges.ts says which exchange that is). */
  exchange: string;
  apiKey: string;
  apiSecret: string;
  baseUrl: string | null;
  accountNo: string | null;
  accountProductCode: string | null;
}

/** What this area needs from the brokers: kept narrow so keys do not depend on any adapter. */
export interface KeyBrokers {
  /** A key was registered: the account of that user, asset class and mode exists from now on. */
  keyRegistered(opts: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<void>;
  /** Drops the cached broker instance of the user and asset class at once on this instance (others follow the change feed). */
  release(opts: { userId: number; assetClass: TAssetClass }): void;
  /** Builds a temporary broker from the credentials, asks for its account and discards it. */
  testAccount(opts: { userId: number; assetClass: TAssetClass; mode: TTradingMode; credentials: KeyCredentials }): Promise<BrokerAccount>;
}

export interface KeyRules {
  brokerEnabled: { us_broker: boolean; kr_broker: boolean };
  allowLiveKeys: boolean;
  allowList: AllowList;
  cryptoExchanges: CryptoExchanges;
}

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { errors: [{ path, message }] });
const notFound = () => new AppError('NOT_FOUND', 'Exchange key not found');

export type ExchangeKeys = ReturnType<typeof createExchangeKeys>;

export const createExchangeKeys = ({ db, clock, cipher, fingerprintSecret, rules, brokers, changes }: {
  db: Db;
  changes: ChangeFeed;
  clock: Clock;
  cipher: KeyCipher;
  fingerprintSecret: string;
  rules: KeyRules;
  brokers: KeyBrokers;
}) => {
  const toResponse = (row: ExchangeKeyRow): TExchangeKeyResponse => {
    const apiKey = cipher.decrypt(row.apiKeyEnc);
    const maskedAccount = (stored: string) => {
      const plain = cipher.decrypt(stored);
      return plain === undefined ? MASK_UNDECRYPTABLE : maskAccountNo(plain);
    };
    return {
      id: row.id,
      asset_class: row.assetClass,
      exchange: row.exchange,
      label: row.label,
      permissions: row.permissions,
      is_active: row.isActive,
      paper_mode: row.paperMode,
      api_key_masked: apiKey === undefined ? MASK_UNDECRYPTABLE : maskKey(apiKey),
      account_no_masked: row.accountNoEnc === null ? null : maskedAccount(row.accountNoEnc),
      account_product_code: row.accountProductCode,
      created_at: row.createdAt.toISOString(),
    };
  };

  /** Every rule a key must meet, in the order a caller can act on them; the checked credentials. */
  const checked = (input: TExchangeKeyTestRequest): KeyCredentials & { mode: TTradingMode } => {
    const expected = EXCHANGE_OF_ASSET_CLASS[input.asset_class];
    // Whose origins base_url is checked against: the broker, or for crypto the ccxt exchange the key trades on.
    let originsOf: string = expected;
    if (input.asset_class === 'crypto') {
      const { allowed, fallback } = rules.cryptoExchanges;
      const exchangeId = cryptoExchangeOf(input.exchange, rules.cryptoExchanges);
      if (exchangeId === undefined) throw invalid('exchange', `must be ${expected} (this service's ${fallback}) or one of the exchange ids it allows for crypto: ${allowed.join(', ')}`);
      originsOf = exchangeId;
    } else if (input.exchange !== expected) throw invalid('exchange', `must be ${expected} for ${input.asset_class}`);
    const exchange = input.exchange;
    if ((exchange === 'us_broker' || exchange === 'kr_broker') && !rules.brokerEnabled[exchange]) {
      throw new AppError('FEATURE_DISABLED', `The ${exchange} broker is disabled on this service`);
    }
    if (exchange === 'kr_broker') {
      if (!input.account_no) throw invalid('account_no', 'is required for kr_broker');
      if (!input.account_product_code) throw invalid('account_product_code', 'is required for kr_broker');
    }
    if (!input.paper_mode && !rules.allowLiveKeys) throw invalid('paper_mode', 'live keys are not accepted (paper_mode must be true)');
    const mode: TTradingMode = input.paper_mode ? 'paper' : 'live';
    let baseUrl: string | null = null;
    if (input.base_url !== undefined) {
      const origin = rules.allowList.allowed(originsOf, mode, input.base_url);
      if (!origin) throw invalid('base_url', `is not an allowed ${mode} origin for ${originsOf}`);
      baseUrl = origin;
    }
    return {
      exchange,
      mode,
      apiKey: input.api_key,
      apiSecret: input.api_secret,
      baseUrl,
      accountNo: input.account_no ?? null,
      accountProductCode: input.account_product_code ?? null,
    };
  };

  const create = async ({ user, input, origin }: { user: { id: number }; input: TExchangeKeyCreate; origin: RequestOrigin }): Promise<TExchangeKeyResponse> => {
    const key = checked(input);
    const fingerprint = keyFingerprint(key.apiKey, fingerprintSecret);
    const at = clock.now();
    const row = await db.transaction(async (tx) => {
      // Two users registering one key at once: the second waits here and then sees the first.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${fingerprint}))`);
      if (await isFingerprintHeldByOther(tx, { userId: user.id, fingerprint })) throw new AppError('CONFLICT', 'This API key is registered by another user');
      const inserted = await insertKey(tx, {
        userId: user.id,
        assetClass: input.asset_class,
        exchange: key.exchange,
        label: input.label,
        permissions: input.permissions,
        isActive: true,
        paperMode: input.paper_mode,
        apiKeyEnc: cipher.encrypt(key.apiKey),
        apiSecretEnc: cipher.encrypt(key.apiSecret),
        apiKeyFingerprint: fingerprint,
        accountNoEnc: key.accountNo === null ? null : cipher.encrypt(key.accountNo),
        accountProductCode: key.accountProductCode,
        baseUrl: key.baseUrl,
        at,
      });
      await recordAudit(tx, {
        action: 'keys.create',
        actorUserId: user.id,
        subjectUserId: user.id,
        origin,
        data: { key_id: inserted.id, asset_class: inserted.assetClass, exchange: inserted.exchange, paper_mode: inserted.paperMode },
        at,
      });
      await changes.publish(tx, { kind: 'broker_keys', userId: user.id });
      return inserted;
    });
    await brokers.keyRegistered({ userId: user.id, assetClass: row.assetClass, mode: key.mode });
    brokers.release({ userId: user.id, assetClass: row.assetClass });
    return toResponse(row);
  };

  const list = async ({ user, assetClass }: { user: { id: number }; assetClass?: TAssetClass }): Promise<TExchangeKeyResponse[]> =>
    (await listKeys(db, { userId: user.id, assetClass })).map(toResponse);

  /** The asset classes the user can trade: those with an active key, in the order of ZAssetClass. */
  const assetClassesOf = async ({ user }: { user: { id: number } }): Promise<TAssetClass[]> => {
    const active = new Set((await listKeys(db, { userId: user.id })).filter((row) => row.isActive).map((row) => row.assetClass));
    return ZAssetClass.options.filter((assetClass) => active.has(assetClass));
  };

  const change = async ({ user, input, origin }: { user: { id: number }; input: TExchangeKeyPatch; origin: RequestOrigin }): Promise<TExchangeKeyResponse> => {
    const at = clock.now();
    const row = await db.transaction(async (tx) => {
      const updated = await updateKey(tx, { userId: user.id, id: input.id, at, label: input.label, isActive: input.is_active });
      if (!updated) throw notFound();
      await recordAudit(tx, {
        action: 'keys.update',
        actorUserId: user.id,
        subjectUserId: user.id,
        origin,
        data: { key_id: updated.id, label: input.label, is_active: input.is_active },
        at,
      });
      await changes.publish(tx, { kind: 'broker_keys', userId: user.id });
      return updated;
    });
    brokers.release({ userId: user.id, assetClass: row.assetClass });
    return toResponse(row);
  };

  const remove = async ({ user, id, origin }: { user: { id: number }; id: number; origin: RequestOrigin }): Promise<void> => {
    const at = clock.now();
    const row = await db.transaction(async (tx) => {
      const deleted = await deleteKey(tx, { userId: user.id, id });
      if (!deleted) throw notFound();
      await recordAudit(tx, { action: 'keys.delete', actorUserId: user.id, subjectUserId: user.id, origin, data: { key_id: id, asset_class: deleted.assetClass }, at });
      await changes.publish(tx, { kind: 'broker_keys', userId: user.id });
      return deleted;
    });
    brokers.release({ userId: user.id, assetClass: row.assetClass });
  };

  /** A failed check is an answer (ok=false with the broker's reason), not an HTTP error. */
  const test = async ({ user, input }: { user: { id: number }; input: TExchangeKeyTestRequest }): Promise<TExchangeKeyTestResponse> => {
    const { mode, ...credentials } = checked(input);
    const base = { asset_class: input.asset_class, paper_mode: input.paper_mode };
    try {
      const account = await brokers.testAccount({ userId: user.id, assetClass: input.asset_class, mode, credentials });
      return { ...base, ok: true, equity: Number(account.equity), buying_power: Number(account.buyingPower), currency: account.currency, error: null };
    } catch (error) {
      // The reason a broker gave, never the credentials: adapters word their errors without them.
      const reason = error instanceof Error ? error.message : 'the broker check failed';
      const safe = [credentials.apiKey, credentials.apiSecret].reduce((text, secret) => text.split(secret).join('[redacted]'), reason);
      return { ...base, ok: false, equity: null, buying_power: null, currency: null, error: safe.slice(0, 300) };
    }
  };

  return { create, list, assetClassesOf, change, remove, test };
};
