// The brokers of users: one instance per user × asset class × mode, built from the user's active
// key and cached until that key changes. In simulated mode every instance is a view of the
// simulator's books for that account; in real mode it is the adapter of the broker the key names
// (see real/adapters.ts), never simulated.
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { Db } from '../db/client.ts';
import type { ChangeFeed } from '../events/changes.ts';
import { AppError } from '../errors.ts';
import type { KeyCredentialsReader } from '../keys/credentials.ts';
import type { KeyBrokers } from '../keys/keys.ts';
import { findActiveKey } from '../keys/queries.ts';
import type { RealAdapters } from './real/adapters.ts';
import type { Simulator } from './simulator/index.ts';
import type { Broker } from './types.ts';

type Account = { userId: number; assetClass: TAssetClass; mode: TTradingMode };

/** What real mode needs: the adapters, and the keys' credentials in clear. */
export interface RealBrokerParts {
  adapters: RealAdapters;
  keys: KeyCredentialsReader;
}

export type BrokerRegistry = ReturnType<typeof createBrokerRegistry>;

export const createBrokerRegistry = ({ db, simulator, changes, real }: { db: Db; simulator: Simulator; changes: ChangeFeed; real?: RealBrokerParts | undefined }) => {
  const cache = new Map<string, Broker>();
  const keyOf = ({ userId, assetClass, mode }: Account) => `${userId}:${assetClass}:${mode}`;
  // A key changed on any instance drops that user's brokers here too; after a reconnect, all of them.
  changes.subscribe((change) => {
    if (change.kind === 'resync') cache.clear();
    else if (change.kind === 'broker_keys') for (const key of [...cache.keys()]) if (key.startsWith(`${change.userId}:`)) cache.delete(key);
  });

  const notConfigured = (account: Account, what = '') => new AppError('BROKER_NOT_CONFIGURED', `No active ${what}${account.assetClass} broker key is registered`);

  /** The real adapter of the account's key: a paper key trades the paper account, a live key the live one. */
  const realBroker = async (parts: RealBrokerParts, account: Account): Promise<Broker> => {
    const key = await parts.keys.activeKey(account);
    if (!key) throw notConfigured(account, `${account.mode} `);
    return parts.adapters.build({ ...account, credentials: key.credentials });
  };

  /** The user's broker, or 403 BROKER_NOT_CONFIGURED without an active key for the asset class. */
  const forUser = async (account: Account): Promise<Broker> => {
    const cached = cache.get(keyOf(account));
    if (cached) return cached;
    const key = await findActiveKey(db, { userId: account.userId, assetClass: account.assetClass });
    if (!key) throw notConfigured(account);
    const broker = real ? await realBroker(real, account) : simulator.brokerFor(account);
    cache.set(keyOf(account), broker);
    return broker;
  };

  const release = ({ userId, assetClass }: { userId: number; assetClass: TAssetClass }) => {
    for (const mode of ['paper', 'live'] as const) cache.delete(keyOf({ userId, assetClass, mode }));
  };

  /** What the exchange-key area asks of the brokers. */
  const forKeys: KeyBrokers = real
    ? {
        // A real account exists at the broker already; its events start through the change feed (real/ingestion.ts).
        keyRegistered: () => Promise.resolve(),
        release,
        // A temporary adapter from the submitted credentials, asked for its account and dropped.
        testAccount: ({ userId, assetClass, mode, credentials }) => real.adapters.build({ userId, assetClass, mode, credentials }).account(),
      }
    : {
        keyRegistered: (account) => simulator.openAccount(account),
        release,
        // The simulator has no credentials to check: the test answers with the user's simulated account.
        testAccount: ({ userId, assetClass, mode }) => simulator.brokerFor({ userId, assetClass, mode }).account(),
      };

  return { forUser, release, forKeys };
};
