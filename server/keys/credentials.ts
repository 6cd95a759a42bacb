// The clear credentials of active keys, for the real broker adapters only: decrypted here, handed
// to an adapter, never logged, returned or put in an error (an error names the key by its id).
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Db } from '../db/client.ts';
import type { ExchangeKeyRow } from '../db/schema/index.ts';
import type { KeyCipher } from './crypto.ts';
import type { KeyCredentials } from './keys.ts';
import { findActiveKey, listActiveKeys } from './queries.ts';

/** An active key as an adapter needs it: whose, which account, and the credentials in clear. */
export interface ActiveKey {
  keyId: number;
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  credentials: KeyCredentials;
}

/** A stored key that no longer decrypts (AUTH_SECRET_KEY or ENCRYPTION_SALT changed): unusable. */
export class UndecryptableKeyError extends Error {
  override readonly name = 'UndecryptableKeyError';
}

export type KeyCredentialsReader = ReturnType<typeof createKeyCredentialsReader>;

export const createKeyCredentialsReader = ({ db, cipher }: { db: Db; cipher: KeyCipher }) => {
  const open = (row: ExchangeKeyRow): ActiveKey => {
    const apiKey = cipher.decrypt(row.apiKeyEnc);
    const apiSecret = cipher.decrypt(row.apiSecretEnc);
    const accountNo = row.accountNoEnc === null ? null : cipher.decrypt(row.accountNoEnc);
    if (apiKey === undefined || apiSecret === undefined || accountNo === undefined) throw new UndecryptableKeyError(`exchange key ${row.id} does not decrypt with this service's secret`);
    return {
      keyId: row.id,
      userId: row.userId,
      assetClass: row.assetClass,
      mode: row.paperMode ? 'paper' : 'live',
      credentials: { exchange: row.exchange, apiKey, apiSecret, baseUrl: row.baseUrl, accountNo, accountProductCode: row.accountProductCode },
    };
  };

  return {
    /** The user's newest active key of the asset class for that mode (a paper key for paper, a live key for live). */
    activeKey: async ({ userId, assetClass, mode }: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<ActiveKey | undefined> => {
      const row = await findActiveKey(db, { userId, assetClass, paperMode: mode === 'paper' });
      return row && open(row);
    },
    /** Every active key of these asset classes; a key that does not decrypt is reported to `skip` and left out. */
    activeKeys: async ({ assetClasses, skip }: { assetClasses: readonly TAssetClass[]; skip: (keyId: number, error: Error) => void }): Promise<ActiveKey[]> => {
      const opened: ActiveKey[] = [];
      for (const row of await listActiveKeys(db, { assetClasses })) {
        try {
          opened.push(open(row));
        } catch (error) {
          if (!(error instanceof UndecryptableKeyError)) throw error;
          skip(row.id, error);
        }
      }
      return opened;
    },
  };
};
