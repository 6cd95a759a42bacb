// The equities of real accounts, for the kill switch: each account with an active US or KR key,
// as its broker reports it (the simulator's books know nothing of them). An account whose broker
// cannot answer now is left out of this evaluation, and looked at again at the next.
import type { TTradingMode } from '../../../contracts/brokers.ts';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { KeyCredentialsReader } from '../../keys/credentials.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AccountEquity, Broker } from '../types.ts';

type Account = { userId: number; assetClass: TAssetClass; mode: TTradingMode };

const WITH_ADAPTER: readonly TAssetClass[] = ['us_equity', 'kr_equity', 'crypto'];

export const createRealEquities = ({ keys, forUser, logger }: { keys: KeyCredentialsReader; forUser: (account: Account) => Promise<Broker>; logger: Logger }) => {
  const equityOf = async (account: Account): Promise<AccountEquity | undefined> => {
    try {
      const { equity, cash } = await (await forUser(account)).account();
      return { ...account, equity, cash };
    } catch (error) {
      logger.warn({ err: error, userId: account.userId, assetClass: account.assetClass, mode: account.mode }, 'kill switch: the broker did not give the account; skipped this time');
      return undefined;
    }
  };

  /** Every real account's equity, or only the accounts (paper and live) of one user's asset class. */
  return async (only?: { userId: number; assetClass: TAssetClass }): Promise<AccountEquity[]> => {
    let accounts: Account[];
    if (only) {
      if (!WITH_ADAPTER.includes(only.assetClass)) return [];
      const held = await Promise.all((['paper', 'live'] as const).map(async (mode) => ((await keys.activeKey({ ...only, mode })) ? { ...only, mode } : undefined)));
      accounts = held.filter((account) => account !== undefined);
    } else {
      const active = await keys.activeKeys({ assetClasses: WITH_ADAPTER, skip: () => undefined });
      // One account per user × asset class × mode, whatever the number of keys it has.
      accounts = [...new Map(active.map(({ userId, assetClass, mode }) => [`${userId}:${assetClass}:${mode}`, { userId, assetClass, mode }])).values()];
    }
    const equities: AccountEquity[] = [];
    // One after another: each is a broker call on that key's budget, and the sweep is not in a hurry.
    for (const account of accounts) {
      const equity = await equityOf(account);
      if (equity) equities.push(equity);
    }
    return equities;
  };
};
